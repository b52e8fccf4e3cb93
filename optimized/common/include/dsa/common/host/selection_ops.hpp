// The host half of the selection launches, shared by every device backend
// (CUDA on the H200, HIP, and the host emulator the tests run): argument
// checks, the copies in and out, the tree plan and the workspace, as an
// IndexerOps. A backend only moves bytes and launches:
//
//   template <class T> Buffer<T>  Backend::Buffer   device memory of n T
//   Buffer<T> upload(std::span<const T>)            a copy on the device
//   Buffer<T> zeros<T>(n)                           n zero T
//   void download(const Buffer<T>&, std::span<T>)   the device copy back
//   T* Buffer<T>::data()
//   int capacity()                                  entries per block of its launches
//   void require(const char* op)                    throws Unsupported where it cannot run (no GPU)
//   void launch(const Source&, const TreePlan&, const TreeOutput&)   runs TreeTopK and waits
//
// Outputs go to the device as the caller filled them (poison included) and
// come back whole, so "every entry written" judges the kernel (indexer_ops.hpp).
// A call the launches cannot take throws Unsupported, naming why.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/common/row_span.hpp"
#include "dsa/common/select/sources.hpp"
#include "dsa/common/select/topk_tree.hpp"
#include "dsa/common/select/tree_plan.hpp"
#include "dsa/error.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::common::host {

template <class Backend>
class SelectionOps : public IndexerOps {
public:
  SelectionOps(std::string name, Backend backend) : name_(std::move(name)), backend_(std::move(backend)) {}

  std::string name() const override { return name_; }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    backend_.require("topk");
    check_row_bounds(logits, bounds);
    check_topk_output(out, logits.rows, "topk_indices");
    auto values = backend_.upload(std::span<const float>(logits.values));
    Bounds b = upload_bounds(bounds, logits.width);
    select::DenseRows src{values.data(), logits.width, b.span};
    run(src, widest(bounds), out.k, out.indices, "topk");
  }

  void candidate_select(const Logits& logits, const RowBounds& candidate_bounds, CandidateBlocks& out) override {
    backend_.require("candidate_select");
    check_row_bounds(logits, candidate_bounds);
    if (out.block_size < 1)
      throw InvalidInput("candidate_block_size", "must be at least 1, got " + std::to_string(out.block_size));
    if (out.slots < 1) throw InvalidInput("candidate_topk_blocks", "must be at least 1, got " + std::to_string(out.slots));
    if (out.rows != logits.rows || out.blocks.size() != size_t(out.rows) * size_t(out.slots))
      throw InvalidInput("candidate_blocks", "output buffer holds " + std::to_string(out.blocks.size()) + " ids for [" +
                                                 std::to_string(out.rows) + ", " + std::to_string(out.slots) +
                                                 "], expected " + std::to_string(logits.rows) + " rows");
    auto values = backend_.upload(std::span<const float>(logits.values));
    Bounds b = upload_bounds(candidate_bounds, logits.width);
    select::BlockScores src{values.data(), logits.width, b.span, out.block_size};
    run(src, ceil_div(widest(candidate_bounds), out.block_size), out.slots, out.blocks, "candidate_select");
  }

  void candidate_topk(const Logits& logits, const RowBounds& topk_bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    backend_.require("candidate_topk");
    check_row_bounds(logits, topk_bounds);
    candidates.validate();
    if (candidates.rows != logits.rows)
      throw InvalidInput("candidate_blocks", std::to_string(candidates.rows) + " rows for " +
                                                 std::to_string(logits.rows) + " logits rows");
    check_topk_output(out, logits.rows, "candidate_topk_indices");
    auto values = backend_.upload(std::span<const float>(logits.values));
    auto blocks = backend_.upload(std::span<const int32_t>(candidates.blocks));
    Bounds b = upload_bounds(topk_bounds, logits.width);
    select::CandidateColumns src{values.data(), logits.width, b.span, blocks.data(), candidates.slots,
                                 candidates.block_size, false};
    run(src, int64_t(candidates.slots) * candidates.block_size, out.k, out.indices, "candidate_topk");
  }

