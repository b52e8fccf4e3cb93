// safetensors files: the container of the golden datasets (docs/golden-format.md).
//
// Layout: an unsigned 64-bit little-endian header length N, N bytes of JSON
// (an object: tensor name -> {"dtype", "shape", "data_offsets": [begin, end)},
// plus an optional "__metadata__" object of strings), then the data buffer,
// raw little-endian, offsets relative to its start. The tensors tile the buffer
// exactly: no gap, no overlap, nothing after the last one.
//
// The reader rejects every file that breaks these rules, with an InvalidInput
// whose argument is the file (or the `origin` given) and whose message names
// the tensor and the value at fault. Typed accessors throw InvalidInput whose
// argument is the tensor name.
//
// The writer is deterministic (same content -> same bytes on every machine):
// "__metadata__" first, then tensors in name order, data in the same order,
// the header padded with spaces to a multiple of 8 bytes.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dsa::dataset {

// Element types, named as safetensors names them. F8_E4M3 is OCP e4m3fn;
// e4m3fnuz bytes and raw cache pages travel as U8 (the metadata says which).
// BF16 values are their 16-bit patterns.
enum class Dtype : uint8_t { F8_E4M3, U8, BF16, F32, I32, I64, F64 };
std::string_view to_string(Dtype d);
// Throws InvalidInput("dtype", ...) for a name outside the enum.
Dtype parse_dtype(std::string_view name);
size_t dtype_size(Dtype d);

using Shape = std::vector<int64_t>;
// Product of the extents (1 for a scalar, shape {}).
int64_t element_count(const Shape& shape);
std::string shape_string(const Shape& shape);  // "[2, 3]"

struct Tensor {
  Dtype dtype = Dtype::U8;
  Shape shape;
  std::vector<uint8_t> bytes;  // element_count(shape) * dtype_size(dtype), little-endian
};

// Every tensor and the metadata of one file.
class Safetensors {
public:
  std::map<std::string, std::string> metadata;

  // Adds a tensor. Throws InvalidInput(name, ...) for a duplicate name, the
  // reserved name "__metadata__", a negative extent or a byte count that
  // disagrees with the shape.
  void put(const std::string& name, Dtype dtype, Shape shape, std::vector<uint8_t> bytes);
  void put_f32(const std::string& name, Shape shape, std::span<const float> values);
  void put_f64(const std::string& name, Shape shape, std::span<const double> values);
  void put_i32(const std::string& name, Shape shape, std::span<const int32_t> values);
  void put_i64(const std::string& name, Shape shape, std::span<const int64_t> values);
  void put_u8(const std::string& name, Shape shape, std::span<const uint8_t> values);
  void put_f8_e4m3(const std::string& name, Shape shape, std::span<const uint8_t> codes);
  void put_bf16(const std::string& name, Shape shape, std::span<const uint16_t> bits);

  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  std::vector<std::string> names() const;  // sorted
  const std::map<std::string, Tensor>& tensors() const { return tensors_; }
  // Throws InvalidInput(name, "missing ...") when absent.
  const Tensor& at(const std::string& name) const;

  // The tensor, checked: its dtype must be `dtype` and, when `shape` is given,
  // its shape must match it, an extent of -1 matching any extent. Throws
  // InvalidInput(name, ...) saying what was expected and what was found.
  const Tensor& require(const std::string& name, Dtype dtype) const;
  const Tensor& require(const std::string& name, Dtype dtype, const Shape& shape) const;

  // Typed copies of a tensor's elements (same checks as require).
  std::vector<float> f32(const std::string& name) const;
  std::vector<float> f32(const std::string& name, const Shape& shape) const;
  std::vector<double> f64(const std::string& name) const;
  std::vector<double> f64(const std::string& name, const Shape& shape) const;
  std::vector<int32_t> i32(const std::string& name) const;
  std::vector<int32_t> i32(const std::string& name, const Shape& shape) const;
  std::vector<int64_t> i64(const std::string& name) const;
  std::vector<int64_t> i64(const std::string& name, const Shape& shape) const;
  std::vector<uint8_t> u8(const std::string& name) const;
  std::vector<uint8_t> u8(const std::string& name, const Shape& shape) const;
  std::vector<uint16_t> bf16(const std::string& name) const;
  std::vector<uint16_t> bf16(const std::string& name, const Shape& shape) const;
  // e4m3fn bytes: F8_E4M3, or U8 (issue 6: "e4m3fn bytes may come as F8_E4M3 or U8").
  std::vector<uint8_t> fp8_bytes(const std::string& name) const;
  std::vector<uint8_t> fp8_bytes(const std::string& name, const Shape& shape) const;

  // A metadata value; throws InvalidInput(key, "missing metadata key ...") when absent.
  const std::string& meta(const std::string& key) const;

private:
  std::map<std::string, Tensor> tensors_;
};

// Header lengths above this are rejected before anything is allocated (the
// limit of the reference implementation, huggingface/safetensors).
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Parses a whole file image. `origin` names it in errors (the argument of the InvalidInput).
Safetensors parse_safetensors(std::span<const uint8_t> file, const std::string& origin);
// The file image of `st` (deterministic).
std::vector<uint8_t> serialize_safetensors(const Safetensors& st);

// Reads and parses a file; the path names it in errors.
Safetensors read_safetensors(const std::string& path);
// Writes to a temporary name in the same folder, then renames it over `path`,
// so an interrupted run never leaves a half file under the real name. Throws
// InvalidInput(path, ...) when the file cannot be written.
void write_safetensors(const std::string& path, const Safetensors& st);
// The same atomic write for any bytes (manifests, reports).
void write_file_atomically(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace dsa::dataset
