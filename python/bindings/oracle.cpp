// The oracle's comparators from Python. Each returns a report (JSON and table,
// report_result): the rule's verdict and, first, whether every entry was
// written (the poison protocol), so a surviving poison is named as such.
#include <pybind11/stl.h>

#include <optional>

#include "arrays.hpp"
#include "bindings.hpp"
#include "dsa/error.hpp"
#include "dsa/oracle/determinism_check.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"

namespace dsa::python {
namespace {

RowBounds windows_of(const py::handle& begin, const py::handle& end) {
  RowBounds w;
  w.start = lengths_from_array("ks", begin);
  w.end = lengths_from_array("ke", end);
  if (w.start.size() != w.end.size())
    throw InvalidInput("ke", "has " + std::to_string(w.end.size()) + " rows, ks " + std::to_string(w.start.size()));
  return w;
}

oracle::IndexMatrix view(const IndexArray& a) { return {a.values, a.rows, a.cols}; }

py::tuple check_logits(const py::handle& actual_value, const py::handle& expected_value, const py::handle& begin,
                       const py::handle& end, const std::string& actual_dtype, const std::string& expected_dtype,
                       bool clean, std::optional<double> abs, double rel, uint64_t ulps, bool bf16, int max_listed,
                       const std::string& label) {
  const Logits actual = logits_from_array("actual", actual_value, actual_dtype);
  const Logits expected = logits_from_array("expected", expected_value, expected_dtype);
  if (actual.rows != expected.rows || actual.width != expected.width)
    throw InvalidInput("actual", "shape (" + std::to_string(actual.rows) + ", " + std::to_string(actual.width) +
                                     "), expected the shape of `expected`, (" + std::to_string(expected.rows) + ", " +
                                     std::to_string(expected.width) + ")");
  const auto windows = windows_of(begin, end);
  oracle::LogitsCheckOptions o;
  o.clean = clean;
  if (abs || rel > 0 || ulps > 0) o.tolerance = oracle::LogitsTolerance{abs.value_or(0.0), rel, ulps};
  o.bf16_ulps = bf16;
  o.poison_bits = bf16 ? oracle::kPoisonBf16AsF32Bits : oracle::kPoisonF32Bits;
  o.max_listed = max_listed;
  oracle::Report report;
  {
    py::gil_scoped_release release;
    report.add(label, oracle::check_written(actual, windows, label, *o.poison_bits, max_listed));
    report.add(label, oracle::check_logits(actual, expected, windows, o));
  }
  return report_result(report);
}

py::tuple check_topk(const py::handle& indices_value, const py::handle& values_value, const py::handle& begin,
                     const py::handle& end, const std::string& values_dtype, double eps, int max_listed,
                     const std::string& label) {
  const IndexArray indices = indices_from_array("indices", indices_value);
  const Logits values = logits_from_array("logits", values_value, values_dtype);
  if (indices.rows != values.rows)
    throw InvalidInput("indices", "has " + std::to_string(indices.rows) + " rows, the logits " + std::to_string(values.rows));
  const auto windows = windows_of(begin, end);
  oracle::Report report;
  report.add(label, oracle::check_written(view(indices), label, oracle::kPoisonI32, max_listed));
  report.add(label, oracle::check_topk(view(indices), values, windows, {eps, max_listed}));
  return report_result(report);
}

py::tuple check_candidate_blocks(const py::handle& blocks_value, const py::handle& values_value, int64_t block_size,
                                 const py::handle& begin, const py::handle& end, const std::string& values_dtype,
                                 double eps, int max_listed, const std::string& label) {
  const IndexArray blocks = indices_from_array("candidate_blocks", blocks_value);
  const Logits values = logits_from_array("logits", values_value, values_dtype);
  if (block_size < 1) throw InvalidInput("candidate_block_size", "must be at least 1, got " + std::to_string(block_size));
  if (blocks.rows != values.rows)
    throw InvalidInput("candidate_blocks", "has " + std::to_string(blocks.rows) + " rows, the logits " + std::to_string(values.rows));
  const auto windows = windows_of(begin, end);
  const int64_t num_blocks = (values.width + block_size - 1) / block_size;
  const Logits scores = oracle::candidate_block_scores(values, block_size, windows, std::max<int64_t>(num_blocks, 1));
  oracle::Report report;
  report.add(label, oracle::check_written(view(blocks), label, oracle::kPoisonI32, max_listed));
  report.add(label, oracle::check_candidate_blocks(view(blocks), scores, {eps, max_listed}));
  return report_result(report);
}

py::tuple check_determinism(const py::handle& first_value, const py::handle& second_value, int max_listed,
                            const std::string& label) {
  const IndexArray first = indices_from_array("first", first_value), second = indices_from_array("second", second_value);
  oracle::Report report;
  report.add(label, oracle::check_determinism(view(first), view(second), max_listed));
  return report_result(report);
}

py::array block_scores(const py::handle& values_value, int64_t block_size, const py::handle& begin, const py::handle& end,
                       const std::string& values_dtype) {
  const Logits values = logits_from_array("logits", values_value, values_dtype);
  if (block_size < 1) throw InvalidInput("candidate_block_size", "must be at least 1, got " + std::to_string(block_size));
  const int64_t num_blocks = std::max<int64_t>((values.width + block_size - 1) / block_size, 1);
  Logits scores = oracle::candidate_block_scores(values, block_size, windows_of(begin, end), num_blocks);
  return owned_array(std::move(scores.values), {scores.rows, scores.width});
}

}  // namespace

void bind_oracle(py::module_& m) {
  m.def("check_logits", &check_logits, py::arg("actual"), py::arg("expected"), py::arg("begin"), py::arg("end"),
        py::arg("actual_dtype"), py::arg("expected_dtype"), py::arg("clean"), py::arg("abs"), py::arg("rel"),
        py::arg("ulps"), py::arg("bf16"), py::arg("max_listed"), py::arg("label"));
  m.def("check_topk", &check_topk, py::arg("indices"), py::arg("logits"), py::arg("begin"), py::arg("end"),
        py::arg("logits_dtype"), py::arg("eps"), py::arg("max_listed"), py::arg("label"));
  m.def("check_candidate_blocks", &check_candidate_blocks, py::arg("candidate_blocks"), py::arg("logits"),
        py::arg("candidate_block_size"), py::arg("begin"), py::arg("end"), py::arg("logits_dtype"), py::arg("eps"),
        py::arg("max_listed"), py::arg("label"));
  m.def("check_determinism", &check_determinism, py::arg("first"), py::arg("second"), py::arg("max_listed"),
        py::arg("label"));
  m.def("candidate_block_scores", &block_scores, py::arg("logits"), py::arg("candidate_block_size"), py::arg("begin"),
        py::arg("end"), py::arg("logits_dtype"));
  m.attr("POISON_F32_BITS") = oracle::kPoisonF32Bits;
  m.attr("POISON_BF16_BITS") = oracle::kPoisonBf16Bits;
  m.attr("POISON_I32") = oracle::kPoisonI32;
}

}  // namespace dsa::python
