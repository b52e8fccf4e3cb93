// The .npy format (numpy/lib/format.py): magic, version, header dict, data.
#include <algorithm>
#include <cstring>
#include <string>

#include "dsa/checked.hpp"
#include "dsa/dataset/npz.hpp"
#include "dsa/error.hpp"

namespace dsa::dataset {
namespace {

// Element widths past this are not arrays numpy writes for us (a U<n> string of 16 M code points).
constexpr int64_t kMaxItemSize = int64_t(1) << 26;
constexpr size_t kMaxDims = 64;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw InvalidInput("npz", "member '" + excerpt(name) + "': " + what);
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// The value text of `key` in the header dict literal, up to the next top-level ',' or '}'.
std::string dict_value(const std::string& header, const std::string& key, const std::string& name) {
  const std::string quoted[2] = {"'" + key + "'", "\"" + key + "\""};
  size_t at = std::string::npos;
  for (const auto& q : quoted)
    if ((at = header.find(q)) != std::string::npos) {
      at += q.size();
      break;
    }
  if (at == std::string::npos) fail(name, "header has no '" + key + "': " + excerpt(header));
  at = header.find(':', at);
  if (at == std::string::npos) fail(name, "malformed header: " + excerpt(header));
  ++at;
  int depth = 0;
  size_t end = at;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) fail(name, "malformed header: " + excerpt(header));
  }
  size_t b = header.find_first_not_of(" \t", at), e = header.find_last_not_of(" \t", end - 1);
  if (b == std::string::npos || e == std::string::npos || e < b || b >= end)
    fail(name, "empty '" + key + "' in header: " + excerpt(header));
  return header.substr(b, e - b + 1);
}

std::string unquote(const std::string& v, const std::string& name) {
  if (v.size() < 2 || (v.front() != '\'' && v.front() != '"') || v.back() != v.front())
    fail(name, "expected a quoted string, got " + excerpt(v));
  return v.substr(1, v.size() - 2);
}

std::vector<int64_t> parse_shape(const std::string& v, const std::string& name) {
  if (v.size() < 2 || v.front() != '(' || v.back() != ')') fail(name, "shape is not a tuple: " + excerpt(v));
  std::vector<int64_t> shape;
  size_t i = 1;
  while (i + 1 < v.size()) {
    while (i + 1 < v.size() && (v[i] == ' ' || v[i] == ',')) ++i;
    if (i + 1 >= v.size()) break;
    const size_t end = std::min(v.find_first_of(" ,)", i), v.size() - 1);
    const std::string digits = v.substr(i, end - i);
    if (!all_digits(digits) || digits.size() > 18) fail(name, "bad shape " + excerpt(v));
    if (shape.size() == kMaxDims) fail(name, "shape has more than " + std::to_string(kMaxDims) + " dimensions");
    shape.push_back(std::stoll(digits));
    i = end;
  }
  return shape;
}

template <typename T>
std::vector<T> copy_as(const NpyArray& a, char kind, int size, const char* type) {
  if (a.kind != kind || a.item_size != size)
    throw InvalidInput(a.name, std::string("expected ") + type + " elements, the array holds " + a.kind +
                                   std::to_string(a.item_size));
  std::vector<T> out(static_cast<size_t>(a.size()));
  if (!out.empty()) std::memcpy(out.data(), a.data.data(), out.size() * sizeof(T));
  return out;
}

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xF0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3F));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
}

}  // namespace

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<uint8_t> NpyArray::u8() const { return copy_as<uint8_t>(*this, 'u', 1, "u1"); }
std::vector<int32_t> NpyArray::i32() const { return copy_as<int32_t>(*this, 'i', 4, "i4"); }
std::vector<int64_t> NpyArray::i64() const { return copy_as<int64_t>(*this, 'i', 8, "i8"); }
std::vector<float> NpyArray::f32() const { return copy_as<float>(*this, 'f', 4, "f4"); }

