// The column range [begin, end) of each logits row, the way a launch gets it:
// explicit bounds (the IndexerOps entry points), or the seq_lens of vLLM's
// decode metadata, on the device (SPEC 4, 7):
//   visible_1d   L_r = max(0, seq_lens[b] - next_n + j + 1)   (decode top-k, 1-D lengths)
//   request_1d   E_r = seq_lens[b]                             (the candidate ops' end, 1-D lengths)
//   per_row_2d   seq_lens[r]                                   (2-D lengths: both)
// with r = b * next_n + j. The end is clamped to the logits width: a launch
// cannot check device lengths without a copy back, and a length past the
// width must not read past the row.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common {

struct RowSpan {
  enum class Kind : int32_t { bounds, visible_1d, request_1d, per_row_2d };
  Kind kind = Kind::bounds;
  int64_t rows = 0;
  int64_t width = 0;
  const int64_t* start = nullptr;  // bounds
  const int64_t* end = nullptr;
  const int32_t* seq_lens = nullptr;  // the others
  int32_t next_n = 1;

  // Explicit bounds: row r is [start[r], end[r]) of a row of `width` columns.
  static DSA_HD RowSpan of_bounds(int64_t rows, int64_t width, const int64_t* start, const int64_t* end) {
    RowSpan s;
    s.kind = Kind::bounds;
    s.rows = rows;
    s.width = width;
    s.start = start;
    s.end = end;
    return s;
  }

  DSA_HD int64_t begin(int64_t r) const { return kind == Kind::bounds ? start[r] : 0; }
  DSA_HD int64_t end_of(int64_t r) const {
    int64_t e = 0;
    switch (kind) {
      case Kind::bounds: e = end[r]; break;
      case Kind::visible_1d: e = int64_t(seq_lens[r / next_n]) - next_n + r % next_n + 1; break;
      case Kind::request_1d: e = seq_lens[r / next_n]; break;
      case Kind::per_row_2d: e = seq_lens[r]; break;
    }
    e = e < begin(r) ? begin(r) : e;
    return e > width ? width : e;
  }
  DSA_HD int64_t length(int64_t r) const { return end_of(r) - begin(r); }
};

}  // namespace dsa::common
