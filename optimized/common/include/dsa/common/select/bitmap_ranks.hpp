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

// Four words of a bitmap, one 16-byte load (the bitmaps are 16-byte aligned).
struct alignas(16) BitmapQuad {
  uint32_t word[4];
};

// Calls visit(q, up, tied) for q in [0, n), n <= kMaxRun: word w0 + q of both
// bitmaps. A thread's run of words starts n words past its neighbour's, so
// word by word a warp's loads land n words apart and collide in shared
// memory's banks (4-way for a row of 128k at 1024 threads, read twice: for the
// counts and to emit); where w0 is a multiple of four, each four words are one
// 16-byte load a lane, which a warp moves in the fewest transactions. Runs
// that never reach four words (kMaxRun < 4) compile to the word loop alone.
template <int kMaxRun, class Visit>
DSA_HD void for_bitmap_words(const uint32_t* above_bits, const uint32_t* tied_bits, int w0, int n, Visit&& visit) {
  if constexpr (kMaxRun >= 4) {
    int q = 0;
    if (w0 % 4 == 0) {
      for (; q + 4 <= n; q += 4) {
        const BitmapQuad up = *reinterpret_cast<const BitmapQuad*>(above_bits + w0 + q);
        const BitmapQuad tied = *reinterpret_cast<const BitmapQuad*>(tied_bits + w0 + q);
        DSA_UNROLL
        for (int i = 0; i < 4; ++i) visit(q + i, up.word[i], tied.word[i]);
      }
    }
    for (; q < n; ++q) visit(q, above_bits[w0 + q], tied_bits[w0 + q]);
  } else {
    DSA_UNROLL
    for (int i = 0; i < kMaxRun; ++i)
      if (i < n) visit(i, above_bits[w0 + i], tied_bits[w0 + i]);
  }
}

// Words [w0, w0 + n) of the bitmaps (n <= kMaxRun); above_rank and tie_rank
// are the entries above and at the cut before word w0. Calls emit(rank,
// position) for each chosen entry, position = 32 * word + bit.
template <int kMaxRun, class Emit>
DSA_HD void emit_bitmap_ranks(const uint32_t* above_bits, const uint32_t* tied_bits, int w0, int n, int32_t above_rank,
                              int32_t tie_rank, int32_t need, Emit&& emit) {
  for_bitmap_words<kMaxRun>(above_bits, tied_bits, w0, n, [&](int q, uint32_t up, uint32_t tied) {
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
  });
}

}  // namespace dsa::common::select
