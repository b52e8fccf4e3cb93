// Reading and writing the safetensors container (see safetensors.hpp).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "dsa/checked.hpp"
#include "dsa/dataset/json_input.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/dataset/temp_files.hpp"
#include "dsa/error.hpp"
#include "dsa/input_file.hpp"

namespace dsa::dataset {
namespace {

using nlohmann::json;

struct Entry {
  std::string name;
  Dtype dtype;
  Shape shape;
  uint64_t begin, end;
};

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t unsigned_field(const json& v, const std::string& origin, const std::string& what) {
  if (!v.is_number_unsigned()) throw InvalidInput(origin, what + " is not a non-negative integer: " + json_excerpt(v));
  return v.get<uint64_t>();
}

Entry parse_entry(const std::string& name, const json& info, const std::string& origin) {
  const std::string where = "tensor '" + excerpt(name) + "'";
  if (!info.is_object()) throw InvalidInput(origin, where + " is not an object: " + json_excerpt(info));
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!info.contains(key)) throw InvalidInput(origin, where + " has no \"" + key + "\"");
  }
  Entry e{name, Dtype::U8, {}, 0, 0};
  if (!info["dtype"].is_string()) throw InvalidInput(origin, where + " dtype is not a string");
  try {
    e.dtype = parse_dtype(info["dtype"].get<std::string>());
  } catch (const InvalidInput& bad) {
    throw InvalidInput(origin, where + ": " + bad.what());
  }
  if (!info["shape"].is_array()) throw InvalidInput(origin, where + " shape is not an array");
  if (info["shape"].size() > 64) throw InvalidInput(origin, where + " shape has " + std::to_string(info["shape"].size()) + " extents");
  for (const json& extent : info["shape"]) {
    const uint64_t x = unsigned_field(extent, origin, where + " shape extent");
    if (x > uint64_t(std::numeric_limits<int64_t>::max()))
      throw InvalidInput(origin, where + " shape extent " + std::to_string(x) + " is past a 64-bit size");
    e.shape.push_back(int64_t(x));
  }
  // Past int64 the shape cannot match any offsets: report it as the mismatch it is.
  int64_t bytes = -1;
  try {
    bytes = checked_mul<int64_t>(checked_product<int64_t>(e.shape, name), int64_t(dtype_size(e.dtype)), name);
  } catch (const InvalidInput&) {
  }
  const json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    throw InvalidInput(origin, where + " data_offsets is not a pair [begin, end]: " + json_excerpt(offsets));
  }
  e.begin = unsigned_field(offsets[0], origin, where + " data_offsets begin");
  e.end = unsigned_field(offsets[1], origin, where + " data_offsets end");
  if (e.end < e.begin) {
    throw InvalidInput(origin, where + " data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                                   ") are reversed");
  }
  if (bytes < 0 || uint64_t(bytes) != e.end - e.begin) {
    throw InvalidInput(origin, where + " shape " + shape_string(e.shape) + " of " + std::string(to_string(e.dtype)) +
                                   " disagrees with its " + std::to_string(e.end - e.begin) + " data bytes");
  }
  return e;
}

}  // namespace

