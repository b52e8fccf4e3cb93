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
//   bool grouped()                                  optional: whether the top-k launches run GroupTopK instead
//   int32_t group_of(rows, widest)                  blocks per row of its group launch (with grouped)
//   GroupPlan group_plan(src, widest, k)        optional: the whole plan (the CUDA backend's row kernel dispatch)
//   void launch(const Source&, const GroupPlan&, int32_t* out)       runs GroupTopK and waits (with grouped)
//   void launch(const PackRows&), launch(const UnpackTopk&)            the padding kernels, and waits
//   void launch(const CandidateMaskRows&)       the mask kernel, and waits
//   int64_t mask_bitmap_words()                 the widest row's blocks / 32 its mask kernel takes
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
#include "dsa/common/candidate_mask.hpp"
#include "dsa/common/padding.hpp"
#include "dsa/common/row_span.hpp"
#include "dsa/common/select/group_topk.hpp"
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
    require_output("topk_indices", out, logits.rows);
    auto values = backend_.upload(std::span<const float>(logits.values));
    Bounds b = upload_bounds(bounds, logits.width);
    select::DenseRows src{values.data(), logits.width, b.span};
    run(src, widest(bounds), out.k, out.indices, "topk");
  }

  void candidate_select(const Logits& logits, const RowBounds& candidate_bounds, CandidateBlocks& out) override {
    backend_.require("candidate_select");
    check_row_bounds(logits, candidate_bounds);
    require_output("candidate_blocks", out, logits.rows);
    auto values = backend_.upload(std::span<const float>(logits.values));
    Bounds b = upload_bounds(candidate_bounds, logits.width);
    select::BlockScores src{values.data(), logits.width, b.span, out.block_size};
    run(src, ceil_div(widest(candidate_bounds), out.block_size), out.slots, out.blocks, "candidate_select");
  }

  void candidate_mask(Logits& logits, const RowBounds& candidate_bounds, const CandidateBlocks& candidates,
                      CandidateMask variant) override {
    backend_.require("candidate_mask");
    check_row_bounds(logits, candidate_bounds);
    candidates.validate();
    if (candidates.rows != logits.rows)
      throw InvalidInput("candidate_blocks", std::to_string(candidates.rows) + " rows for " +
                                                 std::to_string(logits.rows) + " logits rows");
    auto values = backend_.upload(std::span<const float>(logits.values));
    auto blocks = backend_.upload(std::span<const int32_t>(candidates.blocks));
    Bounds b = upload_bounds(candidate_bounds, logits.width);
    CandidateMaskRows p{values.data(), logits.width, b.span, blocks.data(), candidates.slots, candidates.block_size,
                        variant == CandidateMask::full};
    if (p.bitmap_words() > backend_.mask_bitmap_words())
      throw Unsupported(name_ + ": candidate_mask takes rows of at most " +
                        std::to_string(backend_.mask_bitmap_words() * 32) + " blocks, got width " +
                        std::to_string(logits.width) + " / block size " + std::to_string(candidates.block_size));
    backend_.launch(p);
    backend_.download(values, std::span<float>(logits.values));
  }

  void candidate_topk(const Logits& logits, const RowBounds& topk_bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    backend_.require("candidate_topk");
    check_row_bounds(logits, topk_bounds);
    candidates.validate();
    if (candidates.rows != logits.rows)
      throw InvalidInput("candidate_blocks", std::to_string(candidates.rows) + " rows for " +
                                                 std::to_string(logits.rows) + " logits rows");
    require_output("candidate_topk_indices", out, logits.rows);
    auto values = backend_.upload(std::span<const float>(logits.values));
    auto blocks = backend_.upload(std::span<const int32_t>(candidates.blocks));
    Bounds b = upload_bounds(topk_bounds, logits.width);
    select::CandidateColumns src{values.data(), logits.width, b.span, blocks.data(), candidates.slots,
                                 candidates.block_size, false};
    run(src, int64_t(candidates.slots) * candidates.block_size, out.k, out.indices, "candidate_topk");
  }

  // ---- Padded steps (padding.hpp); the checks and messages are the reference's.
  bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens,
                        bool requires_padding) override {
    if (num_decode_tokens < 0 || num_decode_tokens > num_tokens)
      throw InvalidInput("num_decode_tokens", std::to_string(num_decode_tokens) + " is outside [0, num_tokens = " +
                                                  std::to_string(num_tokens) + "]");
    return common::skip_decode_fill(has_prefill_rows, num_decode_tokens, num_tokens, requires_padding);
  }

  void pack_rows(const ByteRows& ragged, std::span<const int32_t> decode_lens, uint8_t pad, ByteRows& packed) override {
    backend_.require("pack_rows");
    const int32_t next_n = rows_per_request("packed", packed.rows, decode_lens);
    const int64_t real = real_rows(decode_lens, next_n);
    if (ragged.row_bytes < 0 || ragged.rows < 0 || ragged.bytes.size() != size_t(ragged.rows) * size_t(ragged.row_bytes))
      throw InvalidInput("rows", "[" + std::to_string(ragged.rows) + ", " + std::to_string(ragged.row_bytes) +
                                     "] rows hold " + std::to_string(ragged.bytes.size()) + " bytes");
    if (ragged.bytes.size() != size_t(real) * size_t(ragged.row_bytes))
      throw InvalidInput("rows", "has " + std::to_string(ragged.bytes.size()) + " elements, expected " +
                                     std::to_string(size_t(real) * size_t(ragged.row_bytes)));
    require_output("packed", packed, packed.rows, ragged.row_bytes);
    auto src = backend_.upload(std::span<const uint8_t>(ragged.bytes));
    auto lens = backend_.upload(decode_lens);
    auto dst = backend_.upload(std::span<const uint8_t>(packed.bytes));
    PackRows p{src.data(), dst.data(), ragged.row_bytes, lens.data(), int32_t(decode_lens.size()), next_n, pad};
    backend_.launch(p);
    backend_.download(dst, std::span<uint8_t>(packed.bytes));
  }

  void unpack_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens, TopkIndices& out) override {
    backend_.require("unpack_topk");
    const int32_t next_n = rows_per_request("topk_indices", padded.rows, decode_lens);
    const int64_t real = real_rows(decode_lens, next_n);
    if (padded.k < 0 || padded.indices.size() != size_t(padded.rows) * size_t(padded.k))
      throw InvalidInput("rows", "has " + std::to_string(padded.indices.size()) + " elements, expected " +
                                     std::to_string(size_t(padded.rows) * size_t(padded.k)));
    if (out.k != padded.k)
      throw InvalidInput("topk_indices", "output buffer has k = " + std::to_string(out.k) + ", the padded rows " +
                                             std::to_string(padded.k));
    require_output("topk_indices", out, real);
    auto src = backend_.upload(std::span<const int32_t>(padded.indices));
    auto lens = backend_.upload(decode_lens);
    auto dst = backend_.upload(std::span<const int32_t>(out.indices));
    UnpackTopk p{src.data(), dst.data(), padded.k, lens.data(), int32_t(decode_lens.size()), next_n, real};
    backend_.launch(p);
    backend_.download(dst, std::span<int32_t>(out.indices));
  }

