// PythonOps: each IndexerOps call as one call of the package's dispatcher.
// Inputs are copies (a kernel may scribble on them); output buffers are
// copies of the harness's poisoned buffers, read back after the call with
// their shape and dtype checked. The names are the golden schema's and the
// external exchange's (docs/fuzzing.md); docs/python.md lists them per op.
#include "python_ops.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <stdexcept>

#include "arrays.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa::python {
namespace {

template <class T>
py::array copy_array(const std::vector<T>& values, const std::vector<int64_t>& shape) {
  return owned_array(std::vector<T>(values), shape);
}
template <class T>
py::array i32_array(const std::vector<T>& values) {
  return owned_array(std::vector<int32_t>(values.begin(), values.end()), {int64_t(values.size())});
}
py::array i32_array(std::span<const int32_t> values) {
  return owned_array(std::vector<int32_t>(values.begin(), values.end()), {int64_t(values.size())});
}

// bf16 values held in fp32 storage as their bits (the upper halves, exact for
// bf16 values and for the bf16 poison), or the fp32 values themselves when
// one of them is not a bf16 value (nothing is rounded on the way).
py::array bf16_or_f32_array(const std::vector<float>& values, const std::vector<int64_t>& shape) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t b = 0;
    std::memcpy(&b, &values[i], sizeof b);
    if (b & 0xFFFFu) return copy_array(values, shape);
    bits[i] = uint16_t(b >> 16);
  }
  return owned_array(std::move(bits), shape);
}

std::string shape_text(std::initializer_list<int64_t> dims) {
  std::string s = "(";
  for (const int64_t d : dims) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + (dims.size() == 1 ? ",)" : ")");
}

bool has_shape(const py::array& a, std::initializer_list<int64_t> dims) {
  if (a.ndim() != py::ssize_t(dims.size())) return false;
  py::ssize_t i = 0;
  for (const int64_t d : dims)
    if (a.shape(i++) != d) return false;
  return true;
}

std::vector<int32_t> read_i32(const py::array& a, const char* name, std::initializer_list<int64_t> dims) {
  if (a.dtype().kind() != 'i' || a.itemsize() != 4 || !has_shape(a, dims))
    throw std::runtime_error(std::string("the kernel's ") + name + " is a " + describe_array(a) +
                             ", expected an int32 array of shape " + shape_text(dims));
  const auto* data = static_cast<const int32_t*>(a.data());
  return {data, data + a.size()};
}

std::vector<float> read_logits(const py::array& a, const char* name, int64_t rows, int64_t width) {
  const bool f32 = a.dtype().kind() == 'f' && a.itemsize() == 4, bf16 = a.dtype().kind() == 'u' && a.itemsize() == 2;
  if (!(f32 || bf16) || !has_shape(a, {rows, width}))
    throw std::runtime_error(std::string("the kernel's ") + name + " is a " + describe_array(a) +
                             ", expected float32 (or bf16) of shape " + shape_text({rows, width}));
  std::vector<float> values(size_t(rows * width));
  if (f32) {
    std::memcpy(values.data(), a.data(), values.size() * sizeof(float));
  } else {
    const auto* bits = static_cast<const uint16_t*>(a.data());
    for (size_t i = 0; i < values.size(); ++i) values[i] = bf16_to_float(bits[i]);
  }
  return values;
}

std::vector<uint8_t> read_bytes(const py::array& a, const char* name, std::initializer_list<int64_t> dims) {
  if (a.dtype().kind() != 'u' || a.itemsize() != 1 || !has_shape(a, dims))
    throw std::runtime_error(std::string("the kernel's ") + name + " is a " + describe_array(a) +
                             ", expected a uint8 array of shape " + shape_text(dims));
  const auto* data = static_cast<const uint8_t*>(a.data());
  return {data, data + a.size()};
}

py::dict selection_inputs(const Logits& logits, const RowBounds& bounds) {
  py::dict t;
  t["logits"] = copy_array(logits.values, {logits.rows, logits.width});
  t["ks"] = i32_array(bounds.start);
  t["ke"] = i32_array(bounds.end);
  return t;
}

py::array blocks_array(const CandidateBlocks& c) { return copy_array(c.blocks, {c.rows, c.slots}); }

