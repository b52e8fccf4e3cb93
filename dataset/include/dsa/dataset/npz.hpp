// Reading numpy's .npy arrays and .npz archives (np.save / np.savez /
// np.savez_compressed), for data made outside the project.
//
// An .npz is a zip archive of .npy members, stored or deflated, with the
// zip64 records numpy writes. An .npy holds a magic string, a version (1.x:
// 16-bit header length, 2.x / 3.x: 32-bit), a Python dict literal
// {'descr': ..., 'fortran_order': ..., 'shape': (...)} and the raw C-order data.
// Supported dtypes: u1, i1, i4, i8, f4, f8 (little-endian or '|'), and the
// string types U<n> (UTF-32) and S<n> (bytes). Every malformed input throws
// InvalidInput naming the file and the member.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace dsa::dataset {

struct NpyArray {
  std::string name;            // the member's name without ".npy" (for messages)
  char kind = 0;               // numpy kind: 'u', 'i', 'f', 'U', 'S'
  int item_size = 0;           // bytes per element (U<n>: 4 n)
  std::vector<int64_t> shape;  // () for a scalar
  std::vector<uint8_t> data;   // element bytes, C order, little-endian

  int64_t size() const;  // number of elements (1 for a scalar)
  int ndim() const { return int(shape.size()); }
  // Typed copies; each throws InvalidInput(name, ...) when the dtype is another one.
  std::vector<uint8_t> u8() const;
  std::vector<int32_t> i32() const;
  std::vector<int64_t> i64() const;
  std::vector<float> f32() const;
  // An integer array (i1, u1, i4, i8) widened to int64.
  std::vector<int64_t> integers() const;
  // The text of a 0-d U<n> or S<n> array (UTF-32 code points written as UTF-8), NULs trimmed.
  std::string text() const;
};

// Parses one .npy image; `name` is used in messages.
NpyArray parse_npy(std::span<const uint8_t> bytes, const std::string& name);

class NpzFile {
public:
  // Reads and parses every member. Throws InvalidInput("npz", ...).
  explicit NpzFile(const std::string& path);
  // An archive already in memory; `origin` names it in messages.
  static NpzFile parse(std::span<const uint8_t> bytes, const std::string& origin);
  bool contains(const std::string& name) const { return arrays_.count(name) != 0; }
  // The member `name` (without ".npy"); throws InvalidInput("npz", ...) naming the file when absent.
  const NpyArray& at(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::string& path() const { return path_; }

private:
  NpzFile() = default;
  void parse_members(std::span<const uint8_t> bytes);
  std::string path_;
  std::map<std::string, NpyArray> arrays_;
};

}  // namespace dsa::dataset
