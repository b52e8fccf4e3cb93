// The in-process fuzzer: a Python kernel as one more implementation under
// test. PythonOps turns each IndexerOps call into a call of the package's
// dispatcher (dsa_oracle/_fuzz.py), with the inputs under the names of the
// external exchange and the golden schema (docs/fuzzing.md) and the output
// buffer the harness poisoned; the campaign, the oracle and RapidCheck's
// shrinking are the C++ fuzzer's own (fuzz/campaign.hpp).
//
// The GIL is held throughout: every case calls back into Python.
#include <pybind11/stl.h>

#include <cstring>
#include <iostream>
#include <memory>

#include "arrays.hpp"
#include "bindings.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/cases.hpp"
#include "dsa/fuzz/properties.hpp"

namespace dsa::python {
namespace {

// Shared by every instance of one campaign: a Ctrl-C seen in one call stops the rest.
struct CampaignState {
  bool interrupted = false;
};

template <class T>
py::array copy_array(const std::vector<T>& values, const std::vector<int64_t>& shape) {
  return owned_array(std::vector<T>(values), shape);
}
py::array i32_array(const std::vector<int64_t>& values) {
  return owned_array(std::vector<int32_t>(values.begin(), values.end()), {int64_t(values.size())});
}

class PythonOps final : public IndexerOps {
public:
  PythonOps(py::object dispatch, std::shared_ptr<CampaignState> state)
      : dispatch_(std::move(dispatch)), state_(std::move(state)) {}

  std::string name() const override { return "python"; }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    py::dict t = selection_inputs(logits, bounds);
    py::dict p;
    p["k"] = out.k;
    out.indices = indices(call("topk", t, p, "topk_indices", copy_array(out.indices, {out.rows, out.k})), out.rows, out.k);
  }

  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    py::dict t = selection_inputs(logits, bounds);
    py::dict p;
    p["candidate_block_size"] = out.block_size;
    p["candidate_topk_blocks"] = out.slots;
    out.blocks = indices(call("candidate_select", t, p, "candidate_blocks", copy_array(out.blocks, {out.rows, out.slots})),
                         out.rows, out.slots);
  }

  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    py::dict t = selection_inputs(logits, bounds);
    t["candidate_blocks"] = copy_array(candidates.blocks, {candidates.rows, candidates.slots});
    py::dict p;
    p["k"] = out.k;
    p["candidate_block_size"] = candidates.block_size;
    out.indices = indices(call("candidate_topk", t, p, "topk_indices", copy_array(out.indices, {out.rows, out.k})),
                          out.rows, out.k);
  }

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override {
    py::dict t, p;
    decode_inputs(problem, profile, t, p);
    out.values = logits(call("decode_logits", t, p, "logits", copy_array(out.values, {out.rows, out.width})), out.rows,
                        out.width, "logits");
  }

  void prefill_logits(const PrefillProblem& q, const Profile& profile, Logits& out) override {
    py::dict t, p;
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
    out.values = logits(call("prefill_logits", t, p, "logits", copy_array(out.values, {out.rows, out.width})), out.rows,
                        out.width, "logits");
  }

  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                                Logits& out) override {
    py::dict t, p;
    decode_inputs(problem, profile, t, p);
    t["candidate_blocks"] = copy_array(candidates.blocks, {candidates.rows, candidates.slots});
    p["candidate_block_size"] = candidates.block_size;
    out.values = logits(call("compact_candidate_logits", t, p, "compact_logits", copy_array(out.values, {out.rows, out.width})),
                        out.rows, out.width, "compact_logits");
  }

private:
  static py::dict selection_inputs(const Logits& logits, const RowBounds& bounds) {
    py::dict t;
    t["logits"] = copy_array(logits.values, {logits.rows, logits.width});
    t["ks"] = i32_array(bounds.start);
    t["ke"] = i32_array(bounds.end);
    return t;
  }

  static void decode_inputs(const DecodeProblem& q, const Profile& profile, py::dict& t, py::dict& p) {
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

  // The kernel's output for `op` as a C-contiguous numpy array (the dispatcher normalises it).
  py::array call(const char* op, const py::dict& tensors, const py::dict& params, const char* output, py::array out) {
    if (state_->interrupted) throw std::runtime_error("interrupted (KeyboardInterrupt)");
    try {
      py::object result = dispatch_(op, tensors, params, output, out);
      return contiguous(py::reinterpret_borrow<py::array>(result));
    } catch (py::error_already_set& e) {
      if (e.matches(unsupported_type())) throw Unsupported(std::string("python kernel: ") + e.what());
      if (e.matches(PyExc_KeyboardInterrupt)) {
        state_->interrupted = true;
        throw std::runtime_error("interrupted (KeyboardInterrupt)");
      }
      throw std::runtime_error(std::string("the python kernel raised ") + e.what());
    }
  }

  static std::vector<int32_t> indices(const py::array& a, int64_t rows, int64_t cols) {
    if (a.dtype().kind() != 'i' || a.itemsize() != 4 || a.ndim() != 2 || a.shape(0) != rows || a.shape(1) != cols)
      throw std::runtime_error("the kernel's output is a " + describe_array(a) + ", expected an int32 array of shape (" +
                               std::to_string(rows) + ", " + std::to_string(cols) + ")");
    const auto* data = static_cast<const int32_t*>(a.data());
    return {data, data + rows * cols};
  }

  static std::vector<float> logits(const py::array& a, int64_t rows, int64_t width, const char* name) {
    const bool f32 = a.dtype().kind() == 'f' && a.itemsize() == 4, bf16 = a.dtype().kind() == 'u' && a.itemsize() == 2;
    if (!(f32 || bf16) || a.ndim() != 2 || a.shape(0) != rows || a.shape(1) != width)
      throw std::runtime_error(std::string("the kernel's ") + name + " is a " + describe_array(a) +
                               ", expected float32 (or bf16) of shape (" + std::to_string(rows) + ", " +
                               std::to_string(width) + ")");
    std::vector<float> values(size_t(rows * width));
    if (f32) {
      std::memcpy(values.data(), a.data(), values.size() * sizeof(float));
    } else {
      const auto* bits = static_cast<const uint16_t*>(a.data());
      for (size_t i = 0; i < values.size(); ++i) values[i] = bf16_to_float(bits[i]);
    }
    return values;
  }

  py::object dispatch_;
  std::shared_ptr<CampaignState> state_;
};

