// The zip container of .npz files (PKWARE APPNOTE 6.3): the end-of-central-
// directory record (and its zip64 form), the central directory, each member's
// local header, then the member stored (method 0) or raw-deflated (method 8,
// inflated with zlib). Sizes come from the central directory: numpy writes
// 0xFFFFFFFF in the local headers and the real sizes in zip64 extra fields.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "dsa/checked.hpp"
#include "dsa/dataset/npz.hpp"
#include "dsa/error.hpp"
#include "dsa/input_file.hpp"

namespace dsa::dataset {
namespace {

struct Reader {
  std::span<const uint8_t> bytes;
  const std::string& path;

  [[noreturn]] void fail(const std::string& what) const { throw InvalidInput("npz", path + ": " + what); }
  void need(size_t at, size_t n) const {
    if (at > bytes.size() || n > bytes.size() - at) fail("truncated zip structure at byte " + std::to_string(at));
  }
  uint64_t le(size_t at, int n) const {
    need(at, size_t(n));
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | bytes[at + size_t(i)];
    return v;
  }
};

constexpr uint32_t kEndOfCentralDir = 0x06054b50, kZip64EndLocator = 0x07064b50, kZip64End = 0x06064b50,
                   kCentralEntry = 0x02014b50, kLocalHeader = 0x04034b50;

// Deflate never packs more than 1032 bytes into one (RFC 1951: a 258-byte
// match costs at least 2 bits), so a larger claimed size is a lie, refused
// before anything is allocated.
constexpr uint64_t kMaxDeflateRatio = 1032;

std::vector<uint8_t> inflate_raw(const Reader& r, const uint8_t* src, size_t n, uint64_t out_size,
                                 const std::string& member) {
  if (out_size / kMaxDeflateRatio > n + 64)
    r.fail("member '" + excerpt(member) + "' claims " + std::to_string(out_size) + " bytes from " + std::to_string(n) +
           " deflated ones, more than deflate can pack");
  require_memory("npz", double(out_size), r.path + ": member '" + excerpt(member) + "'");
  std::vector<uint8_t> out(static_cast<size_t>(out_size));
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) r.fail("zlib init failed");
  z.next_in = const_cast<Bytef*>(src);
  z.next_out = out.data();
  // zlib counts in 32-bit uInt: feed both sides in pieces.
  constexpr size_t kPiece = size_t(1) << 30;
  size_t in_left = n, out_left = size_t(out_size);
  int rc = Z_OK;
  // Every Z_OK made progress; Z_BUF_ERROR means none is possible (input or room exhausted).
  while (rc == Z_OK) {
    if (z.avail_in == 0 && in_left > 0) {
      z.avail_in = uInt(std::min(in_left, kPiece));
      in_left -= z.avail_in;
    }
    if (z.avail_out == 0 && out_left > 0) {
      z.avail_out = uInt(std::min(out_left, kPiece));
      out_left -= z.avail_out;
    }
    rc = inflate(&z, Z_NO_FLUSH);
  }
  const uint64_t produced = uint64_t(z.total_out);
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != out_size)
    r.fail("member '" + excerpt(member) + "' does not inflate to its " + std::to_string(out_size) + " bytes");
  return out;
}

}  // namespace

NpzFile::NpzFile(const std::string& path) : path_(path) {
  if (std::filesystem::is_directory(path)) throw InvalidInput("npz", path + " is a folder, not an .npz file");
  const std::vector<uint8_t> bytes = read_input_file(path, "npz");
  parse_members(bytes);
}

NpzFile NpzFile::parse(std::span<const uint8_t> bytes, const std::string& origin) {
  NpzFile npz;
  npz.path_ = origin;
  npz.parse_members(bytes);
  return npz;
}