void decode_inputs(const DecodeProblem& q, const Profile& profile, py::dict& t, py::dict& p) {
  const int64_t B = q.batch, n = q.next_n, H = q.heads, D = q.head_dim;
  const bool mxfp4 = q.element == ElementFormat::mxfp4;
  t["q"] = copy_array(q.q, {B, n, H, mxfp4 ? D / 2 : D});
  if (mxfp4) t["q_scales"] = copy_array(q.q_block_scales, {B, n, H, D / 32});
  const int64_t per_token = int64_t(q.cache.page_bytes()) / q.cache.block_size;
  t["kv_cache"] = copy_array(q.cache.bytes, {q.cache.num_pages, q.cache.block_size, 1, per_token});
  t["weights"] = copy_array(q.weights, {q.rows(), H});
  t["seq_lens"] = q.seq_lens_2d ? copy_array(q.seq_lens, {B, n}) : copy_array(q.seq_lens, {B});
  t["block_table"] = copy_array(q.block_table, {B, q.max_pages});
  t["decode_lens"] = q.decode_lens.empty() ? py::object(py::none()) : copy_array(q.decode_lens, {B});
  p["fp8"] = mxfp4 ? py::object(py::none()) : py::object(py::str(std::string(to_string(q.element))));
  p["layout"] = std::string(to_string(q.cache.layout));
  p["page_size"] = q.cache.block_size;
  p["next_n"] = q.next_n;
  p["heads"] = q.heads;
  p["head_dim"] = q.head_dim;
  p["compress_ratio"] = q.compress_ratio;
  p["logits_width"] = q.logits_width;
  p["max_model_len"] = q.logits_width * q.compress_ratio;
  p["padded_lengths"] = std::string(to_string(q.padded_lengths));
  p["profile"] = profile.name;
}

void prefill_inputs(const PrefillProblem& q, const Profile& profile, py::dict& t, py::dict& p) {
  t["q"] = copy_array(q.q, {q.rows, q.heads, q.head_dim});
  t["k"] = copy_array(q.k, {q.num_k, q.head_dim});
  t["k_scales"] = copy_array(q.k_scales, {q.num_k});
  t["weights"] = copy_array(q.weights, {q.rows, q.heads});
  t["ks"] = copy_array(q.ks, {q.rows});
  t["ke"] = copy_array(q.ke, {q.rows});
  p["fp8"] = std::string(to_string(q.element));
  p["heads"] = q.heads;
  p["head_dim"] = q.head_dim;
  p["profile"] = profile.name;
}

class PythonOps final : public IndexerOps {
public:
  PythonOps(py::object dispatch, std::shared_ptr<CampaignState> state)
      : dispatch_(std::move(dispatch)), state_(std::move(state)) {}

  std::string name() const override { return "python"; }

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override {
    py::dict t, p, o;
    decode_inputs(problem, profile, t, p);
    o["logits"] = copy_array(out.values, {out.rows, out.width});
    out.values = read_logits(output(call("decode_logits", t, p, o), "logits"), "logits", out.rows, out.width);
  }