std::vector<int64_t> NpyArray::integers() const {
  if (kind == 'i' && item_size == 8) return i64();
  std::vector<int64_t> out(static_cast<size_t>(size()));
  for (size_t i = 0; i < out.size(); ++i) {
    if (kind == 'u' && item_size == 1) {
      out[i] = data[i];
    } else if (kind == 'i' && item_size == 1) {
      out[i] = int8_t(data[i]);
    } else if (kind == 'i' && item_size == 4) {
      int32_t v;
      std::memcpy(&v, data.data() + 4 * i, 4);
      out[i] = v;
    } else {
      throw InvalidInput(name, std::string("expected integer elements, the array holds ") + kind +
                                   std::to_string(item_size));
    }
  }
  return out;
}

std::string NpyArray::text() const {
  if ((kind != 'U' && kind != 'S') || size() != 1)
    throw InvalidInput(name, std::string("expected a 0-d string, the array holds ") + kind +
                                 std::to_string(item_size) + " x " + std::to_string(size()));
  std::string s;
  if (kind == 'S') {
    s.assign(data.begin(), data.end());
  } else {
    for (size_t i = 0; i + 4 <= data.size(); i += 4) {
      uint32_t cp;
      std::memcpy(&cp, data.data() + i, 4);
      if (cp == 0) break;
      append_utf8(s, cp);
    }
  }
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

NpyArray parse_npy(std::span<const uint8_t> bytes, const std::string& name) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) fail(name, "not an .npy image (bad magic)");
  const int major = bytes[6];
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(name, "truncated header");
    header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
    offset = 12;
  } else {
    fail(name, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(bytes[7]));
  }
  if (header_len > bytes.size() - offset) fail(name, "truncated header");
  const std::string header(reinterpret_cast<const char*>(bytes.data() + offset), header_len);

  NpyArray a;
  a.name = name;
  const std::string descr = unquote(dict_value(header, "descr", name), name);
  if (dict_value(header, "fortran_order", name) != "False") fail(name, "Fortran-order arrays are not supported");
  a.shape = parse_shape(dict_value(header, "shape", name), name);
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|')) fail(name, "unsupported dtype '" + descr + "'");
  a.kind = descr[1];
  const std::string width = descr.substr(2);
  if (!all_digits(width) || width.size() > 9) fail(name, "unsupported dtype '" + excerpt(descr) + "'");
  const int64_t count = std::stoll(width);
  const bool numeric = (a.kind == 'u' && count == 1) || (a.kind == 'i' && (count == 1 || count == 4 || count == 8)) ||
                       (a.kind == 'f' && (count == 4 || count == 8));
  if (!numeric && a.kind != 'U' && a.kind != 'S') fail(name, "unsupported dtype '" + excerpt(descr) + "'");
  if (count <= 0) fail(name, "unsupported dtype '" + excerpt(descr) + "'");
  const int64_t item_size = a.kind == 'U' ? 4 * count : count;
  if (item_size > kMaxItemSize)
    fail(name, "dtype '" + excerpt(descr) + "' is " + std::to_string(item_size) + " bytes per element, past the " +
                   std::to_string(kMaxItemSize) + " this reader takes");
  a.item_size = int(item_size);

  const size_t have = bytes.size() - offset - header_len;
  int64_t need = -1;
  try {
    need = checked_mul<int64_t>(checked_product<int64_t>(a.shape, name), item_size, name);
  } catch (const InvalidInput&) {
    fail(name, "shape " + excerpt(dict_value(header, "shape", name)) + " of " + std::to_string(item_size) +
                   "-byte elements overflows a 64-bit size");
  }
  if (have != uint64_t(need))
    fail(name, "data holds " + std::to_string(have) + " bytes, shape and dtype need " + std::to_string(need));
  a.data.assign(bytes.begin() + std::ptrdiff_t(offset + header_len), bytes.end());
  return a;
}

}  // namespace dsa::dataset
