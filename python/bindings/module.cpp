// dsa_oracle._core: the reference, the oracle, golden sets and the fuzzer of
// the C++ library, for the Python package around it (python/src/dsa_oracle).
//
// Errors: dsa::InvalidInput becomes dsa_oracle.InvalidInput, a ValueError
// whose message is the C++ one ("argument: problem") and whose `argument`
// names the tensor, flag or metadata key; dsa::Unsupported becomes
// dsa_oracle.Unsupported.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "dsa/error.hpp"
#include "dsa/profile.hpp"

namespace dsa::python {
namespace {

py::object& unsupported_storage() {
  static py::object type;
  return type;
}
py::object& invalid_input_storage() {
  static py::object type;
  return type;
}

py::dict profile_info(const std::string& name) {
  const Profile& p = find_profile(name);
  py::dict d;
  d["name"] = p.name;
  d["origin"] = p.origin;
  d["mma"] = std::string(mma::to_string(p.mma));
  py::list elements;
  for (ElementFormat e : p.elements) elements.append(std::string(to_string(e)));
  d["elements"] = elements;
  d["weights"] = p.weights == Precision::bf16 ? "bf16" : "fp32";
  d["logits"] = p.logits == Precision::bf16 ? "bf16" : "fp32";
  return d;
}

}  // namespace

py::object unsupported_type() { return unsupported_storage(); }

py::tuple report_result(const oracle::Report& report) {
  return py::make_tuple(report.to_json().dump(), report.to_text());
}

PYBIND11_MODULE(_core, m) {
  m.doc() = "dsa-oracle's C++ library (the package dsa_oracle wraps it)";
  invalid_input_storage() = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("dsa_oracle.InvalidInput",
                                "Bad input: the message names the argument and what was expected "
                                "(the C++ dsa::InvalidInput); `argument` holds the name.",
                                PyExc_ValueError, nullptr));
  unsupported_storage() = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("dsa_oracle.Unsupported",
                                "A call an implementation does not take (a launch that returns False): "
                                "counted apart, never as a pass.",
                                PyExc_Exception, nullptr));
  m.attr("InvalidInput") = invalid_input_storage();
  m.attr("Unsupported") = unsupported_storage();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidInput& e) {
      py::object error = invalid_input_storage()(e.what());
      error.attr("argument") = e.argument();
      PyErr_SetObject(invalid_input_storage().ptr(), error.ptr());
    } catch (const Unsupported& e) {
      PyErr_SetString(unsupported_storage().ptr(), e.what());
    }
  });

  m.def("profile_names", &profile_names, "The arithmetic profiles (docs/profiles.md)");
  m.def("profile_info", &profile_info, py::arg("name"), "A profile's model, formats and precisions");

  bind_reference(m);
  bind_oracle(m);
  bind_golden(m);
  bind_fuzz(m);
}

}  // namespace dsa::python
