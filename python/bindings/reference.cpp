// The reference from Python: every op of the golden schema through the golden
// reader (one validation, one set of names, the same bytes as `dsa-oracle
// reference`), and the row-length, padding and SM100 helpers.
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <optional>

#include "arrays.hpp"
#include "bindings.hpp"
#include "dsa/dataset/golden_case.hpp"
#include "dsa/error.hpp"
#include "dsa/padding.hpp"
#include "dsa/sparse_sm100.hpp"

namespace dsa::python {
namespace {

// An InvalidInput about one of the caller's arrays says what the caller gave.
[[noreturn]] void rethrow_with_given(const InvalidInput& e, const std::map<std::string, std::string>& given) {
  const auto it = given.find(e.argument());
  if (it == given.end()) throw e;
  throw InvalidInput(e.argument(), std::string(e.what()).substr(e.argument().size() + 2) + " (given: " + it->second + ")");
}

std::map<std::string, std::string> describe_inputs(const py::dict& tensors) {
  std::map<std::string, std::string> given;
  for (const auto& [key, value] : tensors) {
    py::handle array = py::isinstance<py::tuple>(value) ? py::reinterpret_borrow<py::tuple>(value)[0] : value;
    if (py::isinstance<py::array>(array)) given[py::str(key)] = describe_array(py::reinterpret_borrow<py::array>(array));
  }
  return given;
}

py::dict reference_run(const std::string& op, const std::string& profile, const py::dict& tensors,
                       const py::dict& metadata, const std::optional<std::vector<std::string>>& outputs) {
  const auto given = describe_inputs(tensors);
  dataset::Safetensors input;
  try {
    input = safetensors_from_dicts(tensors, metadata);
  } catch (const InvalidInput& e) {
    rethrow_with_given(e, given);
  }
  input.metadata["op"] = op;
  input.metadata["profile"] = profile;
  input.metadata.erase("outputs");
  dataset::Safetensors result;
  {
    py::gil_scoped_release release;
    try {
      dataset::GoldenCase golden = dataset::read_case_inputs(input);
      const auto names = outputs ? *outputs : dataset::op_outputs(golden.settings.op, golden.logits_given());
      dataset::compute_expected(golden, names);
      dataset::put_outputs(result, golden, golden.expected);
    } catch (const InvalidInput& e) {
      rethrow_with_given(e, given);
    }
  }
  return dict_from_safetensors(result);
}

// A lengths-only decode problem (the row rules of SPEC 4, 5 and 7).
DecodeProblem lengths_problem(const py::handle& seq_lens, int32_t next_n, int32_t compress_ratio,
                              const py::object& decode_lens, const std::string& padded_lengths) {
  if (next_n < 1) throw InvalidInput("next_n", "must be at least 1, got " + std::to_string(next_n));
  if (compress_ratio < 1) throw InvalidInput("compress_ratio", "must be at least 1, got " + std::to_string(compress_ratio));
  const py::array lens = contiguous(py::reinterpret_borrow<py::array>(seq_lens));
  DecodeProblem p;
  p.next_n = next_n;
  p.compress_ratio = compress_ratio;
  if (lens.ndim() == 2 && lens.shape(1) == next_n) {
    p.seq_lens_2d = true;
    const IndexArray a = indices_from_array("seq_lens", seq_lens);
    p.seq_lens = a.values;
  } else if (lens.ndim() == 1) {
    const auto v = lengths_from_array("seq_lens", seq_lens);
    p.seq_lens.assign(v.begin(), v.end());
  } else {
    throw InvalidInput("seq_lens", describe_array(lens) + ", expected (B,) or (B, next_n = " + std::to_string(next_n) + ")");
  }
  p.batch = int32_t(lens.shape(0));
  for (size_t i = 0; i < p.seq_lens.size(); ++i)
    if (p.seq_lens[i] < 0) throw InvalidInput("seq_lens", "seq_lens[" + std::to_string(i) + "] is negative");
  if (!decode_lens.is_none()) {
    const auto d = lengths_from_array("decode_lens", decode_lens);
    if (int64_t(d.size()) != p.batch)
      throw InvalidInput("decode_lens", "has " + std::to_string(d.size()) + " entries, expected B = " + std::to_string(p.batch));
    p.decode_lens.assign(d.begin(), d.end());
    for (size_t b = 0; b < d.size(); ++b)
      if (d[b] < 1 || d[b] > next_n)
        throw InvalidInput("decode_lens", "decode_lens[" + std::to_string(b) + "] = " + std::to_string(d[b]) +
                                              " is outside [1, next_n = " + std::to_string(next_n) + "]");
    if (padded_lengths == "vllm_padded") p.padded_lengths = PaddedLengths::vllm_padded;
    else if (padded_lengths != "causal") throw InvalidInput("padded_lengths", "'" + padded_lengths + "' is not causal or vllm_padded");
  }
  return p;
}

template <class T>
py::array pack_typed(const py::array& rows, const std::vector<int32_t>& decode_lens, int32_t next_n, double pad) {
  const size_t row_size = rows.ndim() > 1 ? size_t(rows.size() / std::max<py::ssize_t>(rows.shape(0), 1)) : 1;
  const std::span<const T> data(static_cast<const T*>(rows.data()), size_t(rows.size()));
  std::vector<T> packed = pack_rows<T>(data, decode_lens, next_n, row_size, T(pad));
  std::vector<int64_t> shape = {int64_t(decode_lens.size()), next_n};
  for (py::ssize_t i = 1; i < rows.ndim(); ++i) shape.push_back(rows.shape(i));
  return owned_array(std::move(packed), shape);
}

template <class T>
py::array unpack_typed(const py::array& packed, const std::vector<int32_t>& decode_lens, int32_t next_n) {
  size_t row_size = 1;
  for (py::ssize_t i = 2; i < packed.ndim(); ++i) row_size *= size_t(packed.shape(i));
  const std::span<const T> data(static_cast<const T*>(packed.data()), size_t(packed.size()));
  std::vector<T> rows = unpack_rows<T>(data, decode_lens, next_n, row_size);
  std::vector<int64_t> shape = {int64_t(rows.size() / std::max<size_t>(row_size, 1))};
  for (py::ssize_t i = 2; i < packed.ndim(); ++i) shape.push_back(packed.shape(i));
  return owned_array(std::move(rows), shape);
}

std::vector<int32_t> decode_lens_of(const py::handle& value) {
  const auto v = lengths_from_array("decode_lens", value);
  return {v.begin(), v.end()};
}

// The dtypes pack/unpack move: fp8 codes (uint8), indices (int32), fp32 values.
char row_kind(const std::string& name, const py::array& a) {
  const char kind = a.dtype().kind();
  if ((kind == 'u' && a.itemsize() == 1) || (kind == 'i' && a.itemsize() == 4) || (kind == 'f' && a.itemsize() == 4))
    return kind;
  throw InvalidInput(name, describe_array(a) + ": pack/unpack move uint8, int32 or float32 rows");
}

py::array pack(const py::handle& rows_value, const py::handle& decode_lens, int32_t next_n, double pad) {
  const py::array rows = contiguous(py::reinterpret_borrow<py::array>(rows_value));
  const auto d = decode_lens_of(decode_lens);
  if (rows.ndim() < 1) throw InvalidInput("rows", describe_array(rows) + ", expected (sum of decode_lens, ...)");
  switch (row_kind("rows", rows)) {
    case 'u': return pack_typed<uint8_t>(rows, d, next_n, pad);
    case 'i': return pack_typed<int32_t>(rows, d, next_n, pad);
    default: return pack_typed<float>(rows, d, next_n, pad);
  }
}

py::array unpack(const py::handle& packed_value, const py::handle& decode_lens) {
  const py::array packed = contiguous(py::reinterpret_borrow<py::array>(packed_value));
  if (packed.ndim() < 2) throw InvalidInput("packed", describe_array(packed) + ", expected (B, next_n, ...)");
  const auto d = decode_lens_of(decode_lens);
  const int32_t next_n = int32_t(packed.shape(1));
  switch (row_kind("packed", packed)) {
    case 'u': return unpack_typed<uint8_t>(packed, d, next_n);
    case 'i': return unpack_typed<int32_t>(packed, d, next_n);
    default: return unpack_typed<float>(packed, d, next_n);
  }
}

py::dict expand(const py::handle& candidate_blocks, int32_t candidate_block_size, const py::handle& ks, const py::handle& ke) {
  const IndexArray blocks = indices_from_array("candidate_blocks", candidate_blocks);
  CandidateBlocks c;
  c.rows = blocks.rows;
  c.slots = int32_t(blocks.cols);
  c.block_size = candidate_block_size;
  c.blocks = blocks.values;
  if (candidate_block_size < 1) throw InvalidInput("candidate_block_size", "must be at least 1");
  c.validate();
  RowBounds bounds;
  bounds.start = lengths_from_array("ks", ks);
  bounds.end = lengths_from_array("ke", ke);
  if (bounds.rows() != c.rows || int64_t(bounds.start.size()) != c.rows)
    throw InvalidInput("ke", "ks and ke need one entry per row of candidate_blocks (" + std::to_string(c.rows) + ")");
  for (int64_t r = 0; r < c.rows; ++r)
    if (bounds.start[size_t(r)] < 0 || bounds.end[size_t(r)] < bounds.start[size_t(r)])
      throw InvalidInput("ks", "row " + std::to_string(r) + " has ke < ks or ks < 0");
  SparseBlocks s = expand_candidate_blocks(c, bounds);
  py::dict out;
  out["sparse_block_kv"] = s.sparse_block_kv;
  out["sparse_block_ids"] = owned_array(std::move(s.ids), {s.rows, s.num_sparse});
  out["sparse_end"] = owned_array(std::move(s.end), {s.rows});
  return out;
}

}  // namespace

void bind_reference(py::module_& m) {
  m.def("reference_run", &reference_run, py::arg("op"), py::arg("profile"), py::arg("tensors"), py::arg("metadata"),
        py::arg("outputs") = std::nullopt,
        "Runs a golden-schema op on {name: array or (array, dtype)} with metadata; returns {name: (array, dtype)}");
  m.def("golden_ops", [] {
    std::vector<std::string> names;
    for (auto op : dataset::golden_ops()) names.emplace_back(dataset::to_string(op));
    return names;
  });
  m.def("op_outputs", [](const std::string& op, bool logits_given) {
    return dataset::op_outputs(dataset::parse_golden_op(op), logits_given);
  });
  m.def("primary_output", [](const std::string& op) { return dataset::primary_output(dataset::parse_golden_op(op)); });
  m.def(
      "visible_lens",
      [](const py::handle& seq_lens, int32_t next_n, int32_t compress_ratio, const py::object& decode_lens,
         const std::string& padded_lengths) {
        auto lens = visible_lens(lengths_problem(seq_lens, next_n, compress_ratio, decode_lens, padded_lengths));
        const int64_t n = int64_t(lens.size());
        return owned_array(std::move(lens), {n});
      },
      py::arg("seq_lens"), py::arg("next_n"), py::arg("compress_ratio"), py::arg("decode_lens"), py::arg("padded_lengths"));
  m.def(
      "candidate_row_ends",
      [](const py::handle& seq_lens, int32_t next_n, int32_t compress_ratio, const py::object& decode_lens,
         const std::string& padded_lengths) {
        auto ends = candidate_row_ends(lengths_problem(seq_lens, next_n, compress_ratio, decode_lens, padded_lengths));
        const int64_t n = int64_t(ends.size());
        return owned_array(std::move(ends), {n});
      },
      py::arg("seq_lens"), py::arg("next_n"), py::arg("compress_ratio"), py::arg("decode_lens"), py::arg("padded_lengths"));
  m.def("pack_rows", &pack, py::arg("rows"), py::arg("decode_lens"), py::arg("next_n"), py::arg("pad"));
  m.def("unpack_rows", &unpack, py::arg("packed"), py::arg("decode_lens"));
  m.def(
      "requires_padding",
      [](const py::handle& decode_lens, int32_t next_n) { return requires_padding(decode_lens_of(decode_lens), next_n); },
      py::arg("decode_lens"), py::arg("next_n"));
  m.def("skip_decode_fill", &skip_decode_fill, py::arg("has_prefill_rows"), py::arg("num_decode_tokens"),
        py::arg("num_tokens"), py::arg("requires_padding"));
  m.def("q_pad_byte", [](const std::string& element) { return q_pad_byte(parse_element_format(element)); },
        py::arg("element"));
  m.def("pick_sparse_block_kv", &pick_sparse_block_kv, py::arg("candidate_block_size"));
  m.def("expand_candidate_blocks", &expand, py::arg("candidate_blocks"), py::arg("candidate_block_size"), py::arg("ks"),
        py::arg("ke"));
}

}  // namespace dsa::python
