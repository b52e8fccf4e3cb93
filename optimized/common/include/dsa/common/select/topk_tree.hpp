// The body of every selection launch: a persistent grid walks the work items
// (row, leaf), each block selects its leaf's top k with BlockTopK, and the
// last block to finish a merge node's children merges them (tree_plan.hpp),
// up to the root, which writes the row's k outputs: the chosen payloads in
// position order, then -1. Every output entry is written by exactly one
// block, so a caller's buffer needs no -1 pre-fill (skip_decode_fill).
//
// The root's choice depends only on the row: a merge reads its children in
// child order and BlockTopK's order is total, so no arrival order reaches the
// output (except under Bug::ties_by_arrival, whose leaves take their slot in
// the parent by arrival).
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"
#include "dsa/common/select/block_topk.hpp"
#include "dsa/common/select/tree_plan.hpp"

namespace dsa::common::select {

// The launch's outputs and workspace (tree_plan.hpp's layout).
struct TreeOutput {
  int32_t* out = nullptr;         // [rows][out_stride], k written per row
  uint64_t* slots = nullptr;      // node slots: key << 32 | payload
  uint32_t* counters = nullptr;   // arrivals per node, zero between launches
  uint32_t* arrivals = nullptr;   // Bug::ties_by_arrival only: slot tickets per node, zero between launches
  // Entries from one row's output to the next; 0 means k. vLLM's decode rows
  // are a view topk_indices_buffer[:, :k] of a wider buffer.
  int64_t out_stride = 0;

  DSA_HD int32_t* row(int64_t r, int32_t k) const { return out + r * (out_stride > 0 ? out_stride : int64_t(k)); }
};

template <class Arch, int kThreads, int kItems, Bug kBug = Bug::none>
struct TreeTopK {
  using Block = BlockTopK<Arch, kThreads, kItems, kBug>;
  using Shared = typename Block::Shared;
  static constexpr int kCapacity = Block::kCapacity;

  DSA_HD static uint64_t pack(uint32_t key, int32_t payload) { return (uint64_t(key) << 32) | uint32_t(payload); }

  // Selects into out[0, k) (payloads) and fills the rest with -1.
  template <class Payload>
  DSA_HD static void write_final(const Arch& a, Shared& sh, const uint32_t (&keys)[kItems], int32_t k, int& ring,
                                 int32_t* out, Payload&& payload) {
    // A row of one block holds at most kCapacity entries: k beyond it is all -1 tail.
    const int chosen = Block::select(a, sh, keys, k < kCapacity ? k : kCapacity, ring, [&](int rank, int item) {
      out[rank] = payload(Block::position(a.thread(), item));
    });
    for (int64_t i = chosen + a.thread(); i < k; i += kThreads) out[i] = -1;
  }

  // Selects into a node's k slots (key, payload), the rest (no entry, -1).
  template <class Payload>
  DSA_HD static void write_node(const Arch& a, Shared& sh, const uint32_t (&keys)[kItems], int32_t k, int& ring,
                                uint64_t* node, Payload&& payload) {
    const int chosen = Block::select(a, sh, keys, k, ring, [&](int rank, int item) {
      node[rank] = pack(keys[item], payload(Block::position(a.thread(), item)));
    });
    for (int i = chosen + a.thread(); i < k; i += kThreads) node[i] = pack(kNoEntryKey, -1);
  }

