// Host side shared by the probes: CUDA error checks, the command line, record
// generation from a mode table, the exact mapping tests and writing a dump.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dump_layout.hpp"
#include "fp_codes.hpp"
#include "operand_draw.hpp"
#include "probe_rng.hpp"

namespace probes {

#define PROBE_CUDA_CHECK(call)                                                                              \
  do {                                                                                                      \
    const cudaError_t status_ = (call);                                                                     \
    if (status_ != cudaSuccess) {                                                                           \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(status_), __FILE__, __LINE__, \
                   cudaGetErrorString(status_));                                                            \
      std::exit(3);                                                                                         \
    }                                                                                                       \
  } while (0)

// D words are filled with this NaN before a run; one left after it is an output the kernel never wrote.
inline constexpr uint32_t kPoison = 0x7fbadbadu;

struct Args {
  std::string out_dir = ".";
  uint64_t seed = 20261130;
  double scale = 1.0;    // fraction of the default record counts (quick trials)
  bool dry_run = false;  // generate and write inputs only, no GPU (D stays poisoned)
};

inline Args parse_args(int argc, char** argv, const char* usage) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const bool has_value = i + 1 < argc;
    if (flag == "--out" && has_value) {
      args.out_dir = argv[++i];
    } else if (flag == "--seed" && has_value) {
      args.seed = std::strtoull(argv[++i], nullptr, 0);
    } else if (flag == "--scale" && has_value) {
      args.scale = std::strtod(argv[++i], nullptr);
    } else if (flag == "--dry-run") {
      args.dry_run = true;
    } else {
      std::fprintf(stderr, "usage: %s\n", usage);
      std::exit(2);
    }
  }
  if (!(args.scale > 0 && args.scale <= 16)) {
    std::fprintf(stderr, "--scale must lie in (0, 16], got %g\n", args.scale);
    std::exit(2);
  }
  return args;
}

inline int scaled(int records, const Args& args, int multiple) {
  const int n = int(std::lround(records * args.scale / multiple)) * multiple;
  return n < multiple ? multiple : n;
}

// Record t draws from its own stream, so a record does not depend on how many come before it.
inline Rng record_rng(uint64_t seed, uint64_t record) { return Rng(seed ^ (record * 0xd1342543de82ef95ull + 1)); }

inline void poison(uint8_t* words, size_t bytes) {
  for (size_t i = 0; i + 4 <= bytes; i += 4) std::memcpy(words + i, &kPoison, 4);
}
inline size_t count_poison(const uint8_t* words, size_t bytes) {
  size_t count = 0;
  for (size_t i = 0; i + 4 <= bytes; i += 4) count += std::memcmp(words + i, &kPoison, 4) == 0;
  return count;
}

inline float get_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void put_f32(uint8_t* p, float v) { std::memcpy(p, &v, 4); }

// ---- generation -------------------------------------------------------------------------------

struct ModeTable {
  const ModeSpec* modes;
  int count;
  int first_mode;  // the number the first row is written as (edge files continue the numbering)
};

inline std::vector<uint8_t> generate_single(const SingleLayout& layout, int records, uint64_t seed,
                                            const ModeTable& table) {
  std::vector<uint8_t> dump(layout.bytes() * size_t(records));
  for (int t = 0; t < records; ++t) {
    uint8_t* record = dump.data() + layout.bytes() * size_t(t);
    const ModeSpec& spec = table.modes[t % table.count];
    Rng rng = record_rng(seed, uint64_t(t));
    const Tile tile{layout.m, layout.n, layout.k, record + layout.a(), record + layout.b(), record + layout.c()};
    draw_operands(rng, spec.operands, tile);
    draw_accum(rng, spec.accum, tile);
    poison(record + layout.d(), size_t(layout.m) * layout.n * 4);
    if (layout.has_mode_fields) {
      put_i32(record, layout.mode(), table.first_mode + t % table.count);
      put_i32(record, layout.scale_d(), spec.scale_d);
    }
  }
  return dump;
}

inline std::vector<uint8_t> generate_chain(const ChainLayout& layout, int records, uint64_t seed,
                                           const ModeTable& table) {
  std::vector<uint8_t> dump(layout.bytes() * size_t(records));
  for (int t = 0; t < records; ++t) {
    uint8_t* record = dump.data() + layout.bytes() * size_t(t);
    const ModeSpec& spec = table.modes[t % table.count];
    Rng rng = record_rng(seed, uint64_t(t));
    const Tile tile{layout.m, layout.n, kChainK, record + layout.a(), record + layout.b(), record + layout.c()};
    draw_operands(rng, spec.operands, tile);
    draw_accum(rng, spec.accum, tile);
    poison(record + layout.dc(), layout.mode() - layout.dc());
    put_i32(record, layout.mode(), table.first_mode + t % table.count);
    put_i32(record, layout.mode() + 4, 0);
  }
  return dump;
}

// One-hot records: every output has the single product val(m) * val(n) at k = record % depth, so a
// wrong row, column or k of a fragment or descriptor shows as a wrong or missing product.
inline uint8_t one_hot_code(int index) { return uint8_t(0x30 + index % 64); }  // 0.25 .. 240, no NaN

