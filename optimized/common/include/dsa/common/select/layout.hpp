// Where a block's items sit: thread t's item i is position
// (i / 4) * (kThreads * 4) + t * 4 + i % 4 of the block's chunk, so each
// thread reads runs of four consecutive entries (one 16-byte load) and a
// warp reads 4 * lanes consecutive entries at a time.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common::select {

template <int kThreads>
DSA_HD constexpr int64_t item_position(int thread, int item) {
  return int64_t(item / 4) * (kThreads * 4) + thread * 4 + item % 4;
}

}  // namespace dsa::common::select