  void prefill_logits(const PrefillProblem& problem, const Profile& profile, Logits& out) override {
    py::dict t, p, o;
    prefill_inputs(problem, profile, t, p);
    o["logits"] = copy_array(out.values, {out.rows, out.width});
    out.values = read_logits(output(call("prefill_logits", t, p, o), "logits"), "logits", out.rows, out.width);
  }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    py::dict t = selection_inputs(logits, bounds), p, o;
    p["k"] = out.k;
    o["topk_indices"] = copy_array(out.indices, {out.rows, out.k});
    out.indices = read_i32(output(call("topk", t, p, o), "topk_indices"), "topk_indices", {out.rows, out.k});
  }

  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    py::dict t = selection_inputs(logits, bounds), p, o;
    p["candidate_block_size"] = out.block_size;
    p["candidate_topk_blocks"] = out.slots;
    o["candidate_blocks"] = blocks_array(out);
    out.blocks = read_i32(output(call("candidate_select", t, p, o), "candidate_blocks"), "candidate_blocks",
                          {out.rows, out.slots});
  }

  // In place, as vLLM's apply_candidate_mask: the buffer is the logits input itself.
  void candidate_mask(Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      CandidateMask variant) override {
    py::dict t = selection_inputs(logits, bounds), p, o;
    t["candidate_blocks"] = blocks_array(candidates);
    p["candidate_block_size"] = candidates.block_size;
    p["variant"] = variant == CandidateMask::full ? "full" : "strided";
    o["masked_logits"] = t["logits"];
    logits.values = read_logits(output(call("candidate_mask", t, p, o), "masked_logits"), "masked_logits", logits.rows,
                                logits.width);
  }

  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    py::dict t = selection_inputs(logits, bounds), p, o;
    t["candidate_blocks"] = blocks_array(candidates);
    p["k"] = out.k;
    p["candidate_block_size"] = candidates.block_size;
    o["topk_indices"] = copy_array(out.indices, {out.rows, out.k});
    out.indices = read_i32(output(call("candidate_topk", t, p, o), "topk_indices"), "topk_indices", {out.rows, out.k});
  }

  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                                Logits& out) override {
    py::dict t, p, o;
    decode_inputs(problem, profile, t, p);
    t["candidate_blocks"] = blocks_array(candidates);
    p["candidate_block_size"] = candidates.block_size;
    o["compact_logits"] = copy_array(out.values, {out.rows, out.width});
    out.values = read_logits(output(call("compact_candidate_logits", t, p, o), "compact_logits"), "compact_logits",
                             out.rows, out.width);
  }

  void prefill_compact_candidate_logits(const PrefillProblem& problem, const Profile& profile,
                                        const CandidateBlocks& candidates, Logits& out) override {
    py::dict t, p, o;
    prefill_inputs(problem, profile, t, p);
    t["candidate_blocks"] = blocks_array(candidates);
    p["candidate_block_size"] = candidates.block_size;
    o["compact_logits"] = copy_array(out.values, {out.rows, out.width});
    out.values = read_logits(output(call("prefill_compact_candidate_logits", t, p, o), "compact_logits"),
                             "compact_logits", out.rows, out.width);
  }

  void candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                              Logits& compact_out, TopkIndices& out) override {
    py::dict t, p, o;
    decode_inputs(problem, profile, t, p);
    t["candidate_blocks"] = blocks_array(candidates);
    p["candidate_block_size"] = candidates.block_size;
    p["k"] = out.k;
    o["compact_logits"] = copy_array(compact_out.values, {compact_out.rows, compact_out.width});
    o["topk_indices"] = copy_array(out.indices, {out.rows, out.k});
    const py::dict result = call("candidate_logits_top_k", t, p, o);
    compact_out.values =
        read_logits(output(result, "compact_logits"), "compact_logits", compact_out.rows, compact_out.width);
    out.indices = read_i32(output(result, "topk_indices"), "topk_indices", {out.rows, out.k});
  }

  void pack_rows(const ByteRows& ragged, std::span<const int32_t> decode_lens, uint8_t pad, ByteRows& packed) override {
    const int64_t B = int64_t(decode_lens.size()), next_n = B ? packed.rows / B : 0;
    py::dict t, p, o;
    t["rows"] = copy_array(ragged.bytes, {ragged.rows, ragged.row_bytes});
    t["decode_lens"] = i32_array(decode_lens);
    p["next_n"] = next_n;
    p["pad"] = pad;
    o["packed"] = copy_array(packed.bytes, {B, next_n, packed.row_bytes});
    packed.bytes = read_bytes(output(call("pack_rows", t, p, o), "packed"), "packed", {B, next_n, packed.row_bytes});
  }

  void unpack_topk(const TopkIndices& padded, std::span<const int32_t> decode_lens, TopkIndices& out) override {
    const int64_t B = int64_t(decode_lens.size());
    py::dict t, p, o;
    t["topk_indices"] = copy_array(padded.indices, {padded.rows, padded.k});
    t["decode_lens"] = i32_array(decode_lens);
    p["next_n"] = B ? padded.rows / B : 0;
    p["k"] = padded.k;
    o["topk_indices"] = copy_array(out.indices, {out.rows, out.k});
    out.indices = read_i32(output(call("unpack_topk", t, p, o), "topk_indices"), "topk_indices", {out.rows, out.k});
  }

  bool skip_decode_fill(bool has_prefill_rows, int64_t num_decode_tokens, int64_t num_tokens,
                        bool requires_padding) override {
    py::dict t, p, o;
    p["has_prefill_rows"] = has_prefill_rows;
    p["num_decode_tokens"] = num_decode_tokens;
    p["num_tokens"] = num_tokens;
    p["requires_padding"] = requires_padding;
    const py::object answer = call_raw("skip_decode_fill", t, p, o);
    if (!py::isinstance<py::bool_>(answer))
      throw std::runtime_error("the kernel's skip_decode_fill answered " + std::string(py::repr(answer)) +
                               ", expected a bool");
    return answer.cast<bool>();
  }

  void expand_candidate_blocks(const CandidateBlocks& candidates, const RowBounds& bounds, SparseBlocks& out) override {
    py::dict t, p, o;
    t["candidate_blocks"] = blocks_array(candidates);
    t["ks"] = i32_array(bounds.start);
    t["ke"] = i32_array(bounds.end);
    p["candidate_block_size"] = candidates.block_size;
    p["num_sparse"] = out.num_sparse;
    p["sparse_block_kv"] = out.sparse_block_kv;
    o["sparse_block_ids"] = copy_array(out.ids, {out.rows, out.num_sparse});
    o["sparse_end"] = copy_array(out.end, {out.rows});
    const py::dict result = call("expand_candidate_blocks", t, p, o);
    out.ids = read_i32(output(result, "sparse_block_ids"), "sparse_block_ids", {out.rows, out.num_sparse});
    out.end = read_i32(output(result, "sparse_end"), "sparse_end", {out.rows});
  }

  void sparse_logits(const DecodeProblem& problem, const Profile& profile, const SparseBlocks& sparse,
                     Logits& out) override {
    py::dict t, p, o;
    decode_inputs(problem, profile, t, p);
    sparse_inputs(sparse, t, p);
    o["sparse_logits"] = bf16_or_f32_array(out.values, {out.rows, out.width});
    out.values = read_logits(output(call("sparse_logits", t, p, o), "sparse_logits"), "sparse_logits", out.rows,
                             out.width);
  }

  void sparse_topk(const Logits& sparse_logits, const SparseBlocks& sparse, std::span<const int64_t> row_ks,
                   TopkIndices& out) override {
    py::dict t, p, o;
    t["sparse_logits"] = bf16_or_f32_array(sparse_logits.values, {sparse_logits.rows, sparse_logits.width});
    sparse_inputs(sparse, t, p);
    t["ks"] = i32_array(std::vector<int64_t>(row_ks.begin(), row_ks.end()));
    p["k"] = out.k;
    o["topk_indices"] = copy_array(out.indices, {out.rows, out.k});
    out.indices = read_i32(output(call("sparse_topk", t, p, o), "topk_indices"), "topk_indices", {out.rows, out.k});
  }

