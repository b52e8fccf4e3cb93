// The parts of dsa_oracle._core, one file each; module.cpp assembles them.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "dsa/oracle/report.hpp"

namespace dsa::python {

namespace py = pybind11;

void bind_reference(py::module_& m);
void bind_oracle(py::module_& m);
void bind_golden(py::module_& m);
void bind_fuzz(py::module_& m);

// dsa_oracle.Unsupported: what a Python kernel raises for a call it does not take.
py::object unsupported_type();

// A report as Python receives it: (JSON text of schema dsa-oracle/report/1, the readable table).
py::tuple report_result(const oracle::Report& report);

}  // namespace dsa::python