Safetensors parse_safetensors(std::span<const uint8_t> file, const std::string& origin) {
  if (file.size() < 8) {
    throw InvalidInput(origin, "truncated: " + std::to_string(file.size()) + " bytes, the header length alone takes 8");
  }
  const uint64_t header_bytes = read_u64_le(file.data());
  if (header_bytes > kMaxHeaderBytes) {
    throw InvalidInput(origin, "header length " + std::to_string(header_bytes) + " exceeds the limit of " +
                                   std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (header_bytes > file.size() - 8) {
    throw InvalidInput(origin, "truncated: header length " + std::to_string(header_bytes) + " but only " +
                                   std::to_string(file.size() - 8) + " bytes follow it");
  }
  const std::string_view text(reinterpret_cast<const char*>(file.data() + 8), size_t(header_bytes));
  const json header = parse_json(text, origin, /*reject_duplicates=*/true);
  if (!header.is_object()) throw InvalidInput(origin, "header is not a JSON object");
  const std::span<const uint8_t> data = file.subspan(8 + size_t(header_bytes));

  Safetensors st;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) throw InvalidInput(origin, "__metadata__ is not an object");
      for (const auto& [key, value] : info.items()) {
        if (!value.is_string()) {
          throw InvalidInput(origin, "metadata '" + excerpt(key) + "' is not a string: " + json_excerpt(value));
        }
        st.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(name, info, origin));
  }

  // The tensors must tile [0, data.size()) exactly.
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  uint64_t covered = 0;
  for (const Entry& e : entries) {
    const std::string range = "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ")";
    if (e.end > data.size()) {
      throw InvalidInput(origin, "tensor '" + excerpt(e.name) + "' data_offsets " + range + " run past the " +
                                     std::to_string(data.size()) + " data bytes (file truncated?)");
    }
    if (e.begin < covered)
      throw InvalidInput(origin, "tensor '" + excerpt(e.name) + "' data_offsets " + range + " overlap another tensor");
    if (e.begin > covered) {
      throw InvalidInput(origin, "gap of " + std::to_string(e.begin - covered) + " bytes before tensor '" + excerpt(e.name) +
                                     "' at data offset " + std::to_string(covered));
    }
    covered = e.end;
  }
  if (covered != data.size()) {
    throw InvalidInput(origin, std::to_string(data.size() - covered) + " data bytes after the last tensor (at offset " +
                                   std::to_string(covered) + ")");
  }
  for (Entry& e : entries) {
    st.put(e.name, e.dtype, std::move(e.shape),
           std::vector<uint8_t>(data.begin() + ptrdiff_t(e.begin), data.begin() + ptrdiff_t(e.end)));
  }
  return st;
}

std::vector<uint8_t> serialize_safetensors(const Safetensors& st) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!st.metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [key, value] : st.metadata) meta[key] = value;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : st.tensors()) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["dtype"] = std::string(to_string(t.dtype));
    entry["shape"] = t.shape;
    entry["data_offsets"] = {offset, offset + t.bytes.size()};
    header[name] = entry;
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned, as safetensors writes it
  std::vector<uint8_t> out(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(text.size()) >> (8 * i));
  std::memcpy(out.data() + 8, text.data(), text.size());
  uint8_t* data = out.data() + 8 + text.size();
  for (const auto& [name, t] : st.tensors()) {
    if (!t.bytes.empty()) std::memcpy(data, t.bytes.data(), t.bytes.size());
    data += t.bytes.size();
  }
  return out;
}

Safetensors read_safetensors(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw InvalidInput(path, "is a folder, not a safetensors file");
  return parse_safetensors(read_input_file(path, path), path);
}

void write_file_atomically(const std::string& path, std::span<const uint8_t> bytes) {
  const std::filesystem::path target(path);
  if (std::filesystem::is_directory(target)) throw InvalidInput(path, "is a folder: cannot write a file in its place");
  const std::filesystem::path temp = temp_file_for(path);
  // Registered while it exists: a SIGINT/SIGTERM handler removes it.
  register_temp_file(temp.string());
  const auto discard = [&] {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    unregister_temp_file(temp.string());
  };
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      const std::string why = std::strerror(errno);
      discard();
      throw InvalidInput(path, "cannot create " + temp.string() + ": " + why);
    }
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    out.flush();
    if (!out) {
      discard();
      throw InvalidInput(path, "cannot write " + temp.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    discard();
    throw InvalidInput(path, "cannot rename the temporary file into place: " + ec.message());
  }
  unregister_temp_file(temp.string());
}

void write_safetensors(const std::string& path, const Safetensors& st) {
  write_file_atomically(path, serialize_safetensors(st));
}

}  // namespace dsa::dataset
