// Runs the shared selection launches (optimized/common/select) on the host
// emulator of the vendor layer (arch/host_simt.hpp), for the tests: the code
// the CUDA and HIP kernels compile, at small block sizes and at both lane counts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dsa/common/arch/host_simt.hpp"
#include "dsa/common/host/selection_ops.hpp"
#include "dsa/common/select/group_topk.hpp"
#include "dsa/common/select/sources.hpp"
#include "dsa/common/select/topk_tree.hpp"
#include "dsa/common/select/tree_plan.hpp"

namespace dsa::select_testing {

using common::select::Bug;
using common::select::TreeOutput;
using common::select::TreePlan;

// The explicit row bounds of a test case as a launch takes them.
template <class Case>
common::RowSpan bounds_span(const Case& c) {
  return common::RowSpan::of_bounds(c.bounds.rows(), c.logits.width, c.bounds.start.data(), c.bounds.end.data());
}

// A block shape of the emulated launches: lanes per warp, threads, items per thread.
template <int Lanes, int Threads, int Items>
struct Shape {
  static constexpr int kLanes = Lanes, kThreads = Threads, kItems = Items;
};

// The workspace one implementation keeps between launches (counters must
// come back to zero: the tests check it).
struct Workspace {
  std::vector<uint64_t> slots;
  std::vector<uint32_t> counters, arrivals;
};

// Runs TreeTopK over `src` on `grid` persistent blocks; out is [rows][out_stride] (0: k) as the caller filled it.
template <class S, Bug B = Bug::none, class Source>
common::select::PlanError run_tree(const Source& src, int32_t k, int grid, std::vector<int32_t>& out,
                                   Workspace& ws, int64_t out_stride = 0) {
  using Arch = common::arch::HostSimt<S::kLanes>;
  using Tree = common::select::TreeTopK<Arch, S::kThreads, S::kItems, B>;
  int64_t widest = 0;
  for (int64_t r = 0; r < src.rows(); ++r) widest = std::max(widest, src.entries(r));
  TreePlan plan;
  const auto error = common::select::make_tree_plan(widest, k, Tree::kCapacity, plan);
  if (error != common::select::PlanError::none) return error;
  if (ws.slots.size() < size_t(plan.slot_pairs(src.rows()))) ws.slots.resize(size_t(plan.slot_pairs(src.rows())));
  if (ws.counters.size() < size_t(plan.counters(src.rows()))) {
    ws.counters.resize(size_t(plan.counters(src.rows())), 0);
    ws.arrivals.resize(size_t(plan.counters(src.rows())), 0);
  }
  TreeOutput o{out.data(), ws.slots.data(), ws.counters.data(), ws.arrivals.data(), out_stride};
  common::arch::host_launch<S::kLanes, typename Tree::Shared>(
      grid, S::kThreads, [&](const Arch& a, typename Tree::Shared& sh) { Tree::run(a, sh, src, plan, o); });
  return common::select::PlanError::none;
}

// GroupTopK on the emulator: a cache of two tiles, groups of at most four blocks.
template <class S, Bug B = Bug::none>
using EmulatedGroup = common::select::GroupTopK<common::arch::HostSimt<S::kLanes>, S::kThreads, S::kItems, 2, B>;
inline constexpr int kEmulatedMaxGroup = 4;

// Runs GroupTopK over `src` in groups of `group` blocks, one group per row
// (or `groups` groups, each walking its rows); out is [rows][k] as the caller filled it.
template <class S, Bug B = Bug::none, class Source>
void run_group(const Source& src, int32_t k, int group, std::vector<int32_t>& out, int groups = 0) {
  using Arch = common::arch::HostSimt<S::kLanes>;
  using Group = EmulatedGroup<S, B>;
  const common::select::GroupPlan plan{k, group};
  if (src.rows() == 0) return;
  common::arch::host_launch_groups<S::kLanes, typename Group::Shared>(
      (groups > 0 ? groups : int(src.rows())) * group, group, S::kThreads,
      [&](const Arch& a, typename Group::Shared& sh) { Group::run(a, sh, src, plan, out.data()); });
}

// The emulator as a device backend of SelectionOps (host/selection_ops.hpp):
// "device" memory is host memory; a top-k launch runs GroupTopK (the mutants:
// TreeTopK, whose bugs they carry) as the CUDA backend does, on `grid`
// resident blocks.
template <class S, Bug B = Bug::none>
struct EmulatorBackend {
  template <class T>
  struct Buffer {
    std::vector<T> v;
    T* data() { return v.data(); }
  };
  template <class T>
  Buffer<T> upload(std::span<const T> s) {
    return {std::vector<T>(s.begin(), s.end())};
  }
  template <class T>
  Buffer<T> zeros(size_t n) {
    return {std::vector<T>(n)};
  }
  template <class T>
  void download(const Buffer<T>& b, std::span<T> out) {
    std::copy(b.v.begin(), b.v.end(), out.begin());
  }
  int capacity() const { return S::kThreads * S::kItems; }
  void require(const char*) const {}
  bool grouped() const { return B == Bug::none; }
  int32_t group_of(int64_t rows, int64_t widest) const {
    return common::select::choose_group(rows, widest, capacity(), EmulatedGroup<S>::kCacheEntries, grid,
                                        kEmulatedMaxGroup);
  }
  template <class Source>
  void launch(const Source& src, const common::select::GroupPlan& plan, int32_t* out) {
    using Arch = common::arch::HostSimt<S::kLanes>;
    using Group = EmulatedGroup<S, B>;
    if (src.rows() == 0) return;
    // Persistent groups (as many as `grid` blocks hold): each takes every groups-th row, so the
    // campaign also runs a group's rows one after another on the same shared memory.
    const int groups = int(std::clamp<int64_t>(grid / plan.group, 1, src.rows()));
    common::arch::host_launch_groups<S::kLanes, typename Group::Shared>(
        groups * plan.group, plan.group, S::kThreads,
        [&](const Arch& a, typename Group::Shared& sh) { Group::run(a, sh, src, plan, out); });
  }
  template <class Source>
  void launch(const Source& src, const TreePlan& plan, const TreeOutput& o) {
    using Arch = common::arch::HostSimt<S::kLanes>;
    using Tree = common::select::TreeTopK<Arch, S::kThreads, S::kItems, B>;
    common::arch::host_launch<S::kLanes, typename Tree::Shared>(
        grid, S::kThreads, [&](const Arch& a, typename Tree::Shared& sh) { Tree::run(a, sh, src, plan, o); });
  }
  void launch(const common::PackRows& p) {
    common::arch::host_launch<S::kLanes, int>(grid, S::kThreads, [&](const common::arch::HostSimt<S::kLanes>& a, int&) {
      common::pack_rows_block<S::kThreads>(a, p);
    });
  }
  void launch(const common::UnpackTopk& p) {
    common::arch::host_launch<S::kLanes, int>(grid, S::kThreads, [&](const common::arch::HostSimt<S::kLanes>& a, int&) {
      common::unpack_topk_block<S::kThreads>(a, p);
    });
  }
  static constexpr int64_t kMaskWords = 1 << 12;
  struct MaskShared {
    uint32_t words[kMaskWords];
  };
  int64_t mask_bitmap_words() const { return kMaskWords; }
  void launch(const common::CandidateMaskRows& p) {
    common::arch::host_launch<S::kLanes, MaskShared>(
        grid, S::kThreads, [&](const common::arch::HostSimt<S::kLanes>& a, MaskShared& sh) {
          common::candidate_mask_block<S::kThreads>(a, p, sh.words);
        });
  }
  int grid = 3;
};

template <class S, Bug B = Bug::none>
std::unique_ptr<IndexerOps> make_emulated_selection(std::string name, int grid = 3) {
  EmulatorBackend<S, B> backend;
  backend.grid = grid;
  return std::make_unique<common::host::SelectionOps<EmulatorBackend<S, B>>>(std::move(name), backend);
}

}  // namespace dsa::select_testing
