// The in-process fuzzer: a Python kernel as one more implementation under
// test (python_ops.hpp); the campaign, the oracle and RapidCheck's shrinking
// are the C++ fuzzer's own (fuzz/campaign.hpp).
//
// The GIL is held throughout: every case calls back into Python.
#include <pybind11/stl.h>

#include <iostream>
#include <memory>

#include "bindings.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/cases.hpp"
#include "dsa/fuzz/properties.hpp"
#include "python_ops.hpp"

namespace dsa::python {
namespace {

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
  d["reproduced"] = f.reproduced();
  d["replay_attempts"] = f.replay_attempts;
  d["replay_note"] = fuzz::replay_note(f);
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
  o.make_impl = [dispatch, state] { return make_python_ops(dispatch, state); };
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

py::tuple replay(const py::object& dispatch, const std::string& property, const std::string& case_json,
                 int attempts) {
  auto state = std::make_shared<CampaignState>();
  const fuzz::ReplayOutcome outcome = fuzz::replay([dispatch, state] { return make_python_ops(dispatch, state); },
                                                   property, case_json, {}, {}, attempts);
  if (state->interrupted) raise_keyboard_interrupt();
  const char* verdict = outcome.verdict == fuzz::Verdict::pass ? "pass" : outcome.verdict == fuzz::Verdict::fail ? "fail" : "unsupported";
  const fuzz::FuzzCase c = fuzz::case_from_json(nlohmann::json::parse(case_json));
  return py::make_tuple(verdict, outcome.message, fuzz::describe(c), outcome.failed_on);
}

}  // namespace

void bind_fuzz(py::module_& m) {
  m.def("fuzz_run", &run, py::arg("dispatch"), py::arg("properties"), py::arg("seed"), py::arg("seconds"),
        py::arg("cases"), py::arg("batch_cases"), py::arg("shrink_seconds"), py::arg("shrink_steps"),
        py::arg("progress"));
  m.attr("fuzz_reproduce_attempts") = fuzz::kReproduceAttempts;
  m.def("fuzz_replay", &replay, py::arg("dispatch"), py::arg("property"), py::arg("case"), py::arg("attempts") = 1);
  m.def("indexer_ops", [] {
    std::vector<std::string> names;
    for (const Op op : all_ops()) names.emplace_back(to_string(op));
    return names;
  });
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
