// The threshold bin of a radix pass: the bin holding the need-th largest
// entry, scanning from the top bin, and how many entries lie above it.
//
// The CPU twins call it on a whole histogram; a GPU block calls it on each
// thread's slice of bins (a contiguous run, scanned from its top) once a
// block-wide scan has given the slice the count above it.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common {

// bin = -1 when the bins hold fewer than `need` entries (above = their sum).
struct Threshold {
  int bin = -1;
  int64_t above = 0;
};

// Bins [0, bins) of hist, scanned from bins - 1 down.
template <class Count>
DSA_HD Threshold find_threshold(const Count* hist, int bins, int64_t need) {
  int64_t cum = 0;
  for (int b = bins - 1; b >= 0; --b) {
    if (cum + int64_t(hist[b]) >= need) return {b, cum};
    cum += int64_t(hist[b]);
  }
  return {-1, cum};
}

}  // namespace dsa::common
