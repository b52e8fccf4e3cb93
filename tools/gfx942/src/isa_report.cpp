#include "dsa/gfx942/isa_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dsa/error.hpp"

namespace dsa::gfx942 {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) out.push_back(text.substr(start));
      break;
    }
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

size_t indent_of(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

int to_int(const std::string& key, std::string_view value) {
  try {
    size_t used = 0;
    const int v = std::stoi(std::string(value), &used, 0);
    if (used == value.size()) return v;
  } catch (const std::exception&) {
  }
  throw InvalidInput("notes", fmt::format("{} is '{}', not an integer", key, value));
}

KernelResources finish(const std::map<std::string, std::string>& fields) {
  auto need = [&](const char* key) -> const std::string& {
    const auto it = fields.find(key);
    if (it == fields.end()) {
      const auto name = fields.find(".name");
      throw InvalidInput("notes", fmt::format("kernel '{}' has no {}", name == fields.end() ? "?" : name->second, key));
    }
    return it->second;
  };
  KernelResources k;
  k.name = need(".name");
  k.vgprs = to_int(".vgpr_count", need(".vgpr_count"));
  k.agprs = to_int(".agpr_count", need(".agpr_count"));
  k.sgprs = to_int(".sgpr_count", need(".sgpr_count"));
  k.lds_bytes = to_int(".group_segment_fixed_size", need(".group_segment_fixed_size"));
  k.scratch_bytes = to_int(".private_segment_fixed_size", need(".private_segment_fixed_size"));
  k.vgpr_spills = to_int(".vgpr_spill_count", need(".vgpr_spill_count"));
  k.sgpr_spills = to_int(".sgpr_spill_count", need(".sgpr_spill_count"));
  k.max_workgroup_size = to_int(".max_flat_workgroup_size", need(".max_flat_workgroup_size"));
  k.wavefront_size = to_int(".wavefront_size", need(".wavefront_size"));
  k.dynamic_stack = need(".uses_dynamic_stack") == "true";
  return k;
}

int round_up(int v, int granule) { return (v + granule - 1) / granule * granule; }

}  // namespace

std::vector<KernelResources> parse_metadata_notes(std::string_view readelf_text) {
  std::vector<KernelResources> kernels;
  bool in_kernels = false;
  size_t item_indent = std::string_view::npos;
  std::map<std::string, std::string> fields;
  bool open = false;
  for (const std::string_view raw : lines_of(readelf_text)) {
    const std::string_view line = trim(raw);
    if (line.rfind("amdhsa.kernels:", 0) == 0) {
      in_kernels = true;
      continue;
    }
    if (!in_kernels || line.empty()) continue;
    const size_t ind = indent_of(raw);
    if (line.rfind("amdhsa.", 0) == 0 || line == "..." || line == "---") {  // the next top-level key
      in_kernels = false;
      continue;
    }
    const bool item = line.rfind("- ", 0) == 0;
    if (item && item_indent == std::string_view::npos) item_indent = ind;
    std::string_view entry = line;
    if (item && ind == item_indent) {
      if (open) kernels.push_back(finish(fields));
      fields.clear();
      open = true;
      entry = trim(line.substr(2));
    } else if (ind != item_indent + 2 || item) {
      continue;  // nested (.args and its items)
    }
    const size_t colon = entry.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view value = trim(entry.substr(colon + 1));
    if (!value.empty()) fields[std::string(trim(entry.substr(0, colon)))] = std::string(value);
  }
  if (open) kernels.push_back(finish(fields));
  if (kernels.empty()) throw InvalidInput("notes", "no amdhsa.kernels entry in the metadata note");
  return kernels;
}

std::map<std::string, std::vector<std::string>> parse_disassembly(std::string_view objdump_text) {
  std::map<std::string, std::vector<std::string>> functions;
  std::vector<std::string>* current = nullptr;
  for (const std::string_view raw : lines_of(objdump_text)) {
    const std::string_view line = trim(raw);
    if (line.empty()) {
      current = nullptr;
      continue;
    }
    const size_t lt = line.find(" <");
    if (lt != std::string_view::npos && line.back() == ':' && line[line.size() - 2] == '>') {
      current = &functions[std::string(line.substr(lt + 2, line.size() - lt - 4))];
      continue;
    }
    if (!current || (raw.front() != '\t' && raw.front() != ' ')) continue;
    std::string_view ins = line.substr(0, line.find("//"));
    ins = trim(ins);
    if (!ins.empty()) current->emplace_back(ins);
  }
  return functions;
}