py::dict failure_dict(const fuzz::Failure& f) {
  py::dict d;
  d["property"] = f.property;
  d["case"] = fuzz::to_json(f.shrunk).dump();
  d["summary"] = fuzz::summary(f.shrunk);
  d["describe"] = fuzz::describe(f.shrunk);
  d["message"] = f.message;
  d["cases"] = f.cases;
  d["seconds"] = f.seconds;
  d["shrink_steps"] = f.shrink_steps;
  d["shrink_seconds"] = f.shrink_seconds;
  d["reproduced"] = f.reproduced;
  return d;
}

[[noreturn]] void raise_keyboard_interrupt() {
  PyErr_SetNone(PyExc_KeyboardInterrupt);
  throw py::error_already_set();
}

py::dict run(const py::object& dispatch, const std::vector<std::string>& properties, uint64_t seed, double seconds,
             int64_t cases, int32_t batch_cases, double shrink_seconds, int64_t shrink_steps, bool progress) {
  auto state = std::make_shared<CampaignState>();
  fuzz::CampaignOptions o;
  o.impl = "python";
  o.make_impl = [dispatch, state] { return std::make_unique<PythonOps>(dispatch, state); };
  o.properties = properties;
  o.seed = seed;
  o.seconds = seconds;
  o.cases = cases;
  o.batch_cases = batch_cases;
  o.shrink_seconds = shrink_seconds;
  o.shrink_steps = shrink_steps;
  o.replay_prefix = "dsa_oracle.replay";  // the package prints its own replay line
  if (progress) o.progress = &std::cerr;
  const fuzz::CampaignResult result = fuzz::run_campaign(o);
  if (state->interrupted) raise_keyboard_interrupt();
  py::list list;
  for (const auto& p : result.properties) {
    py::dict d;
    d["property"] = p.property;
    d["applicable"] = p.applicable();
    d["cases"] = p.cases;
    d["passed"] = p.passed;
    d["unsupported"] = p.unsupported;
    d["seconds"] = p.seconds;
    d["failure"] = p.failure ? py::object(failure_dict(*p.failure)) : py::object(py::none());
    list.append(d);
  }
  py::dict out;
  out["properties"] = list;
  out["seconds"] = result.seconds;
  return out;
}

py::tuple replay(const py::object& dispatch, const std::string& property, const std::string& case_json) {
  auto state = std::make_shared<CampaignState>();
  const fuzz::Outcome outcome =
      fuzz::replay([dispatch, state] { return std::make_unique<PythonOps>(dispatch, state); }, property, case_json);
  if (state->interrupted) raise_keyboard_interrupt();
  const char* verdict = outcome.verdict == fuzz::Verdict::pass ? "pass" : outcome.verdict == fuzz::Verdict::fail ? "fail" : "unsupported";
  const fuzz::FuzzCase c = fuzz::case_from_json(nlohmann::json::parse(case_json));
  return py::make_tuple(verdict, outcome.message, fuzz::describe(c));
}

}  // namespace

void bind_fuzz(py::module_& m) {
  m.def("fuzz_run", &run, py::arg("dispatch"), py::arg("properties"), py::arg("seed"), py::arg("seconds"),
        py::arg("cases"), py::arg("batch_cases"), py::arg("shrink_seconds"), py::arg("shrink_steps"),
        py::arg("progress"));
  m.def("fuzz_replay", &replay, py::arg("dispatch"), py::arg("property"), py::arg("case"));
  m.def("fuzz_properties", [] {
    py::list list;
    for (const auto& p : fuzz::properties()) {
      py::dict d;
      d["name"] = p.name;
      d["description"] = p.description;
      d["opt_in"] = p.opt_in;
      list.append(d);
    }
    return list;
  });
}

}  // namespace dsa::python
