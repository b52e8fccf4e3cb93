// The ISA report of gfx942 code objects: per kernel, the register, LDS and
// scratch use from the code object's metadata note (`llvm-readelf --notes`),
// the occupancy they allow on a CDNA3 CU, and instruction counts from the
// disassembly (`llvm-objdump -d --mcpu=gfx942`). The build writes it for every
// kernel (tools/gfx942/isa_report_main.cpp); tests hold the kernels to it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dsa::gfx942 {

struct KernelResources {
  std::string name;
  int vgprs = 0;   // .vgpr_count: architectural VGPRs plus AGPRs (one file on gfx90a and later)
  int agprs = 0;   // .agpr_count
  int sgprs = 0;   // .sgpr_count (VCC and the other reserved registers included)
  int lds_bytes = 0;                // .group_segment_fixed_size
  int scratch_bytes = 0;            // .private_segment_fixed_size
  int vgpr_spills = 0;              // .vgpr_spill_count
  int sgpr_spills = 0;              // .sgpr_spill_count
  int max_workgroup_size = 0;       // .max_flat_workgroup_size
  int wavefront_size = 0;           // .wavefront_size
  bool dynamic_stack = false;       // .uses_dynamic_stack
};

// Parses the "AMDGPU Metadata" YAML that llvm-readelf prints for a code object.
// Throws InvalidInput("notes", ...) when a kernel entry lacks one of the fields
// above or the text has no kernel at all.
std::vector<KernelResources> parse_metadata_notes(std::string_view readelf_text);

// Instruction mnemonics of each function in an llvm-objdump disassembly:
// function name -> its instructions' text (mnemonic and operands, without the
// encoding comment), in address order.
std::map<std::string, std::vector<std::string>> parse_disassembly(std::string_view objdump_text);

// Waves per SIMD a CDNA3 (gfx942) CU can keep resident for a kernel: limited by
// 512 VGPRs per lane (granule 8), 800 SGPRs (granule 16), 64 KiB of LDS per CU
// shared by the workgroups, and the hardware's 8 waves per SIMD.
struct Occupancy {
  int waves_per_simd = 0;
  std::string limited_by;  // "vgprs", "sgprs", "lds" or "hardware"
};
Occupancy occupancy(const KernelResources& k);

struct KernelReport {
  std::string code_object;  // the .hsaco file's name
  KernelResources resources;
  Occupancy occupancy;
  int instructions = 0;
  int fp8_mfma = 0;          // v_mfma_f32_16x16x32_fp8_fp8
  int other_mfma = 0;        // any other v_mfma*
  int scratch_accesses = 0;  // scratch_* and buffer loads/stores through the private segment
  int lds_accesses = 0;      // ds_* (ds_bpermute and ds_swizzle included)
};

// Joins the metadata and the disassembly of one code object (one report per
// kernel in the metadata). Throws InvalidInput("disassembly", ...) for a
// kernel without a function in the disassembly.
std::vector<KernelReport> make_reports(std::string_view code_object, std::string_view readelf_text,
                                       std::string_view objdump_text);

std::string reports_json(const std::vector<KernelReport>& reports);
std::string reports_table(const std::vector<KernelReport>& reports);

}  // namespace dsa::gfx942
