// The source of the SM100 sparse backend's top-k (select/sources.hpp's interface): a row's sparse
// columns [0, end[r]) of bf16 logits, the payload the position the column scores, relative to the
// row start: column j * SBK + o -> (id_j - ks / SBK) * SBK + o (reference remap_sparse_topk).
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/select/layout.hpp"

namespace dsa::common::select {

struct SparseColumns {
  const uint16_t* logits = nullptr;  // bf16 [rows][row_stride]
  int64_t row_stride = 0;
  int64_t num_rows = 0;
  const int32_t* end = nullptr;         // [rows]
  const int32_t* sparse_ids = nullptr;  // [rows][num_sparse]
  const int32_t* row_ks = nullptr;      // [rows]
  int32_t num_sparse = 0;
  int32_t sbk = 8;

  DSA_HD int64_t rows() const { return num_rows; }
  // end is the backend's own output; clamped so that a bad one cannot read past the row.
  DSA_HD int64_t entries(int64_t r) const {
    const int64_t e = end[r], width = int64_t(num_sparse) * sbk;
    return e < 0 ? 0 : e > width ? width : e;
  }
  template <int kThreads, int kItems, class Arch>
  DSA_HD void load(const Arch& a, int64_t r, int64_t first, int64_t count, uint32_t (&keys)[kItems]) const {
    const uint16_t* base = logits + r * row_stride + first;
    DSA_UNROLL
    for (int i = 0; i < kItems; ++i) {
      const int64_t pos = item_position<kThreads>(a.thread(), i);
      keys[i] = pos < count ? order_key(bits_float(uint32_t(base[pos]) << 16)) : kNoEntryKey;
    }
  }
  DSA_HD int32_t payload(int64_t r, int64_t col) const {
    const int32_t id = sparse_ids[r * num_sparse + col / sbk];
    return (id - row_ks[r] / sbk) * sbk + int32_t(col % sbk);
  }
};

}  // namespace dsa::common::select