private:
  static void sparse_inputs(const SparseBlocks& sparse, py::dict& t, py::dict& p) {
    t["sparse_block_ids"] = copy_array(sparse.ids, {sparse.rows, sparse.num_sparse});
    t["sparse_end"] = copy_array(sparse.end, {sparse.rows});
    p["sparse_block_kv"] = sparse.sparse_block_kv;
  }

  static py::array output(const py::dict& result, const char* name) {
    if (!result.contains(name)) throw std::runtime_error(std::string("the kernel gave no ") + name);
    const py::object value = result[name];
    if (!py::isinstance<py::array>(value))
      throw std::runtime_error(std::string("the kernel's ") + name + " is not an array");
    return contiguous(py::reinterpret_borrow<py::array>(value));
  }

  py::dict call(const char* op, const py::dict& tensors, const py::dict& params, const py::dict& outputs) {
    const py::object result = call_raw(op, tensors, params, outputs);
    if (!py::isinstance<py::dict>(result)) throw std::runtime_error("the dispatcher returned no dict of outputs");
    return py::reinterpret_borrow<py::dict>(result);
  }

  // Errors as the harnesses count them: Unsupported apart, ValueError as bad
  // input (what a kernel refusing impossible counts raises), anything else a failure.
  py::object call_raw(const char* op, const py::dict& tensors, const py::dict& params, const py::dict& outputs) {
    if (state_->interrupted) throw std::runtime_error("interrupted (KeyboardInterrupt)");
    try {
      return dispatch_(op, tensors, params, outputs);
    } catch (py::error_already_set& e) {
      if (e.matches(unsupported_type())) throw Unsupported(std::string("python kernel: ") + e.what());
      if (e.matches(PyExc_KeyboardInterrupt)) {
        state_->interrupted = true;
        throw std::runtime_error("interrupted (KeyboardInterrupt)");
      }
      if (e.matches(PyExc_ValueError)) throw InvalidInput("python kernel", e.what());
      throw std::runtime_error(std::string("the python kernel raised ") + e.what());
    }
  }

  py::object dispatch_;
  std::shared_ptr<CampaignState> state_;
};

}  // namespace

std::unique_ptr<IndexerOps> make_python_ops(py::object dispatch, std::shared_ptr<CampaignState> state) {
  return std::make_unique<PythonOps>(std::move(dispatch), std::move(state));
}

}  // namespace dsa::python
