// Arrays across the boundary: numpy arrays in and out of the library's
// tensors (the golden schema's element types), with the argument named in
// every error. torch tensors reach this file as numpy views (the package's
// _arrays.py: CPU memory is viewed in place, CUDA tensors copied to the host).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dsa/dataset/safetensors.hpp"
#include "dsa/logits.hpp"

namespace dsa::python {

namespace py = pybind11;

// The schema dtype a numpy array stands for: uint8 -> U8 (F8_E4M3 when
// `dtype` says so: torch.float8_e4m3fn), uint16 -> BF16, float32 -> F32,
// int32 -> I32, int64 -> I64, float64 -> F64. `dtype` may also name the
// schema dtype outright. Throws InvalidInput(name, ...) for anything else.
dataset::Dtype schema_dtype(const std::string& name, const py::array& array, const std::string& dtype);

// "int64 array of shape (2, 3)": how the caller's value is named in errors.
std::string describe_array(const py::array& array);

// A C-contiguous view of the array's memory: the array itself when it already
// is contiguous (no copy), else a contiguous copy.
py::array contiguous(const py::array& array);

// A tensor holding a copy of the array's bytes.
dataset::Tensor tensor_from_array(const std::string& name, const py::handle& value, const std::string& dtype);

// Tensors from {name: array or (array, dtype)}; metadata values become strings.
dataset::Safetensors safetensors_from_dicts(const py::dict& tensors, const py::dict& metadata);

// {name: (array, dtype name)} of every tensor (copies).
py::dict dict_from_safetensors(const dataset::Safetensors& st);
py::array array_from_tensor(const dataset::Tensor& t);

// An array owning `values` (moved, not copied).
template <class T>
py::array owned_array(std::vector<T>&& values, const std::vector<int64_t>& shape) {
  auto* holder = new std::vector<T>(std::move(values));
  py::capsule owner(holder, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  return py::array_t<T>(dims, holder->data(), owner);
}

// Logits [rows, width] from float32 values or bf16 bits (uint16, widened by a
// shift so that a bf16 poison pattern stays recognisable).
Logits logits_from_array(const std::string& name, const py::handle& value, const std::string& dtype = "");
// int32 [rows, cols] (cols = 1 for a 1-D array); other integer dtypes are refused.
struct IndexArray {
  std::vector<int32_t> values;
  int64_t rows = 0;
  int64_t cols = 0;
};
IndexArray indices_from_array(const std::string& name, const py::handle& value);
// A 1-D integer array (int32 or int64) as int64 values.
std::vector<int64_t> lengths_from_array(const std::string& name, const py::handle& value);

}  // namespace dsa::python
