// How a long row is split over blocks and merged back (host and device).
//
// A row of n entries is cut into leaves of `chunk` entries (one block's
// capacity); each leaf's block writes its top k, in position order, into the
// row's node slots. Merge nodes take `fan_in` children (fan_in * k <= chunk);
// the block that finishes a node's last child merges the children's k-slot
// lists the same way, and so on up to the root, which writes the row's
// output. No block waits for another: the last arrival does the work, counted
// by one atomic counter per node, which the merging block resets for the next
// launch. So few long rows spread over many SMs, and the result never depends
// on which block arrived last.
//
// Node (level l, index i) of a row sits at level_offset(l) + i of the row's
// nodes; leaves are level 0. The layout is the widest row's (max_leaves
// leaves); a shorter row uses the first nodes of each level. (Offsets are
// computed, not stored: a kernel parameter indexed at run time would be
// copied to local memory.)
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common::select {

inline constexpr int kMaxTreeLevels = 8;

struct TreePlan {
  int32_t k = 0;           // output slots per row
  int32_t chunk = 0;       // entries per leaf
  int32_t fan_in = 0;      // children per merge node
  int32_t max_leaves = 0;  // leaves of the widest row (at least 1)
  int32_t levels = 0;      // node levels of the widest row, leaves included
  int32_t nodes_per_row = 0;

  DSA_HD int32_t leaves(int64_t entries) const {
    const int64_t l = ceil_div(entries, chunk);
    return l < 1 ? 1 : int32_t(l);
  }
  // Nodes of level `level` for a row of `leaves` leaves.
  DSA_HD int32_t nodes_at(int32_t leaves, int level) const {
    int64_t n = leaves;
    for (int l = 0; l < level; ++l) n = ceil_div(n, fan_in);
    return int32_t(n);
  }
  // The widest row's nodes below `level`.
  DSA_HD int32_t level_offset(int level) const {
    int64_t offset = 0, n = max_leaves;
    for (int l = 0; l < level; ++l) {
      offset += n;
      n = ceil_div(n, fan_in);
    }
    return int32_t(offset);
  }
  // Workspace: node slots [rows][nodes_per_row][k] of (key, payload) and
  // counters [rows][nodes_per_row], zero before the first launch.
  DSA_HD int64_t slot_pairs(int64_t rows) const { return rows * nodes_per_row * int64_t(k); }
  DSA_HD int64_t counters(int64_t rows) const { return rows * nodes_per_row; }
};

// Why a plan cannot be made (the launch answers Unsupported).
enum class PlanError : uint8_t { none, k_too_large, too_many_levels, bad_shape };

// The plan for rows of at most `max_entries` entries and k outputs, on blocks
// of `capacity` entries.
DSA_HD inline PlanError make_tree_plan(int64_t max_entries, int32_t k, int32_t capacity, TreePlan& plan) {
  if (k < 1 || capacity < 1 || max_entries < 0) return PlanError::bad_shape;
  plan.k = k;
  plan.chunk = capacity;
  plan.fan_in = capacity / k;
  plan.max_leaves = plan.leaves(max_entries);
  // A row of one leaf needs no merge; a merge needs two children per node.
  if (plan.max_leaves > 1 && plan.fan_in < 2) return PlanError::k_too_large;
  int64_t n = plan.max_leaves;
  int level = 0;
  for (;;) {
    if (level >= kMaxTreeLevels) return PlanError::too_many_levels;
    ++level;
    if (n == 1) break;
    n = ceil_div(n, plan.fan_in);
  }
  plan.levels = level;
  plan.nodes_per_row = plan.level_offset(level);
  return PlanError::none;
}

}  // namespace dsa::common::select