Occupancy occupancy(const KernelResources& k) {
  constexpr int kMaxWaves = 8, kVgprs = 512, kSgprs = 800, kLdsPerCu = 65536, kSimdsPerCu = 4;
  Occupancy o{kMaxWaves, "hardware"};
  auto limit = [&](int waves, const char* why) {
    if (waves < o.waves_per_simd) o = {waves, why};
  };
  limit(kVgprs / round_up(std::max(k.vgprs, 1), 8), "vgprs");
  limit(kSgprs / round_up(std::max(k.sgprs, 1), 16), "sgprs");
  if (k.lds_bytes > 0) {
    const int waves_per_group = std::max(1, (k.max_workgroup_size + 63) / 64);
    const int groups = kLdsPerCu / k.lds_bytes;
    limit(groups * waves_per_group / kSimdsPerCu, "lds");
  }
  return o;
}

std::vector<KernelReport> make_reports(std::string_view code_object, std::string_view readelf_text,
                                       std::string_view objdump_text) {
  const auto functions = parse_disassembly(objdump_text);
  std::vector<KernelReport> reports;
  for (const KernelResources& k : parse_metadata_notes(readelf_text)) {
    const auto fn = functions.find(k.name);
    if (fn == functions.end())
      throw InvalidInput("disassembly", fmt::format("no function '{}' in the disassembly of {}", k.name, code_object));
    KernelReport r;
    r.code_object = std::string(code_object);
    r.resources = k;
    r.occupancy = occupancy(k);
    for (const std::string& ins : fn->second) {
      ++r.instructions;
      const std::string_view m = std::string_view(ins).substr(0, ins.find(' '));
      if (m == "v_mfma_f32_16x16x32_fp8_fp8") {
        ++r.fp8_mfma;
      } else if (m.rfind("v_mfma", 0) == 0) {
        ++r.other_mfma;
      }
      if (m.rfind("scratch_", 0) == 0) ++r.scratch_accesses;
      if (m.rfind("ds_", 0) == 0) ++r.lds_accesses;
    }
    reports.push_back(std::move(r));
  }
  return reports;
}

std::string reports_json(const std::vector<KernelReport>& reports) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const KernelReport& r : reports) {
    const KernelResources& k = r.resources;
    out.push_back({{"kernel", k.name},
                   {"code_object", r.code_object},
                   {"vgprs", k.vgprs},
                   {"agprs", k.agprs},
                   {"sgprs", k.sgprs},
                   {"lds_bytes", k.lds_bytes},
                   {"scratch_bytes", k.scratch_bytes},
                   {"vgpr_spills", k.vgpr_spills},
                   {"sgpr_spills", k.sgpr_spills},
                   {"max_workgroup_size", k.max_workgroup_size},
                   {"wavefront_size", k.wavefront_size},
                   {"waves_per_simd", r.occupancy.waves_per_simd},
                   {"occupancy_limited_by", r.occupancy.limited_by},
                   {"instructions", r.instructions},
                   {"fp8_mfma", r.fp8_mfma},
                   {"other_mfma", r.other_mfma},
                   {"scratch_accesses", r.scratch_accesses},
                   {"lds_accesses", r.lds_accesses}});
  }
  return out.dump(2) + "\n";
}

std::string reports_table(const std::vector<KernelReport>& reports) {
  std::ostringstream s;
  s << "| kernel | VGPRs | AGPRs | SGPRs | SGPR spills (to VGPR lanes) | LDS | scratch | waves/SIMD | fp8 MFMA | "
       "instructions |\n"
    << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const KernelReport& r : reports) {
    const KernelResources& k = r.resources;
    s << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} ({}) | {} | {} |\n", k.name, k.vgprs, k.agprs, k.sgprs,
                     k.sgpr_spills, k.lds_bytes, k.scratch_bytes, r.occupancy.waves_per_simd, r.occupancy.limited_by,
                     r.fp8_mfma, r.instructions);
  }
  return s.str();
}

}  // namespace dsa::gfx942