protected:
  Backend& backend() { return backend_; }

  static int32_t rows_per_request(const char* buffer, int64_t rows, std::span<const int32_t> decode_lens) {
    if (decode_lens.empty()) throw InvalidInput("decode_lens", "a step needs at least one request");
    const int64_t batch = int64_t(decode_lens.size());
    if (rows % batch != 0 || rows / batch < 1)
      throw InvalidInput(buffer, std::to_string(rows) + " rows is not next_n >= 1 rows for each of the " +
                                     std::to_string(batch) + " requests");
    return int32_t(rows / batch);
  }
  static int64_t real_rows(std::span<const int32_t> decode_lens, int32_t next_n) {
    int64_t total = 0;
    for (size_t b = 0; b < decode_lens.size(); ++b) {
      if (decode_lens[b] < 1 || decode_lens[b] > next_n)
        throw InvalidInput("decode_lens", "decode_lens[" + std::to_string(b) + "] = " + std::to_string(decode_lens[b]) +
                                              " is outside [1, next_n = " + std::to_string(next_n) + "]");
      total += decode_lens[b];
    }
    return total;
  }

  struct Bounds {
    typename Backend::template Buffer<int64_t> start, end;
    RowSpan span;
  };
  Bounds upload_bounds(const RowBounds& bounds, int64_t width) {
    Bounds b{backend_.upload(std::span<const int64_t>(bounds.start)), backend_.upload(std::span<const int64_t>(bounds.end)),
             {}};
    b.span = RowSpan::of_bounds(bounds.rows(), width, b.start.data(), b.end.data());
    return b;
  }

  static int64_t widest(const RowBounds& bounds) {
    int64_t w = 0;
    for (int64_t r = 0; r < bounds.rows(); ++r) w = std::max(w, bounds.end[size_t(r)] - bounds.start[size_t(r)]);
    return w;
  }

  // Plans, makes room, launches, and copies `out` back.
  template <class Source>
  void run(const Source& src, int64_t widest_entries, int32_t k, std::vector<int32_t>& out, const char* op) {
    if (widest_entries > int64_t(INT32_MAX))
      throw Unsupported(name_ + ": " + op + " takes rows of at most 2^31 - 1 entries, got " +
                        std::to_string(widest_entries));
    if constexpr (requires { backend_.grouped(); }) {
      if (backend_.grouped()) {  // no workspace, no limit on k
        if (k < 1) throw InvalidInput("topk", "k must be at least 1, got " + std::to_string(k));
        select::GroupPlan plan{k, backend_.group_of(src.rows(), widest_entries)};
        if constexpr (requires { backend_.group_plan(src, widest_entries, k); })
          plan = backend_.group_plan(src, widest_entries, k);
        auto d_out = backend_.upload(std::span<const int32_t>(out));
        backend_.launch(src, plan, d_out.data());
        backend_.download(d_out, std::span<int32_t>(out));
        return;
      }
    }
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