protected:
  Backend& backend() { return backend_; }

  struct Bounds {
    typename Backend::template Buffer<int64_t> start, end;
    RowSpan span;
  };
  Bounds upload_bounds(const RowBounds& bounds, int64_t width) {
    Bounds b{backend_.upload(std::span<const int64_t>(bounds.start)), backend_.upload(std::span<const int64_t>(bounds.end)),
             {}};
    b.span.kind = RowSpan::Kind::bounds;
    b.span.rows = bounds.rows();
    b.span.width = width;
    b.span.start = b.start.data();
    b.span.end = b.end.data();
    return b;
  }

  static int64_t widest(const RowBounds& bounds) {
    int64_t w = 0;
    for (int64_t r = 0; r < bounds.rows(); ++r) w = std::max(w, bounds.end[size_t(r)] - bounds.start[size_t(r)]);
    return w;
  }

  static void check_topk_output(const TopkIndices& out, int64_t rows, const char* buffer) {
    if (out.k < 1) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(out.k));
    if (out.rows != rows || out.indices.size() != size_t(rows) * size_t(out.k))
      throw InvalidInput(buffer, "output buffer holds " + std::to_string(out.indices.size()) + " entries for [" +
                                     std::to_string(out.rows) + ", " + std::to_string(out.k) + "], expected [" +
                                     std::to_string(rows) + ", " + std::to_string(out.k) + "]");
  }

  // Plans, makes room, launches, and copies `out` back.
  template <class Source>
  void run(const Source& src, int64_t widest_entries, int32_t k, std::vector<int32_t>& out, const char* op) {
    if (widest_entries > int64_t(INT32_MAX))
      throw Unsupported(name_ + ": " + op + " takes rows of at most 2^31 - 1 entries, got " +
                        std::to_string(widest_entries));
    select::TreePlan plan;
    switch (select::make_tree_plan(widest_entries, k, backend_.capacity(), plan)) {
      case select::PlanError::none: break;
      case select::PlanError::k_too_large:
        throw Unsupported(name_ + ": " + op + " merges rows longer than one block (" +
                          std::to_string(backend_.capacity()) + " entries) only for k <= " +
                          std::to_string(backend_.capacity() / 2) + ", got k = " + std::to_string(k));
      case select::PlanError::too_many_levels:
        throw Unsupported(name_ + ": " + op + " rows of " + std::to_string(widest_entries) +
                          " entries need more merge levels than the launch has, for k = " + std::to_string(k));
      case select::PlanError::bad_shape: throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
    }
    const int64_t rows = src.rows();
    ensure_workspace(plan.slot_pairs(rows), plan.counters(rows));
    auto d_out = backend_.upload(std::span<const int32_t>(out));
    select::TreeOutput o{d_out.data(), slots_.data(), counters_.data(), arrivals_.data()};
    backend_.launch(src, plan, o);
    backend_.download(d_out, std::span<int32_t>(out));
  }

  void ensure_workspace(int64_t slot_pairs, int64_t counters) {
    if (slot_pairs > slot_pairs_) {
      slots_ = backend_.template zeros<uint64_t>(size_t(slot_pairs));
      slot_pairs_ = slot_pairs;
    }
    if (counters > counters_size_) {  // zero: the launches leave them zero
      counters_ = backend_.template zeros<uint32_t>(size_t(counters));
      arrivals_ = backend_.template zeros<uint32_t>(size_t(counters));
      counters_size_ = counters;
    }
  }

private:
  std::string name_;
  Backend backend_;
  typename Backend::template Buffer<uint64_t> slots_;
  typename Backend::template Buffer<uint32_t> counters_, arrivals_;
  int64_t slot_pairs_ = 0, counters_size_ = 0;
};

}  // namespace dsa::common::host
