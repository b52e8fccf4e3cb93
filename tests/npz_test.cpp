// The .npy / .npz reader: images built here byte by byte (both header
// versions, every dtype, stored and deflated zip members, zip64 records as
// numpy writes them), the errors, and one real archive of data/.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "build_paths.hpp"
#include "dsa/dataset/npz.hpp"
#include "dsa/error.hpp"

namespace dsa::dataset {
namespace {

using Bytes = std::vector<uint8_t>;

void put(Bytes& b, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(uint8_t(v >> (8 * i)));
}

Bytes npy(const std::string& descr, const std::string& shape, const Bytes& data, int version = 1,
          const std::string& fortran = "False") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(version), 0};
  put(b, header.size(), version == 1 ? 2 : 4);
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

template <typename T>
Bytes raw(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(Npy, ParsesEveryDtypeAndBothHeaderVersions) {
  const auto f = parse_npy(npy("<f4", "(2, 3)", raw<float>({1, 2, 3, 4, 5, -6.5f})), "f");
  EXPECT_EQ(f.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f.f32(), (std::vector<float>{1, 2, 3, 4, 5, -6.5f}));
  EXPECT_THROW(f.i32(), InvalidInput);

  const auto i = parse_npy(npy("<i4", "(4,)", raw<int32_t>({-1, 0, 7, 1 << 30}), 2), "i");
  EXPECT_EQ(i.i32(), (std::vector<int32_t>{-1, 0, 7, 1 << 30}));
  EXPECT_EQ(i.integers(), (std::vector<int64_t>{-1, 0, 7, 1 << 30}));

  const auto s = parse_npy(npy("<i8", "()", raw<int64_t>({1000})), "s");
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.integers(), (std::vector<int64_t>{1000}));

  const auto u = parse_npy(npy("|u1", "(1, 2, 1, 3)", Bytes{1, 2, 3, 250, 0, 9}), "u");
  EXPECT_EQ(u.u8(), (Bytes{1, 2, 3, 250, 0, 9}));
  EXPECT_EQ(u.integers()[3], 250);

  // numpy writes a str as <U n: UTF-32 code points, NUL padded.
  const auto text = parse_npy(npy("<U5", "()", raw<uint32_t>({'{', 0xE9, '}', 0, 0})), "meta");
  EXPECT_EQ(text.text(), "{\xC3\xA9}");
  const auto empty = parse_npy(npy("<f4", "(0, 4)", Bytes{}), "e");
  EXPECT_EQ(empty.size(), 0);
  EXPECT_TRUE(empty.f32().empty());
}

TEST(Npy, RejectsWhatItCannotRead) {
  const auto rejects = [](const Bytes& b) {
    try {
      parse_npy(b, "x");
      return false;
    } catch (const InvalidInput& e) {
      return e.argument() == "npz";
    }
  };
  Bytes bad_magic = npy("<f4", "(1,)", raw<float>({1}));
  bad_magic[1] = 'X';
  EXPECT_TRUE(rejects(bad_magic));
  EXPECT_TRUE(rejects(npy("<f4", "(2,)", raw<float>({1}))));                   // too few bytes
  EXPECT_TRUE(rejects(npy("<f4", "(1,)", raw<float>({1, 2}))));                // too many
  EXPECT_TRUE(rejects(npy(">f4", "(1,)", raw<float>({1}))));                   // big-endian
  EXPECT_TRUE(rejects(npy("<c8", "(1,)", Bytes(8))));                          // complex
  EXPECT_TRUE(rejects(npy("<f4", "(1,)", raw<float>({1}), 1, "True")));        // Fortran order
  EXPECT_TRUE(rejects(Bytes{0x93, 'N', 'U'}));
  Bytes truncated = npy("<f4", "(1,)", raw<float>({1}));
  truncated.resize(20);
  EXPECT_TRUE(rejects(truncated));
}

// Sizes from the header never wrap around and absurd widths are refused
// before anything is allocated (issue 11 §1).
TEST(Npy, RefusesSizesThatOverflowAndAbsurdWidths) {
  const auto message = [](const Bytes& b) {
    try {
      parse_npy(b, "x");
      return std::string("accepted");
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
  };
  // 2^32 x 2^32 elements of 4 bytes: the product wraps to 0 in 64 bits, as the empty data would match.
  EXPECT_NE(message(npy("<f4", "(4294967296, 4294967296)", Bytes{})).find("overflows"), std::string::npos);
  EXPECT_NE(message(npy("<f4", "(3037000500, 3037000500, 4)", Bytes{})).find("overflows"), std::string::npos);
  EXPECT_NE(message(npy("<U999999999", "()", Bytes{})).find("bytes per element"), std::string::npos);
  EXPECT_NE(message(npy("<U99999999999999", "()", Bytes{})).find("unsupported dtype"), std::string::npos);
  EXPECT_NE(message(npy("<f4 ", "(1,)", raw<float>({1}))).find("unsupported dtype"), std::string::npos);
  EXPECT_NE(message(npy("<f4", "(+1,)", raw<float>({1}))).find("bad shape"), std::string::npos);
  EXPECT_NE(message(npy("<f4", "(1L,)", raw<float>({1}))).find("bad shape"), std::string::npos);
  // A megabyte header quoted in a message comes back as an excerpt.
  std::string huge(1 << 20, 'z');
  EXPECT_LT(message(npy("<f4", "(" + huge + ")", Bytes{})).size(), 1000u);
}

// A zip of the given members as numpy's zipfile writes them: local headers with
// 0xFFFFFFFF sizes and a zip64 extra field, real sizes in the central directory.
Bytes zip(const std::vector<std::pair<std::string, Bytes>>& members, bool deflate) {
  Bytes out, central;
  for (const auto& [name, content] : members) {
    Bytes data = content;
    if (deflate) {
      z_stream z{};
      deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
      data.resize(deflateBound(&z, uLong(content.size())));
      z.next_in = const_cast<Bytef*>(content.data());
      z.avail_in = uInt(content.size());
      z.next_out = data.data();
      z.avail_out = uInt(data.size());
      EXPECT_EQ(::deflate(&z, Z_FINISH), Z_STREAM_END);
      data.resize(z.total_out);
      deflateEnd(&z);
    }
    const uint32_t crc = uint32_t(crc32(0, content.data(), uInt(content.size())));
    const size_t local = out.size();
    put(out, 0x04034b50, 4);
    put(out, 45, 2);
    put(out, 0, 2);
    put(out, deflate ? 8 : 0, 2);
    put(out, 0, 4);
    put(out, crc, 4);
    put(out, 0xFFFFFFFFu, 4);
    put(out, 0xFFFFFFFFu, 4);
    put(out, name.size(), 2);
    put(out, 20, 2);
    out.insert(out.end(), name.begin(), name.end());
    put(out, 1, 2);
    put(out, 16, 2);
    put(out, content.size(), 8);
    put(out, data.size(), 8);
    out.insert(out.end(), data.begin(), data.end());

    put(central, 0x02014b50, 4);
    put(central, 45, 2);
    put(central, 45, 2);
    put(central, 0, 2);
    put(central, deflate ? 8 : 0, 2);
    put(central, 0, 4);
    put(central, crc, 4);
    put(central, data.size(), 4);
    put(central, content.size(), 4);
    put(central, name.size(), 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, local, 4);
    central.insert(central.end(), name.begin(), name.end());
  }
  const size_t dir = out.size();
  out.insert(out.end(), central.begin(), central.end());
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, members.size(), 2);
  put(out, members.size(), 2);
  put(out, central.size(), 4);
  put(out, dir, 4);
  put(out, 0, 2);
  return out;
}

std::string write_temp(const Bytes& b, const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() / ("dsa_npz_test_" + name + ".npz");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  return path.string();
}

TEST(Npz, ReadsStoredAndDeflatedMembers) {
  std::vector<float> big(5000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i % 17) * 0.5f;
  const std::vector<std::pair<std::string, Bytes>> members = {
      {"a.npy", npy("<f4", "(5000,)", raw(big))}, {"b.npy", npy("<i4", "(2, 1)", raw<int32_t>({3, -4}))}};
  for (bool deflate : {false, true}) {
    const std::string path = write_temp(zip(members, deflate), deflate ? "deflate" : "stored");
    const NpzFile npz(path);
    EXPECT_EQ(npz.names(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(npz.at("a").f32(), big);
    EXPECT_EQ(npz.at("b").i32(), (std::vector<int32_t>{3, -4}));
    EXPECT_FALSE(npz.contains("c"));
    EXPECT_THROW(npz.at("c"), InvalidInput);
    std::filesystem::remove(path);
  }
}

TEST(Npz, DetectsDamage) {
  const std::vector<std::pair<std::string, Bytes>> members = {{"a.npy", npy("<i4", "(3,)", raw<int32_t>({1, 2, 3}))}};
  Bytes z = zip(members, false);
  // Flip a data byte: the CRC no longer matches.
  const size_t data_at = 30 + 5 + 20 + 64;  // local header, name, zip64 extra, npy header
  z[data_at] ^= 1;
  const std::string path = write_temp(z, "damaged");
  EXPECT_THROW(NpzFile{path}, InvalidInput);
  const std::string cut = write_temp(Bytes(z.begin(), z.begin() + 40), "cut");
  EXPECT_THROW(NpzFile{cut}, InvalidInput);
  EXPECT_THROW(NpzFile{"/nonexistent/file.npz"}, InvalidInput);
  std::filesystem::remove(path);
  std::filesystem::remove(cut);
}

TEST(Npz, RefusesClaimedSizesDeflateCannotHoldAndDuplicateMembers) {
  const std::vector<std::pair<std::string, Bytes>> members = {{"a.npy", npy("<i4", "(3,)", raw<int32_t>({1, 2, 3}))}};
  Bytes z = zip(members, true);
  // The central directory's uncompressed size (offset 24 of the entry) claims 4 GB from a few deflated bytes.
  const size_t eocd = z.size() - 22;
  const size_t dir = size_t(z[eocd + 16]) | size_t(z[eocd + 17]) << 8 | size_t(z[eocd + 18]) << 16;
  for (int i = 0; i < 4; ++i) z[dir + 24 + size_t(i)] = uint8_t(0xF0000000u >> (8 * i));
  const std::string lie = write_temp(z, "lie");
  try {
    NpzFile{lie};
    ADD_FAILURE() << "a member claiming 4 GB was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("more than deflate can pack"), std::string::npos) << e.what();
  }
  const std::string twice = write_temp(zip({members[0], members[0]}, false), "twice");
  try {
    NpzFile{twice};
    ADD_FAILURE() << "a member given twice was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("appears twice"), std::string::npos) << e.what();
  }
  std::filesystem::remove(lie);
  std::filesystem::remove(twice);
}

TEST(Npz, ReadsARealArchive) {
  const NpzFile npz(std::string(DSA_SOURCE_DIR) + "/data/deepgemm_sm90/c00_smoke_b2_n1.npz");
  EXPECT_EQ(npz.at("q_fp8").shape, (std::vector<int64_t>{2, 1, 64, 128}));
  EXPECT_EQ(npz.at("kv_cache").shape, (std::vector<int64_t>{25, 64, 1, 132}));
  EXPECT_EQ(npz.at("context_lens").i32(), (std::vector<int32_t>{300, 1000}));
  EXPECT_EQ(npz.at("max_context_len").integers(), (std::vector<int64_t>{1000}));
  const std::string meta = npz.at("meta").text();
  EXPECT_EQ(meta.rfind("{\"name\": \"c00_smoke_b2_n1\"", 0), 0u) << meta.substr(0, 80);
  EXPECT_EQ(meta.back(), '}');
}

}  // namespace
}  // namespace dsa::dataset
