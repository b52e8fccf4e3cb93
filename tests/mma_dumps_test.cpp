// Every dump in data/dumps/ against its model (what `dsa-oracle mma-check`
// runs): every H200 output must match bit for bit; in MMA-Sim's CDNA3 dump,
// the outputs decided by its zero-operand convention are judged apart and
// every other output must match. Also the reader's handling of bad files and
// of our own header, and the command's exit codes.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/mma/dump_check.hpp"
#include "test_support.hpp"

namespace dsa::mma {
namespace {

namespace fs = std::filesystem;

struct KnownDump {
  Model model;
  DumpFormat format;
  int64_t zero_convention;  // outputs MMA-Sim's zero-operand convention decides (data/dumps/README.md)
};

// The headerless dumps, by file name (dumps with a header name their model).
const std::map<std::string, KnownDump>& known_dumps() {
  static const std::map<std::string, KnownDump> known{
      {"h200_mma_sync_m16n8k32_e4m3.bin", {Model::sm90_mma_sync_e4m3, DumpFormat::single, 0}},
      {"h200_wgmma_m64n8k32_e4m3.bin", {Model::sm90_wgmma_e4m3, DumpFormat::single, 0}},
      {"h200_wgmma_chain_k128_e4m3.bin", {Model::sm90_wgmma_e4m3, DumpFormat::chain, 0}},
      {"mmasim_cdna3_mfma_f32_32x32x16_fp8_fp8.bin", {Model::cdna3_mfma_f32_32x32x16_fp8, DumpFormat::single, 1681}},
  };
  return known;
}

fs::path dumps_dir() { return fs::path(test::source_dir()) / "data" / "dumps"; }

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path write_temp(const std::string& name, const std::vector<uint8_t>& bytes) {
  const fs::path p = fs::temp_directory_path() / ("dsa_mma_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return p;
}

TEST(MmaDumps, EveryDumpMatchesItsModel) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dumps_dir())) {
    if (entry.path().extension() != ".bin") continue;
    const std::string name = entry.path().filename().string();
    const auto bytes = read_bytes(entry.path());
    const bool has_header = bytes.size() >= 8 && std::memcmp(bytes.data(), DumpHeader::kMagic, 8) == 0;
    const auto it = known_dumps().find(name);
    if (!has_header && it == known_dumps().end()) {
      ADD_FAILURE() << name << ": a headerless dump this test does not know; add it to known_dumps()";
      continue;
    }
    const DumpCheck r = has_header ? check_dump(entry.path().string(), std::nullopt, std::nullopt)
                                   : check_dump(entry.path().string(), it->second.model, it->second.format);
    ++checked;
    EXPECT_GT(r.total.total, 0) << name;
    EXPECT_EQ(r.total.matched, r.total.total) << name << ": matched " << r.total.matched << " of " << r.total.total;
    for (const auto& m : r.mismatches) {
      ADD_FAILURE() << name << " record " << m.record << " [" << m.m << "][" << m.n << "] " << m.output << ": dump "
                    << std::hex << m.expected_bits << ", model " << m.got_bits;
    }
    if (!has_header) {
      EXPECT_EQ(it->second.zero_convention, r.zero_convention) << name;
    }
  }
  EXPECT_GE(checked, int(known_dumps().size()));
}

TEST(MmaDumps, ChainDumpsCheckEveryStep) {
  const DumpCheck r = check_dump((dumps_dir() / "h200_wgmma_chain_k128_e4m3.bin").string(), Model::sm90_wgmma_e4m3,
                                 DumpFormat::chain);
  for (const char* name : {"Dc", "D0", "Ds0", "Ds1", "Ds2", "Ds3"}) {
    ASSERT_TRUE(r.by_output.count(name)) << name;
    EXPECT_EQ(r.records * 64 * 8, r.by_output.at(name).total) << name;
  }
}

TEST(MmaDumps, RejectsASizeThatIsNotWholeRecords) {
  auto bytes = read_bytes(dumps_dir() / "h200_mma_sync_m16n8k32_e4m3.bin");
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
  auto bytes = read_bytes(dumps_dir() / "h200_wgmma_m64n8k32_e4m3.bin");
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
  // The first 3 records of the wgmma dump with our header: the same outputs.
  auto raw = read_bytes(dumps_dir() / "h200_wgmma_m64n8k32_e4m3.bin");
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

int run_cli(const std::string& args) {
  const std::string command = std::string("'") + DSA_CLI_PATH + "' mma-check " + args + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(MmaCheckCommand, ExitCodes) {
  const std::string dump = (dumps_dir() / "h200_mma_sync_m16n8k32_e4m3.bin").string();
  EXPECT_EQ(0, run_cli("--model sm90_mma_sync_e4m3 '" + dump + "'"));
  EXPECT_EQ(2, run_cli("--model no_such_model '" + dump + "'"));
  EXPECT_EQ(2, run_cli("--model sm90_wgmma_e4m3 '" + dump + "'"));  // 1792-byte records are not wgmma's
  auto bytes = read_bytes(dump);
  bytes.resize(1792 * 4);
  bytes[1792 + 512 + 256 + 512] ^= 0x80;  // negate D[0][0] of record 1
  const fs::path p = write_temp("cli_flipped.bin", bytes);
  EXPECT_EQ(1, run_cli("--model sm90_mma_sync_e4m3 '" + p.string() + "'"));
  EXPECT_EQ(1, run_cli("--json --model sm90_mma_sync_e4m3 '" + p.string() + "'"));
  fs::remove(p);
}

}  // namespace
}  // namespace dsa::mma
