// The gfx942 code objects of the build: real gfx942 code, no scratch, fp8
// MFMA where the kernel is meant to have it; and the ISA report's parser on
// hand-written listings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "dsa/error.hpp"
#include "dsa/gfx942/isa_report.hpp"
#include "gfx942_test_support.hpp"

namespace dsa {
namespace {

using gfx942::KernelResources;

constexpr const char* kNotes = R"(Displaying notes found in: .note
  Owner                Data size 	Description
  AMDGPU               0x00000291	NT_AMDGPU_METADATA (AMDGPU Metadata)
    AMDGPU Metadata:
        ---
amdhsa.kernels:
  - .agpr_count:     16
    .args:
      - .offset:         0
        .size:           136
        .value_kind:     by_value
    .group_segment_fixed_size: 1060
    .kernarg_segment_align: 8
    .max_flat_workgroup_size: 256
    .name:           k_one
    .private_segment_fixed_size: 0
    .sgpr_count:     61
    .sgpr_spill_count: 0
    .symbol:         k_one.kd
    .uses_dynamic_stack: false
    .vgpr_count:     100
    .vgpr_spill_count: 0
    .wavefront_size: 64
  - .agpr_count:     0
    .group_segment_fixed_size: 40000
    .max_flat_workgroup_size: 1024
    .name:           k_two
    .private_segment_fixed_size: 16
    .sgpr_count:     108
    .sgpr_spill_count: 2
    .uses_dynamic_stack: false
    .vgpr_count:     24
    .vgpr_spill_count: 3
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...
)";

constexpr const char* kDisassembly = R"(
k.hsaco:	file format elf64-amdgpu

Disassembly of section .text:

0000000000001600 <k_one>:
	v_mfma_f32_16x16x32_fp8_fp8 a[0:3], v[0:1], v[4:5], 0      // 000000001684: D3F38000 04020906
	v_mfma_f32_32x32x16_fp8_fp8 a[0:15], v[0:1], v[4:5], 0     // 000000001688: D3F38000 04020906
	ds_bpermute_b32 v3, v3, v1                                 // 000000001718: D87E0000 03000103
	s_endpgm                                                   // 000000001768: BF810000

0000000000001800 <k_two>:
	scratch_store_dword off, v1, s0                            // 000000001800: DC708000 007F0400
	s_endpgm                                                   // 000000001808: BF810000
)";

TEST(Gfx942IsaParser, ReadsEveryKernelOfTheMetadataNote) {
  const auto kernels = gfx942::parse_metadata_notes(kNotes);
  ASSERT_EQ(kernels.size(), 2u);
  const KernelResources& a = kernels[0];
  EXPECT_EQ(a.name, "k_one");
  EXPECT_EQ(a.vgprs, 100);
  EXPECT_EQ(a.agprs, 16);
  EXPECT_EQ(a.sgprs, 61);
  EXPECT_EQ(a.lds_bytes, 1060);
  EXPECT_EQ(a.scratch_bytes, 0);
  EXPECT_EQ(a.max_workgroup_size, 256);
  EXPECT_EQ(a.wavefront_size, 64);
  EXPECT_FALSE(a.dynamic_stack);
  const KernelResources& b = kernels[1];
  EXPECT_EQ(b.name, "k_two");
  EXPECT_EQ(b.scratch_bytes, 16);
  EXPECT_EQ(b.vgpr_spills, 3);
  EXPECT_EQ(b.sgpr_spills, 2);
}

TEST(Gfx942IsaParser, MissingFieldOrNoKernelIsAnError) {
  std::string no_vgprs = kNotes;
  no_vgprs.erase(no_vgprs.find("    .vgpr_count:     100\n"), 25);
  try {
    gfx942::parse_metadata_notes(no_vgprs);
    FAIL() << "a kernel without .vgpr_count was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "notes");
    EXPECT_NE(std::string(e.what()).find("kernel 'k_one' has no .vgpr_count"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gfx942::parse_metadata_notes("amdhsa.target: amdgcn-amd-amdhsa--gfx942\n"), InvalidInput);
}

// Hand-worked: 100 VGPRs round to 104, 512 / 104 = 4 waves; 24 round to 24,
// 512 / 24 = 21 > 8; 108 SGPRs round to 112, 800 / 112 = 7; 40000 bytes of LDS
// leave one workgroup of 16 waves per CU, 16 / 4 = 4 per SIMD.
TEST(Gfx942IsaParser, OccupancyOfTheCdna3Cu) {
  const auto kernels = gfx942::parse_metadata_notes(kNotes);
  EXPECT_EQ(gfx942::occupancy(kernels[0]).waves_per_simd, 4);
  EXPECT_EQ(gfx942::occupancy(kernels[0]).limited_by, "vgprs");
  EXPECT_EQ(gfx942::occupancy(kernels[1]).waves_per_simd, 4);
  EXPECT_EQ(gfx942::occupancy(kernels[1]).limited_by, "lds");
  KernelResources small = kernels[1];
  small.lds_bytes = 0;
  EXPECT_EQ(gfx942::occupancy(small).waves_per_simd, 7);
  EXPECT_EQ(gfx942::occupancy(small).limited_by, "sgprs");
  small.sgprs = 16;
  EXPECT_EQ(gfx942::occupancy(small).waves_per_simd, 8);
  EXPECT_EQ(gfx942::occupancy(small).limited_by, "hardware");
}

TEST(Gfx942IsaParser, CountsInstructionsPerKernel) {
  const auto reports = gfx942::make_reports("k.hsaco", kNotes, kDisassembly);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].instructions, 4);
  EXPECT_EQ(reports[0].fp8_mfma, 1);
  EXPECT_EQ(reports[0].other_mfma, 1);
  EXPECT_EQ(reports[0].lds_accesses, 1);
  EXPECT_EQ(reports[0].scratch_accesses, 0);
  EXPECT_EQ(reports[1].scratch_accesses, 1);
  const auto json = nlohmann::json::parse(gfx942::reports_json(reports));
  EXPECT_EQ(json[0]["kernel"], "k_one");
  EXPECT_EQ(json[0]["waves_per_simd"], 4);
  EXPECT_EQ(json[1]["scratch_bytes"], 16);
  std::string missing = kDisassembly;
  missing.replace(missing.find("<k_two>"), 7, "<k_three>");
  EXPECT_THROW(gfx942::make_reports("k.hsaco", kNotes, missing), InvalidInput);
}