void NpzFile::parse_members(std::span<const uint8_t> bytes) {
  const Reader r{bytes, path_};

  // The end record is in the last 22 + 65535 bytes (its comment is at most 64 KiB).
  if (bytes.size() < 22) r.fail("too short for a zip archive");
  size_t eocd = std::string::npos;
  const size_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (size_t at = bytes.size() - 22 + 1; at-- > lowest;)
    if (r.le(at, 4) == kEndOfCentralDir) {
      eocd = at;
      break;
    }
  if (eocd == std::string::npos) r.fail("no zip end-of-central-directory record");
  uint64_t entries = r.le(eocd + 10, 2), dir_offset = r.le(eocd + 16, 4);
  if ((entries == 0xFFFF || dir_offset == 0xFFFFFFFFu) && eocd >= 20 && r.le(eocd - 20, 4) == kZip64EndLocator) {
    const uint64_t z64 = r.le(eocd - 20 + 8, 8);
    if (r.le(size_t(z64), 4) != kZip64End) r.fail("bad zip64 end record");
    entries = r.le(size_t(z64) + 32, 8);
    dir_offset = r.le(size_t(z64) + 48, 8);
  }

  // Each entry takes at least 46 bytes: a count past what the file can hold is a lie.
  if (entries > bytes.size() / 46) r.fail("central directory claims " + std::to_string(entries) + " entries");
  size_t at = size_t(dir_offset);
  for (uint64_t e = 0; e < entries; ++e) {
    if (r.le(at, 4) != kCentralEntry) r.fail("bad central directory entry " + std::to_string(e));
    const int method = int(r.le(at + 10, 2));
    const uint32_t crc = uint32_t(r.le(at + 16, 4));
    uint64_t packed = r.le(at + 20, 4), size = r.le(at + 24, 4);
    const size_t name_len = r.le(at + 28, 2), extra_len = r.le(at + 30, 2), comment_len = r.le(at + 32, 2);
    uint64_t local = r.le(at + 42, 4);
    r.need(at + 46, name_len + extra_len);
    const std::string name(reinterpret_cast<const char*>(bytes.data() + at + 46), name_len);
    // zip64 extra field: the 8-byte values replace, in order, those that read 0xFFFFFFFF.
    for (size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const uint64_t id = r.le(x, 2), len = r.le(x + 2, 2);
      size_t v = x + 4;
      if (id == 0x0001) {
        if (size == 0xFFFFFFFFu) size = r.le(v, 8), v += 8;
        if (packed == 0xFFFFFFFFu) packed = r.le(v, 8), v += 8;
        if (local == 0xFFFFFFFFu) local = r.le(v, 8), v += 8;
      }
      x += 4 + size_t(len);
    }
    at += 46 + name_len + extra_len + comment_len;

    if (r.le(size_t(local), 4) != kLocalHeader) r.fail("bad local header of member '" + excerpt(name) + "'");
    const size_t data_at = size_t(local) + 30 + r.le(size_t(local) + 26, 2) + r.le(size_t(local) + 28, 2);
    r.need(data_at, size_t(packed));
    std::vector<uint8_t> content;
    if (method == 0) {
      if (packed != size) r.fail("stored member '" + excerpt(name) + "' with different sizes");
      content.assign(bytes.begin() + std::ptrdiff_t(data_at), bytes.begin() + std::ptrdiff_t(data_at + packed));
    } else if (method == 8) {
      content = inflate_raw(r, bytes.data() + data_at, size_t(packed), size, name);
    } else {
      r.fail("member '" + excerpt(name) + "' uses compression method " + std::to_string(method) + " (only 0 and 8)");
    }
    if (uint32_t(crc32_z(0L, content.data(), content.size())) != crc)
      r.fail("CRC mismatch in member '" + excerpt(name) + "'");

    std::string key = name;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    if (arrays_.count(key)) r.fail("member '" + excerpt(name) + "' appears twice");
    arrays_.emplace(key, parse_npy(content, key));
  }
}

const NpyArray& NpzFile::at(const std::string& name) const {
  const auto it = arrays_.find(name);
  if (it == arrays_.end()) throw InvalidInput("npz", path_ + " has no array '" + name + "'");
  return it->second;
}

std::vector<std::string> NpzFile::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : arrays_) out.push_back(k);
  return out;
}

}  // namespace dsa::dataset
