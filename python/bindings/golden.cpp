// Golden sets from Python: read a case (inputs and expected outputs as
// arrays), write a kernel's outputs file, judge outputs of one case or of a
// whole set with `dsa-oracle check`'s code (dataset/check.hpp).
#include <pybind11/stl.h>

#include <filesystem>
#include <optional>

#include "arrays.hpp"
#include "bindings.hpp"
#include "dsa/dataset/check.hpp"
#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "dsa/optimized/implementations.hpp"

namespace dsa::python {
namespace {

// {op, profile, metadata, inputs: {name: (array, dtype)}, expected: {...}}, validated as `check` reads it.
py::dict read_case(const std::string& path) {
  dataset::Safetensors file;
  std::vector<std::string> outputs;
  {
    py::gil_scoped_release release;
    file = dataset::read_safetensors(path);
    const dataset::GoldenCase golden = dataset::read_golden_case(file);
    outputs = golden.expected.names();
  }
  py::dict inputs, expected;
  for (const auto& [name, t] : file.tensors()) {
    const bool is_output = std::count(outputs.begin(), outputs.end(), name) > 0;
    (is_output ? expected : inputs)[py::str(name)] = py::make_tuple(array_from_tensor(t), std::string(dataset::to_string(t.dtype)));
  }
  py::dict result;
  result["op"] = file.metadata.at("op");
  result["profile"] = file.metadata.at("profile");
  result["metadata"] = file.metadata;
  result["inputs"] = inputs;
  result["expected"] = expected;
  return result;
}

dataset::CheckOptions check_options(std::optional<double> tolerance, int max_listed) {
  dataset::CheckOptions o;
  o.tolerance = tolerance;
  o.max_listed = max_listed;
  return o;
}

// One case's outputs, given as arrays, judged against the golden file.
py::tuple check_case(const std::string& golden_path, const py::dict& outputs, std::optional<double> tolerance,
                     int max_listed) {
  const dataset::Safetensors actual = safetensors_from_dicts(outputs, py::dict());
  oracle::Report report;
  {
    py::gil_scoped_release release;
    const dataset::GoldenCase golden = dataset::read_golden_case(dataset::read_safetensors(golden_path));
    const dataset::GoldenOutputs read = dataset::read_outputs(actual, golden);
    report = dataset::check_case(golden, read, std::filesystem::path(golden_path).filename().string(),
                                 check_options(tolerance, max_listed));
  }
  return report_result(report);
}

// (JSON of the set's report with "cases" and "exit_code", the set's report as a table).
py::tuple check_set(const std::string& golden_dir, const std::string& outputs_dir, std::optional<double> tolerance,
                    int max_listed) {
  dataset::SetCheck result;
  {
    py::gil_scoped_release release;
    result = dataset::check_golden_set(golden_dir, outputs_dir, check_options(tolerance, max_listed));
  }
  return py::make_tuple(result.to_json().dump(), result.report().to_text());
}

// `dsa-oracle check --impl NAME`: an implementation of the table run in process on every case.
py::tuple check_set_impl(const std::string& golden_dir, const std::string& impl_name, std::optional<double> tolerance,
                         int max_listed) {
  dataset::SetCheck result;
  {
    py::gil_scoped_release release;
    const optimized::Implementation& entry = optimized::find_implementation(impl_name);
    const std::unique_ptr<IndexerOps> impl = fuzz::make_implementation(impl_name);  // refuses one that cannot run here
    result = dataset::check_implementation(golden_dir, *impl, entry.contract, check_options(tolerance, max_listed));
  }
  return py::make_tuple(result.to_json().dump(), result.report().to_text());
}

py::list implementations() {
  py::list list;
  for (const auto& e : optimized::implementations()) {
    py::dict d;
    d["name"] = e.name;
    d["description"] = e.description;
    d["device"] = std::string(optimized::to_string(e.device));
    d["available"] = e.available();
    py::list ops;
    for (Op op : e.contract.ops) ops.append(std::string(to_string(op)));
    d["ops"] = ops;
    d["profile"] = e.contract.profile;
    d["contract"] = describe(e.contract);
    list.append(d);
  }
  return list;
}

void write_outputs(const std::string& path, const py::dict& outputs, const py::dict& metadata) {
  const dataset::Safetensors st = safetensors_from_dicts(outputs, metadata);
  py::gil_scoped_release release;
  dataset::write_safetensors(path, st);
}

}  // namespace

void bind_golden(py::module_& m) {
  m.def("read_case", &read_case, py::arg("path"));
  m.def("check_case", &check_case, py::arg("golden_path"), py::arg("outputs"), py::arg("tolerance"),
        py::arg("max_listed"));
  m.def("check_set", &check_set, py::arg("golden_dir"), py::arg("outputs_dir"), py::arg("tolerance"),
        py::arg("max_listed"));
  m.def("check_set_impl", &check_set_impl, py::arg("golden_dir"), py::arg("impl"), py::arg("tolerance"),
        py::arg("max_listed"));
  m.def("implementations", &implementations);
  m.def("write_safetensors", &write_outputs, py::arg("path"), py::arg("tensors"), py::arg("metadata"));
}

}  // namespace dsa::python
