// The shared TreeTopK run by one block over one row, for the fused
// candidate_logits_top_k: the last logits block of a row walks the row's
// leaves and merges them itself (a grid of one block), writing the row's
// output and using the row's part of the workspace. Written against any
// vendor layer, so the host emulator runs this adapter at wave 64 as the
// kernel does (tests/select_tree_test.cpp).
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::gfx942 {

// The vendor layer of one block that is the whole grid.
template <class Arch>
struct OneBlock : Arch {
  DSA_HD int block() const { return 0; }
  DSA_HD int grid() const { return 1; }
};

// Row `row` of a source, as a source of one row.
template <class Source>
struct OneRow {
  Source src;
  int64_t row = 0;
  DSA_HD int64_t rows() const { return 1; }
  DSA_HD int64_t entries(int64_t) const { return src.entries(row); }
  template <int kThreads, int kItems, class Arch>
  DSA_HD void load(const Arch& a, int64_t, int64_t first, int64_t count, uint32_t (&keys)[kItems]) const {
    src.template load<kThreads, kItems>(a, row, first, count, keys);
  }
  DSA_HD int32_t payload(int64_t, int64_t pos) const { return src.payload(row, pos); }
};

}  // namespace dsa::gfx942
