// Every dump of the shared data folder (../shared/data) and of data/hardware/
// against its model (what `dsa-oracle mma-check` runs): every H200 output must
// match bit for bit; in MMA-Sim's CDNA3 dump,
// the outputs decided by its zero-operand convention are judged apart and
// every other output must match. Also the reader's handling of bad files and
// of our own header, and the command's exit codes.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/mma/dump_check.hpp"
#include "mma_test_support.hpp"
#include "test_support.hpp"

namespace dsa::mma {
namespace {

namespace fs = std::filesystem;
using testing::mma_check;
using testing::write_temp;

struct KnownDump {
  Model model;
  DumpFormat format;
  int64_t zero_convention;  // outputs MMA-Sim's zero-operand convention decides (../shared/data/README.md)
};

// A headerless dump's model and format, from its name (a dump with a header names its own).
std::optional<KnownDump> known_dump(const std::string& name) {
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  const DumpFormat format = has("chain") ? DumpFormat::chain : DumpFormat::single;
  if (has("mmasim_cdna3_mfma_f32_32x32x16")) return KnownDump{Model::cdna3_mfma_f32_32x32x16_fp8, format, 1681};
  if (has("mma_sync")) return KnownDump{Model::sm90_mma_sync_e4m3, format, 0};
  if (has("wgmma")) return KnownDump{Model::sm90_wgmma_e4m3, format, 0};
  return std::nullopt;
}

constexpr const char* kSharedDumps[] = {"h200_mma_sync_m16n8k32_e4m3.bin", "h200_wgmma_m64n8k32_e4m3.bin",
                                        "h200_wgmma_chain_k128_e4m3.bin", "mmasim_cdna3_mfma_f32_32x32x16_fp8_fp8.bin"};

fs::path shared_dir() { return test::shared_data_dir(); }
fs::path hardware_dir() { return fs::path(test::source_dir()) / "data" / "hardware"; }
fs::path folder(const std::string& where) { return where == "shared" ? shared_dir() : hardware_dir(); }

// Every dump to check, as NAME@shared or NAME@hardware: the shared ones (listed
// by name, so that a missing folder shows as skipped tests, not as no tests),
// whatever else the shared folder holds, and the project's own H200 runs.
std::vector<std::string> dump_files() {
  std::vector<std::string> files;
  for (const char* name : kSharedDumps) files.push_back(std::string(name) + "@shared");
  for (const char* where : {"shared", "hardware"}) {
    const fs::path d = folder(where);
    if (!fs::is_directory(d)) continue;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".bin") files.push_back(e.path().filename().string() + "@" + where);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class EveryDump : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryDump, MatchesItsModel) {
  const std::string name = GetParam().substr(0, GetParam().find('@'));
  const std::string where = GetParam().substr(GetParam().find('@') + 1);
  if (where == "shared") DSA_SKIP_WITHOUT_SHARED_DATA();
  const fs::path path = folder(where) / name;
  ASSERT_TRUE(fs::is_regular_file(path)) << path << " is missing";
  const auto bytes = read_bytes(path);
  const bool has_header = bytes.size() >= 8 && std::memcmp(bytes.data(), DumpHeader::kMagic, 8) == 0;
  const auto known = known_dump(name);
  ASSERT_TRUE(has_header || known) << name << ": a headerless dump this test cannot name; extend known_dump()";
  // The H200 writes one NaN, 0x7fffffff: its dumps are held to the bits of NaNs too.
  const bool h200 = name.find("mmasim") == std::string::npos;
  std::optional<DumpCheckOptions> options;
  if (!has_header && h200) {
    options = default_check_options(known->model);
    options->nan_bits_exact = true;
  }
  const DumpCheck r = has_header ? check_dump(path.string(), std::nullopt, std::nullopt)
                                 : check_dump(path.string(), known->model, known->format, options);
  EXPECT_GT(r.total.total, 0) << name;
  EXPECT_EQ(r.total.matched, r.total.total) << name << ": matched " << r.total.matched << " of " << r.total.total;
  for (const auto& m : r.mismatches) {
    ADD_FAILURE() << name << " record " << m.record << " [" << m.m << "][" << m.n << "] " << m.output << ": dump "
                  << std::hex << m.expected_bits << ", model " << m.got_bits;
  }
  if (!has_header) {
    EXPECT_EQ(known->zero_convention, r.zero_convention) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Data, EveryDump, ::testing::ValuesIn(dump_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(MmaDumps, TheSharedDumpsArePresent) {
  DSA_SKIP_WITHOUT_SHARED_DATA();
  for (const char* name : kSharedDumps) EXPECT_TRUE(fs::is_regular_file(shared_dir() / name)) << shared_dir() / name;
}

TEST(MmaDumps, ChainDumpsCheckEveryStep) {
  DSA_SKIP_WITHOUT_SHARED_DATA();
  const DumpCheck r =
      check_dump((shared_dir() / "h200_wgmma_chain_k128_e4m3.bin").string(), Model::sm90_wgmma_e4m3, DumpFormat::chain);
  for (const char* name : {"Dc", "D0", "Ds0", "Ds1", "Ds2", "Ds3"}) {
    ASSERT_TRUE(r.by_output.count(name)) << name;
    EXPECT_EQ(r.records * 64 * 8, r.by_output.at(name).total) << name;
  }
}

TEST(MmaDumps, RejectsASizeThatIsNotWholeRecords) {
  DSA_SKIP_WITHOUT_SHARED_DATA();
  auto bytes = read_bytes(shared_dir() / "h200_mma_sync_m16n8k32_e4m3.bin");
  bytes.resize(1792 * 2 + 100);
  const fs::path p = write_temp("truncated.bin", bytes);
  EXPECT_THROW(check_dump(p.string(), Model::sm90_mma_sync_e4m3, DumpFormat::single), InvalidInput);
  // The wrong model gives the wrong record size.
  bytes.resize(1792 * 3);
  const fs::path p3 = write_temp("three.bin", bytes);
  EXPECT_THROW(check_dump(p3.string(), Model::sm90_wgmma_e4m3, DumpFormat::single), InvalidInput);
  EXPECT_THROW(check_dump(p3.string(), std::nullopt, std::nullopt), InvalidInput);  // headerless: model needed
  fs::remove(p);
  fs::remove(p3);
}

TEST(MmaDumps, ReportsMismatches) {
  DSA_SKIP_WITHOUT_SHARED_DATA();
  auto bytes = read_bytes(shared_dir() / "h200_wgmma_m64n8k32_e4m3.bin");
  bytes.resize(6408 * 2);
  // Flip the low bit of D[3][5] in record 1 (D follows A, B and C).
  bytes[6408 + 2048 + 256 + 2048 + (3 * 8 + 5) * 4] ^= 1;
  const fs::path p = write_temp("flipped.bin", bytes);
  const DumpCheck r = check_dump(p.string(), Model::sm90_wgmma_e4m3, DumpFormat::single);
  EXPECT_EQ(2 * 512, r.total.total);
  EXPECT_EQ(2 * 512 - 1, r.total.matched);
  ASSERT_EQ(1u, r.mismatches.size());
  EXPECT_EQ(1, r.mismatches[0].record);
  EXPECT_EQ(3, r.mismatches[0].m);
  EXPECT_EQ(5, r.mismatches[0].n);
  fs::remove(p);
}

TEST(MmaDumps, HeaderNamesModelShapeAndCount) {
  DSA_SKIP_WITHOUT_SHARED_DATA();
  // The first 3 records of the wgmma dump with our header: the same outputs.
  auto raw = read_bytes(shared_dir() / "h200_wgmma_m64n8k32_e4m3.bin");
  raw.resize(6408 * 3);
  DumpHeader h{};
  std::memcpy(h.magic, DumpHeader::kMagic, 8);
  h.header_bytes = sizeof(DumpHeader);
  h.format = 0;
  std::strncpy(h.model, "sm90_wgmma_e4m3", sizeof h.model);
  h.m = 64, h.n = 8, h.k = 32, h.count = 3;
  std::vector<uint8_t> bytes(sizeof h);
  std::memcpy(bytes.data(), &h, sizeof h);
  bytes.insert(bytes.end(), raw.begin(), raw.end());
  const fs::path p = write_temp("header.bin", bytes);
  const DumpCheck r = check_dump(p.string(), std::nullopt, std::nullopt);
  EXPECT_TRUE(r.has_header);
  EXPECT_EQ(Model::sm90_wgmma_e4m3, r.model);
  EXPECT_EQ(3 * 512, r.total.total);
  EXPECT_TRUE(r.passed());
  EXPECT_THROW(check_dump(p.string(), Model::sm90_mma_sync_e4m3, std::nullopt), InvalidInput);
  EXPECT_THROW(check_dump(p.string(), std::nullopt, DumpFormat::chain), InvalidInput);
  // A count that disagrees with the size.
  h.count = 4;
  std::memcpy(bytes.data(), &h, sizeof h);
  const fs::path bad = write_temp("header_bad.bin", bytes);
  EXPECT_THROW(check_dump(bad.string(), std::nullopt, std::nullopt), InvalidInput);
  fs::remove(p);
  fs::remove(bad);
}

// Our header for `count` records of the given model, format and shape.
std::vector<uint8_t> header_bytes(const char* model, uint32_t format, uint32_t m, uint32_t n, uint32_t k,
                                  uint64_t count) {
  DumpHeader h{};
  std::memcpy(h.magic, DumpHeader::kMagic, 8);
  h.header_bytes = sizeof(DumpHeader);
  h.format = format;
  std::strncpy(h.model, model, sizeof h.model);
  h.m = m, h.n = n, h.k = k, h.count = count;
  std::vector<uint8_t> bytes(sizeof h);
  std::memcpy(bytes.data(), &h, sizeof h);
  return bytes;
}

TEST(MmaDumps, AHeaderCountWhoseSizeWrapsIsRefused) {
  // Headered wgmma single records are 6408 = 8 x 801 bytes: a count of 3 + 2^61
  // makes count x 6408 wrap around 2^64 to exactly the 3 records present. Read
  // as 3 + 2^61 records, the check would run far past the buffer.
  constexpr uint64_t kRecord = 6408;
  auto bytes = header_bytes("sm90_wgmma_e4m3", 0, 64, 8, 32, 3 + (uint64_t(1) << 61));
  ASSERT_EQ(3 * kRecord, uint64_t((3 + (uint64_t(1) << 61)) * kRecord));  // the wrap this test is about
  bytes.resize(bytes.size() + 3 * kRecord, 0);
  const fs::path p = write_temp("wrapping_count.bin", bytes);
  try {
    check_dump(p.string(), std::nullopt, std::nullopt);
    ADD_FAILURE() << "a wrapping count was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("overflows"), std::string::npos) << e.what();
  }
  // The same three records with their true count pass.
  auto good = header_bytes("sm90_wgmma_e4m3", 0, 64, 8, 32, 3);
  good.insert(good.end(), bytes.begin() + sizeof(DumpHeader), bytes.end());
  const fs::path q = write_temp("true_count.bin", good);
  EXPECT_TRUE(check_dump(q.string(), std::nullopt, std::nullopt).passed());
  fs::remove(p);
  fs::remove(q);
}

TEST(MmaDumps, ZeroRecordsCheckNothingAndDoNotPass) {
  // A header that says 0 records, and an empty headerless file.
  const fs::path headered = write_temp("zero_records.bin", header_bytes("sm90_wgmma_e4m3", 0, 64, 8, 32, 0));
  const fs::path headerless = write_temp("empty.bin", {});
  const DumpCheck a = check_dump(headered.string(), std::nullopt, std::nullopt);
  const DumpCheck b = check_dump(headerless.string(), Model::sm90_mma_sync_e4m3, DumpFormat::single);
  for (const DumpCheck* r : {&a, &b}) {
    EXPECT_EQ(0, r->records);
    EXPECT_TRUE(r->checked_nothing());
    EXPECT_FALSE(r->passed());
  }
  test::CliRun run = test::run_cli("mma-check '" + headered.string() + "'");
  EXPECT_EQ(1, run.exit_code);
  EXPECT_NE(run.output.find("checked nothing"), std::string::npos) << run.output;
  run = test::run_cli("mma-check --json --model sm90_mma_sync_e4m3 '" + headerless.string() + "'");
  EXPECT_EQ(1, run.exit_code);
  EXPECT_NE(run.output.find("\"files_that_checked_nothing\""), std::string::npos) << run.output;
  run = test::run_cli("mma-check --allow-empty '" + headered.string() + "'");
  EXPECT_EQ(0, run.exit_code) << run.output;
  run = test::run_cli("mma-check --allow-empty --model sm90_mma_sync_e4m3 '" + headerless.string() + "'");
  EXPECT_EQ(0, run.exit_code) << run.output;
  fs::remove(headered);
  fs::remove(headerless);
}

TEST(MmaCheckCommand, ExitCodes) {
  DSA_SKIP_WITHOUT_SHARED_DATA();
  const std::string dump = (shared_dir() / "h200_mma_sync_m16n8k32_e4m3.bin").string();
  EXPECT_EQ(0, mma_check("--model sm90_mma_sync_e4m3 '" + dump + "'"));
  EXPECT_EQ(2, mma_check("--model no_such_model '" + dump + "'"));
  EXPECT_EQ(2, mma_check("--model sm90_wgmma_e4m3 '" + dump + "'"));  // 1792-byte records are not wgmma's
  auto bytes = read_bytes(dump);
  bytes.resize(1792 * 4);
  bytes[1792 + 512 + 256 + 512] ^= 0x80;  // negate D[0][0] of record 1
  const fs::path p = write_temp("cli_flipped.bin", bytes);
  EXPECT_EQ(1, mma_check("--model sm90_mma_sync_e4m3 '" + p.string() + "'"));
  EXPECT_EQ(1, mma_check("--json --model sm90_mma_sync_e4m3 '" + p.string() + "'"));
  fs::remove(p);
}

}  // namespace
}  // namespace dsa::mma