inline void fill_one_hot(uint8_t* a, uint8_t* b, uint8_t* c, int rows, int cols, int depth, int k0) {
  std::memset(a, 0, size_t(rows) * depth);
  std::memset(b, 0, size_t(cols) * depth);
  std::memset(c, 0, size_t(rows) * cols * 4);
  for (int m = 0; m < rows; ++m) a[size_t(m) * depth + k0] = one_hot_code(m);
  for (int n = 0; n < cols; ++n) b[size_t(n) * depth + k0] = one_hot_code(n + 17);
}

// Exact sum over k in [k_begin, k_end) of the products, plus c (mapping tests only: small
// integers or a single product, where every model and the hardware agree with the exact value).
inline float exact_dot(const uint8_t* a, const uint8_t* b, int depth, int m, int n, int k_begin, int k_end,
                       double c) {
  double sum = c;
  for (int k = k_begin; k < k_end; ++k)
    sum += e4m3_value(a[size_t(m) * depth + k]) * e4m3_value(b[size_t(n) * depth + k]);
  return float(sum);
}

// Mapping tests compare values, not bits: the sign of a zero is not what they are about.
struct MappingCheck {
  const char* what;
  size_t checked = 0, wrong = 0;

  void expect(float got, float want, int record, int m, int n) {
    ++checked;
    if (got == want) return;
    if (++wrong <= 8)
      std::printf("  mapping %s: record %d D[%d][%d] = %a, expected %a\n", what, record, m, n, got, want);
  }
  bool report() const {
    std::printf("mapping test %-34s %s (%zu of %zu outputs right)\n", what, wrong ? "FAIL" : "ok", checked - wrong,
                checked);
    return wrong == 0;
  }
};

// ---- writing ------------------------------------------------------------------------------------

struct OutputStats {
  size_t outputs = 0, nan = 0, neg_zero = 0, pos_zero = 0, inf = 0, unwritten = 0;
  void add(float v) {
    ++outputs;
    const uint32_t bits = f32_bits(v);
    if (bits == kPoison) ++unwritten;
    else if (std::isnan(v)) ++nan;
    else if (std::isinf(v)) ++inf;
    else if (bits == 0x80000000u) ++neg_zero;
    else if (bits == 0) ++pos_zero;
  }
};

// The 80-byte header of the project's own dumps (DumpHeader in reference/include/dsa/mma/dump_check.hpp),
// for a layout the shared README lacks: magic, header_bytes, format (1 = chain), model name, m, n, k,
// flags, record count, reserved. The records that follow keep their headerless layout.
inline std::vector<uint8_t> chain_dump_header(const char* model, uint32_t m, uint32_t n, uint64_t records) {
  std::vector<uint8_t> header(80, 0);
  std::memcpy(header.data(), "DSAMMA01", 8);
  const uint32_t fields[] = {80, 1};
  std::memcpy(header.data() + 8, fields, sizeof fields);
  std::strncpy(reinterpret_cast<char*>(header.data() + 16), model, 31);
  const uint32_t shape[] = {m, n, uint32_t(kChainK), 0};
  std::memcpy(header.data() + 48, shape, sizeof shape);
  std::memcpy(header.data() + 64, &records, 8);
  return header;
}

inline bool write_dump(const std::string& dir, const char* name, const std::vector<uint8_t>& dump, size_t records,
                       const OutputStats& stats, const std::vector<uint8_t>& header = {}) {
  const std::string path = dir + "/" + name;
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(header.data(), 1, header.size(), file) != header.size() ||
      std::fwrite(dump.data(), 1, dump.size(), file) != dump.size() || std::fclose(file) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("wrote %-44s %6zu records, %8zu outputs (NaN %zu, inf %zu, +0 %zu, -0 %zu, unwritten %zu)\n", name,
              records, stats.outputs, stats.nan, stats.inf, stats.pos_zero, stats.neg_zero, stats.unwritten);
  return stats.unwritten == 0;
}

inline void print_device() {
  int device = 0;
  cudaDeviceProp prop{};
  PROBE_CUDA_CHECK(cudaGetDevice(&device));
  PROBE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0;
  PROBE_CUDA_CHECK(cudaDriverGetVersion(&driver));
  PROBE_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  std::printf("device %s, compute capability %d.%d, driver API %d, runtime %d\n", prop.name, prop.major, prop.minor,
              driver, runtime);
  if (prop.major != 9) {
    std::fprintf(stderr, "these probes are built for sm_90a (Hopper); this device is sm_%d%d\n", prop.major,
                 prop.minor);
    std::exit(3);
  }
}

// A device copy of a dump; run() launches, then the dump comes back.
struct DeviceDump {
  uint8_t* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceDump(const std::vector<uint8_t>& host) : bytes(host.size()) {
    PROBE_CUDA_CHECK(cudaMalloc(&ptr, bytes));
    PROBE_CUDA_CHECK(cudaMemcpy(ptr, host.data(), bytes, cudaMemcpyHostToDevice));
  }
  void fetch(std::vector<uint8_t>& host) const {
    PROBE_CUDA_CHECK(cudaDeviceSynchronize());
    PROBE_CUDA_CHECK(cudaMemcpy(host.data(), ptr, bytes, cudaMemcpyDeviceToHost));
  }
  ~DeviceDump() { cudaFree(ptr); }
  DeviceDump(const DeviceDump&) = delete;
  DeviceDump& operator=(const DeviceDump&) = delete;
};

}  // namespace probes
