// The chosen entries of a row's two bitmaps (above the cut; at the cut), in
// position order: the emitting step that GroupTopK, RowTopK and ShortRowTopK
// share. Once a block scan of the words' popcounts has given a thread's run
// of words the entries above and at the cut before it, an entry's output rank
// is the chosen entries before it: every entry above the cut, and the first
// `need` at it. So no atomic decides who is chosen or where it goes.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common::select {

// Words [w0, w0 + n) of the bitmaps; above_rank and tie_rank are the entries
// above and at the cut before word w0. Calls emit(rank, position) for each
// chosen entry, position = 32 * word + bit.
template <class Emit>
DSA_HD void emit_bitmap_ranks(const uint32_t* above_bits, const uint32_t* tied_bits, int w0, int n, int32_t above_rank,
                              int32_t tie_rank, int32_t need, Emit&& emit) {
  for (int q = 0; q < n; ++q) {
    const uint32_t up = above_bits[w0 + q], tied = tied_bits[w0 + q];
    for (uint32_t m = up | tied; m != 0; m &= m - 1) {
      const uint32_t bit = m & (~m + 1u);
      const int32_t ar = above_rank + popc(up & (bit - 1u)), tr = tie_rank + popc(tied & (bit - 1u));
      int32_t rank = -1;
      if (up & bit)
        rank = ar + (tr < need ? tr : need);
      else if (tr < need)
        rank = ar + tr;
      if (rank >= 0) emit(rank, int64_t(w0 + q) * 32 + popc(bit - 1u));
    }
    above_rank += popc(up);
    tie_rank += popc(tied);
  }
}

}  // namespace dsa::common::select