// The kernels meant to use the matrix unit: every logits kernel, Reps = H / 16
// tiles of 4 chained MFMAs per scored token.
int fp8_mfma_per_token(const std::string& kernel) {
  if (kernel.find("logits") == std::string::npos) return 0;
  if (kernel.size() > 4 && kernel.compare(kernel.size() - 4, 4, "_h64") == 0) return 16;
  if (kernel.size() > 4 && kernel.compare(kernel.size() - 4, 4, "_h32") == 0) return 8;
  return -1;
}

// The kernels whose selection is the shared TreeTopK (optimized/common/select at wave 64).
bool runs_shared_tree(const std::string& kernel) {
  for (const char* name : {"dsa_gfx942_decode_top_k", "dsa_gfx942_select_candidates", "dsa_gfx942_candidate_top_k",
                           "dsa_gfx942_candidate_logits_top_k_h32", "dsa_gfx942_candidate_logits_top_k_h64"})
    if (kernel == name) return true;
  return false;
}

TEST(Gfx942CodeObjects, AreGfx942CodeWithoutScratchAndWithFp8Mfma) {
  DSA_REQUIRE_GFX942();
  const auto names = test::gfx942_code_objects();
  ASSERT_FALSE(names.empty());
  int kernels = 0;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string image = test::gfx942_file(name + ".hsaco");
    ASSERT_GE(image.size(), 20u);
    EXPECT_EQ(image.substr(0, 4), "\x7f" "ELF");
    EXPECT_EQ(uint8_t(image[18]) | uint8_t(image[19]) << 8, 0xE0) << "e_machine is not EM_AMDGPU";
    const std::string notes = test::gfx942_file(name + ".notes.txt");
    EXPECT_NE(notes.find("amdhsa.target:   amdgcn-amd-amdhsa--gfx942"), std::string::npos);
    for (const gfx942::KernelReport& r : gfx942::make_reports(name + ".hsaco", notes, test::gfx942_file(name + ".s"))) {
      SCOPED_TRACE(r.resources.name);
      ++kernels;
      EXPECT_EQ(r.resources.wavefront_size, 64);
      EXPECT_EQ(r.resources.scratch_bytes, 0) << "the kernel uses scratch (private segment)";
      EXPECT_EQ(r.resources.vgpr_spills, 0);
      // An SGPR spill goes to a lane of a VGPR (v_writelane / v_readlane, counted in the VGPRs
      // above), never to memory: scratch is 0 and no scratch_* instruction is present. Only the
      // kernels that run the shared TreeTopK have any (its uniform state exceeds the 102 SGPRs
      // at wave 64; docs/gfx942.md gives the numbers); the bound of two VGPRs of lanes catches a
      // change that moves that state out of SGPRs wholesale. Every other kernel has none.
      if (runs_shared_tree(r.resources.name)) {
        EXPECT_LE(r.resources.sgpr_spills, 128);
      } else {
        EXPECT_EQ(r.resources.sgpr_spills, 0);
      }
      EXPECT_FALSE(r.resources.dynamic_stack);
      EXPECT_EQ(r.scratch_accesses, 0) << "scratch_* instructions in the disassembly";
      const int per_token = fp8_mfma_per_token(r.resources.name);
      ASSERT_GE(per_token, 0) << "a logits kernel of unknown head count";
      if (per_token > 0) {
        EXPECT_GT(r.fp8_mfma, 0) << "a kernel meant to use fp8 MFMA has none";
        EXPECT_EQ(r.fp8_mfma % per_token, 0);
      }
      EXPECT_EQ(r.other_mfma, 0);
      EXPECT_GE(r.occupancy.waves_per_simd, 2);
    }
  }
  EXPECT_GE(kernels, int(names.size()));
}

TEST(Gfx942CodeObjects, TheBuildWroteTheIsaReport) {
  DSA_REQUIRE_GFX942();
  const auto report = nlohmann::json::parse(test::gfx942_file("isa_report.json"));
  size_t expected = 0;
  for (const std::string& name : test::gfx942_code_objects())
    expected += gfx942::parse_metadata_notes(test::gfx942_file(name + ".notes.txt")).size();
  ASSERT_EQ(report.size(), expected);
  for (const auto& k : report) {
    EXPECT_EQ(k["scratch_bytes"], 0) << k["kernel"];
    EXPECT_TRUE(k.contains("waves_per_simd"));
  }
  EXPECT_NE(test::gfx942_file("isa_report.md").find("| kernel | VGPRs |"), std::string::npos);
}

}  // namespace
}  // namespace dsa