  template <class Source>
  DSA_HD static void run(const Arch& a, Shared& sh, const Source& src, const TreePlan& plan, const TreeOutput& o) {
    Block::init(a, sh);
    a.sync();
    int ring = 0;
    const int64_t items = src.rows() * plan.max_leaves;
    for (int64_t item = a.block(); item < items; item += a.grid()) {
      const int64_t r = item / plan.max_leaves;
      const int32_t leaf = int32_t(item % plan.max_leaves);
      const int64_t n = src.entries(r);
      const int32_t leaves = plan.leaves(n);
      if (leaf >= leaves) continue;
      const int64_t first = int64_t(leaf) * plan.chunk;
      uint32_t keys[kItems];
      src.template load<kThreads, kItems>(a, r, first, min64(plan.chunk, n - first), keys);
      auto leaf_payload = [&](int64_t pos) { return src.payload(r, first + pos); };
      int32_t* out = o.row(r, plan.k);
      if (leaves == 1) {
        write_final(a, sh, keys, plan.k, ring, out, leaf_payload);
        continue;
      }
      uint64_t* row_nodes = o.slots + r * plan.nodes_per_row * int64_t(plan.k);
      uint32_t* row_counters = o.counters + r * plan.nodes_per_row;
      int32_t slot_in_parent = leaf;
      if constexpr (kBug == Bug::ties_by_arrival) {
        const int32_t parent = leaf / plan.fan_in;
        a.sync();
        if (a.thread() == 0)
          sh.arrival =
              int32_t(a.atomic_add_global(o.arrivals + r * plan.nodes_per_row + plan.level_offset(1) + parent, 1));
        a.sync();
        slot_in_parent = parent * plan.fan_in + sh.arrival;
        a.sync();
      }
      write_node(a, sh, keys, plan.k, ring, row_nodes + (plan.level_offset(0) + slot_in_parent) * int64_t(plan.k),
                 leaf_payload);
      climb(a, sh, plan, o, r, leaves, leaf, row_nodes, row_counters, out, ring);
    }
  }

  // After a node's slots are written: count the arrival at its parent, and if
  // it was the last child, merge the children, then continue upwards.
  DSA_HD static void climb(const Arch& a, Shared& sh, const TreePlan& plan, const TreeOutput& o, int64_t r,
                           int32_t leaves, int32_t leaf, uint64_t* row_nodes, uint32_t* row_counters, int32_t* out,
                           int& ring) {
    int level = 0;
    int32_t index = leaf, count = leaves;
    for (;;) {
      const int32_t parent = index / plan.fan_in, parents = int32_t(ceil_div(count, plan.fan_in));
      const int32_t children = count - parent * plan.fan_in < plan.fan_in ? count - parent * plan.fan_in : plan.fan_in;
      a.fence();
      a.sync();
      if (a.thread() == 0) {
        const int64_t node = plan.level_offset(level + 1) + parent;
        const uint32_t old = a.atomic_add_global(row_counters + node, 1);
        sh.flag = old + 1 == uint32_t(children);
        if (sh.flag) {
          row_counters[node] = 0;  // the next launch finds it zero
          if constexpr (kBug == Bug::ties_by_arrival) o.arrivals[r * plan.nodes_per_row + node] = 0;
        }
      }
      a.sync();
      if (!sh.flag) return;
      a.fence();
      const uint64_t* child = row_nodes + (plan.level_offset(level) + int64_t(parent) * plan.fan_in) * plan.k;
      const int64_t m = int64_t(children) * plan.k;
      uint32_t keys[kItems];
      DSA_UNROLL
      for (int i = 0; i < kItems; ++i) {
        const int64_t pos = Block::position(a.thread(), i);
        keys[i] = pos < m ? uint32_t(a.load_cg(child + pos) >> 32) : kNoEntryKey;
      }
      auto merged_payload = [&](int64_t pos) { return int32_t(uint32_t(a.load_cg(child + pos))); };
      ++level;
      index = parent;
      count = parents;
      if (parents == 1) {
        write_final(a, sh, keys, plan.k, ring, out, merged_payload);
        return;
      }
      uint64_t* node = row_nodes + (plan.level_offset(level) + int64_t(index)) * plan.k;
      if constexpr (kBug == Bug::ties_by_arrival) {
        const int32_t grand = index / plan.fan_in;
        a.sync();
        if (a.thread() == 0)
          sh.arrival = int32_t(
              a.atomic_add_global(o.arrivals + r * plan.nodes_per_row + plan.level_offset(level + 1) + grand, 1));
        a.sync();
        node = row_nodes + (plan.level_offset(level) + int64_t(grand) * plan.fan_in + sh.arrival) * plan.k;
        a.sync();
      }
      write_node(a, sh, keys, plan.k, ring, node, merged_payload);
    }
  }
};

}  // namespace dsa::common::select
