#include "arrays.hpp"

#include <cstring>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa::python {
namespace {

using dataset::Dtype;

py::array as_array(const std::string& name, const py::handle& value) {
  if (!py::isinstance<py::array>(value))
    throw InvalidInput(name, std::string("expected a numpy array or a torch tensor, got ") +
                                 std::string(py::str(py::type::of(value).attr("__name__"))));
  return py::reinterpret_borrow<py::array>(value);
}

std::string numpy_name(const py::array& a) { return std::string(py::str(a.dtype())); }

}  // namespace

std::string describe_array(const py::array& array) {
  std::string shape = "(";
  for (py::ssize_t i = 0; i < array.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(array.shape(i));
  shape += array.ndim() == 1 ? ",)" : ")";
  return numpy_name(array) + " array of shape " + shape;
}

Dtype schema_dtype(const std::string& name, const py::array& a, const std::string& dtype) {
  const char kind = a.dtype().kind();
  const py::ssize_t size = a.itemsize();
  if (a.dtype().attr("byteorder").cast<std::string>() == ">")
    throw InvalidInput(name, describe_array(a) + " is big-endian; the schema's tensors are little-endian");
  Dtype natural;
  if (kind == 'u' && size == 1) natural = Dtype::U8;
  else if (kind == 'u' && size == 2) natural = Dtype::BF16;
  else if (kind == 'f' && size == 4) natural = Dtype::F32;
  else if (kind == 'i' && size == 4) natural = Dtype::I32;
  else if (kind == 'i' && size == 8) natural = Dtype::I64;
  else if (kind == 'f' && size == 8) natural = Dtype::F64;
  else
    throw InvalidInput(name, describe_array(a) +
                                 ": not an element type of the schema (uint8 or torch.float8_e4m3fn/fnuz codes, "
                                 "uint16 or torch.bfloat16 bits, float32, int32, int64, float64)");
  if (dtype.empty()) return natural;
  const Dtype wanted = dataset::parse_dtype(dtype);
  if (dataset::dtype_size(wanted) != size_t(size))
    throw InvalidInput(name, describe_array(a) + " cannot hold " + dtype + " elements");
  return wanted;
}

py::array contiguous(const py::array& array) {
  if (array.flags() & py::array::c_style) return array;
  return py::module_::import("numpy").attr("ascontiguousarray")(array);
}

dataset::Tensor tensor_from_array(const std::string& name, const py::handle& value, const std::string& dtype) {
  const py::array a = contiguous(as_array(name, value));
  dataset::Tensor t;
  t.dtype = schema_dtype(name, a, dtype);
  for (py::ssize_t i = 0; i < a.ndim(); ++i) t.shape.push_back(a.shape(i));
  const auto* data = static_cast<const uint8_t*>(a.data());
  t.bytes.assign(data, data + a.nbytes());
  return t;
}

dataset::Safetensors safetensors_from_dicts(const py::dict& tensors, const py::dict& metadata) {
  dataset::Safetensors st;
  for (const auto& [key, value] : tensors) {
    const std::string name = py::str(key);
    if (value.is_none()) continue;  // an optional input left out
    std::string dtype;
    py::handle array = value;
    if (py::isinstance<py::tuple>(value)) {
      const auto pair = py::reinterpret_borrow<py::tuple>(value);
      array = pair[0];
      if (!pair[1].is_none()) dtype = py::str(pair[1]);
    }
    dataset::Tensor t = tensor_from_array(name, array, dtype);
    st.put(name, t.dtype, std::move(t.shape), std::move(t.bytes));
  }
  for (const auto& [key, value] : metadata) {
    if (value.is_none()) continue;
    st.metadata[py::str(key)] = py::str(value);
  }
  return st;
}

py::array array_from_tensor(const dataset::Tensor& t) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  py::dtype dtype;
  switch (t.dtype) {
    case Dtype::F8_E4M3:
    case Dtype::U8: dtype = py::dtype::of<uint8_t>(); break;
    case Dtype::BF16: dtype = py::dtype::of<uint16_t>(); break;
    case Dtype::F32: dtype = py::dtype::of<float>(); break;
    case Dtype::I32: dtype = py::dtype::of<int32_t>(); break;
    case Dtype::I64: dtype = py::dtype::of<int64_t>(); break;
    case Dtype::F64: dtype = py::dtype::of<double>(); break;
  }
  py::array a(dtype, shape);
  if (!t.bytes.empty()) std::memcpy(a.mutable_data(), t.bytes.data(), t.bytes.size());
  return a;
}

py::dict dict_from_safetensors(const dataset::Safetensors& st) {
  py::dict out;
  for (const auto& [name, t] : st.tensors())
    out[py::str(name)] = py::make_tuple(array_from_tensor(t), std::string(dataset::to_string(t.dtype)));
  return out;
}

Logits logits_from_array(const std::string& name, const py::handle& value, const std::string& dtype) {
  const py::array a = contiguous(as_array(name, value));
  const Dtype d = schema_dtype(name, a, dtype);
  if (a.ndim() != 2 || (d != Dtype::F32 && d != Dtype::BF16))
    throw InvalidInput(name, describe_array(a) + ", expected a float32 (or bf16: uint16 bits, torch.bfloat16) array "
                                                 "of shape (rows, width)");
  Logits logits;
  logits.rows = a.shape(0);
  logits.width = a.shape(1);
  logits.values.resize(size_t(logits.rows * logits.width));
  if (d == Dtype::F32) {
    std::memcpy(logits.values.data(), a.data(), logits.values.size() * sizeof(float));
  } else {
    const auto* bits = static_cast<const uint16_t*>(a.data());
    for (size_t i = 0; i < logits.values.size(); ++i) logits.values[i] = bf16_to_float(bits[i]);
  }
  return logits;
}

IndexArray indices_from_array(const std::string& name, const py::handle& value) {
  const py::array a = contiguous(as_array(name, value));
  if (a.dtype().kind() != 'i' || a.itemsize() != 4 || a.ndim() < 1 || a.ndim() > 2)
    throw InvalidInput(name, describe_array(a) + ", expected an int32 array of shape (rows, slots)");
  IndexArray out;
  out.rows = a.shape(0);
  out.cols = a.ndim() == 2 ? a.shape(1) : 1;
  const auto* data = static_cast<const int32_t*>(a.data());
  out.values.assign(data, data + out.rows * out.cols);
  return out;
}

std::vector<int64_t> lengths_from_array(const std::string& name, const py::handle& value) {
  const py::array a = contiguous(as_array(name, value));
  if (a.dtype().kind() != 'i' || (a.itemsize() != 4 && a.itemsize() != 8) || a.ndim() != 1)
    throw InvalidInput(name, describe_array(a) + ", expected a 1-D int32 or int64 array (one entry per row)");
  std::vector<int64_t> out(size_t(a.shape(0)));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = a.itemsize() == 4 ? static_cast<const int32_t*>(a.data())[i] : static_cast<const int64_t*>(a.data())[i];
  return out;
}

}  // namespace dsa::python
