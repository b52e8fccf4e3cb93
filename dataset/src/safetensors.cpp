// The in-memory safetensors content: dtypes, tensors, checked typed access.
#include "dsa/dataset/safetensors.hpp"

#include <bit>
#include <cstring>
#include <limits>

#include "dsa/error.hpp"

namespace dsa::dataset {
namespace {

static_assert(std::endian::native == std::endian::little, "tensor bytes are copied as little-endian");

constexpr Dtype kAllDtypes[] = {Dtype::F8_E4M3, Dtype::U8, Dtype::BF16, Dtype::F32, Dtype::I32, Dtype::I64, Dtype::F64};

template <class T>
std::vector<uint8_t> to_bytes(std::span<const T> values) {
  std::vector<uint8_t> bytes(values.size_bytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <class T>
std::vector<T> from_bytes(const Tensor& t) {
  std::vector<T> values(t.bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), t.bytes.data(), t.bytes.size());
  return values;
}

bool shape_matches(const Shape& actual, const Shape& expected) {
  if (actual.size() != expected.size()) return false;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (expected[i] != -1 && expected[i] != actual[i]) return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(Dtype d) {
  switch (d) {
    case Dtype::F8_E4M3: return "F8_E4M3";
    case Dtype::U8: return "U8";
    case Dtype::BF16: return "BF16";
    case Dtype::F32: return "F32";
    case Dtype::I32: return "I32";
    case Dtype::I64: return "I64";
    case Dtype::F64: return "F64";
  }
  return "?";
}

Dtype parse_dtype(std::string_view name) {
  for (Dtype d : kAllDtypes) {
    if (to_string(d) == name) return d;
  }
  throw InvalidInput("dtype", "unsupported dtype '" + excerpt(name) +
                                  "' (supported: F8_E4M3, U8, BF16, F32, I32, I64, F64)");
}

size_t dtype_size(Dtype d) {
  switch (d) {
    case Dtype::F8_E4M3:
    case Dtype::U8: return 1;
    case Dtype::BF16: return 2;
    case Dtype::F32:
    case Dtype::I32: return 4;
    case Dtype::I64:
    case Dtype::F64: return 8;
  }
  return 0;
}

int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void Safetensors::put(const std::string& name, Dtype dtype, Shape shape, std::vector<uint8_t> bytes) {
  if (name == "__metadata__") throw InvalidInput(name, "is reserved for the metadata map");
  if (contains(name)) throw InvalidInput(name, "a tensor of this name is already present");
  int64_t count = 1;
  for (int64_t e : shape) {
    if (e < 0) throw InvalidInput(name, "negative extent in shape " + shape_string(shape));
    if (e != 0 && count > std::numeric_limits<int64_t>::max() / 8 / e) {
      throw InvalidInput(name, "shape " + shape_string(shape) + " overflows");
    }
    count *= e;
  }
  if (uint64_t(count) * dtype_size(dtype) != bytes.size()) {
    throw InvalidInput(name, "shape " + shape_string(shape) + " of " + std::string(to_string(dtype)) + " needs " +
                                 std::to_string(uint64_t(count) * dtype_size(dtype)) + " bytes, got " +
                                 std::to_string(bytes.size()));
  }
  tensors_.emplace(name, Tensor{dtype, std::move(shape), std::move(bytes)});
}

void Safetensors::put_f32(const std::string& name, Shape shape, std::span<const float> values) {
  put(name, Dtype::F32, std::move(shape), to_bytes(values));
}
void Safetensors::put_f64(const std::string& name, Shape shape, std::span<const double> values) {
  put(name, Dtype::F64, std::move(shape), to_bytes(values));
}
void Safetensors::put_i32(const std::string& name, Shape shape, std::span<const int32_t> values) {
  put(name, Dtype::I32, std::move(shape), to_bytes(values));
}
void Safetensors::put_i64(const std::string& name, Shape shape, std::span<const int64_t> values) {
  put(name, Dtype::I64, std::move(shape), to_bytes(values));
}
void Safetensors::put_u8(const std::string& name, Shape shape, std::span<const uint8_t> values) {
  put(name, Dtype::U8, std::move(shape), to_bytes(values));
}
void Safetensors::put_f8_e4m3(const std::string& name, Shape shape, std::span<const uint8_t> codes) {
  put(name, Dtype::F8_E4M3, std::move(shape), to_bytes(codes));
}
void Safetensors::put_bf16(const std::string& name, Shape shape, std::span<const uint16_t> bits) {
  put(name, Dtype::BF16, std::move(shape), to_bytes(bits));
}

std::vector<std::string> Safetensors::names() const {
  std::vector<std::string> out;
  for (const auto& [name, tensor] : tensors_) out.push_back(name);
  return out;
}

const Tensor& Safetensors::at(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw InvalidInput(name, "missing tensor");
  return it->second;
}

const Tensor& Safetensors::require(const std::string& name, Dtype dtype) const {
  const Tensor& t = at(name);
  if (t.dtype != dtype) {
    throw InvalidInput(name, "dtype is " + std::string(to_string(t.dtype)) + ", expected " + std::string(to_string(dtype)));
  }
  return t;
}

const Tensor& Safetensors::require(const std::string& name, Dtype dtype, const Shape& shape) const {
  const Tensor& t = require(name, dtype);
  if (!shape_matches(t.shape, shape)) {
    throw InvalidInput(name, "shape is " + shape_string(t.shape) + ", expected " + shape_string(shape) +
                                 " (-1: any extent)");
  }
  return t;
}

std::vector<float> Safetensors::f32(const std::string& name) const { return from_bytes<float>(require(name, Dtype::F32)); }
std::vector<float> Safetensors::f32(const std::string& name, const Shape& shape) const {
  return from_bytes<float>(require(name, Dtype::F32, shape));
}
std::vector<double> Safetensors::f64(const std::string& name) const { return from_bytes<double>(require(name, Dtype::F64)); }
std::vector<double> Safetensors::f64(const std::string& name, const Shape& shape) const {
  return from_bytes<double>(require(name, Dtype::F64, shape));
}
std::vector<int32_t> Safetensors::i32(const std::string& name) const { return from_bytes<int32_t>(require(name, Dtype::I32)); }
std::vector<int32_t> Safetensors::i32(const std::string& name, const Shape& shape) const {
  return from_bytes<int32_t>(require(name, Dtype::I32, shape));
}
std::vector<int64_t> Safetensors::i64(const std::string& name) const { return from_bytes<int64_t>(require(name, Dtype::I64)); }
std::vector<int64_t> Safetensors::i64(const std::string& name, const Shape& shape) const {
  return from_bytes<int64_t>(require(name, Dtype::I64, shape));
}
std::vector<uint8_t> Safetensors::u8(const std::string& name) const { return require(name, Dtype::U8).bytes; }
std::vector<uint8_t> Safetensors::u8(const std::string& name, const Shape& shape) const {
  return require(name, Dtype::U8, shape).bytes;
}
std::vector<uint16_t> Safetensors::bf16(const std::string& name) const {
  return from_bytes<uint16_t>(require(name, Dtype::BF16));
}
std::vector<uint16_t> Safetensors::bf16(const std::string& name, const Shape& shape) const {
  return from_bytes<uint16_t>(require(name, Dtype::BF16, shape));
}

std::vector<uint8_t> Safetensors::fp8_bytes(const std::string& name) const {
  return at(name).dtype == Dtype::U8 ? u8(name) : require(name, Dtype::F8_E4M3).bytes;
}
std::vector<uint8_t> Safetensors::fp8_bytes(const std::string& name, const Shape& shape) const {
  return at(name).dtype == Dtype::U8 ? u8(name, shape) : require(name, Dtype::F8_E4M3, shape).bytes;
}

const std::string& Safetensors::meta(const std::string& key) const {
  const auto it = metadata.find(key);
  if (it == metadata.end()) throw InvalidInput(key, "missing metadata key");
  return it->second;
}

}  // namespace dsa::dataset
