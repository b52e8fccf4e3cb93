// Hardware probe: Hopper `mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32`
// (ptxas emulates it on sm_90a: NUMERICS.md). Writes, in the shared layouts:
//   probe_mma_sync_m16n8k32_e4m3.bin       single instructions, modes 0-3 (record index % 4)
//   probe_mma_sync_m16n8k32_e4m3_edge.bin  single instructions, modes 4-7 (4 + record index % 4)
//   probe_mma_sync_chain_k128_e4m3.bin     K = 128 chains of 4 (the wgmma chain's layout with M = 16,
//                                          after the project's 80-byte dump header)
// after mapping tests whose every output is exact, so a wrong fragment layout stops here.
#include <cstdio>

#include "probe_host.hpp"

namespace probes {
namespace {

constexpr int kN = 8;  // columns of the m16n8 tile

__device__ uint32_t load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
__device__ float load_f32(const uint8_t* p) { return __uint_as_float(load_u32(p)); }
__device__ void store_f32(uint8_t* p, float v) {
  const uint32_t u = __float_as_uint(v);
  p[0] = uint8_t(u);
  p[1] = uint8_t(u >> 8);
  p[2] = uint8_t(u >> 16);
  p[3] = uint8_t(u >> 24);
}

// The accumulator fragment of m16n8: c0, c1 at row g, columns 2q, 2q + 1; c2, c3 at row g + 8.
struct Fragment {
  int row[4], col[4];
  __device__ Fragment() {
    const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    for (int i = 0; i < 4; ++i) {
      row[i] = g + (i >= 2 ? 8 : 0);
      col[i] = 2 * q + (i & 1);
    }
  }
  __device__ void load(float d[4], const uint8_t* tile) const {
    for (int i = 0; i < 4; ++i) d[i] = load_f32(tile + (row[i] * kN + col[i]) * 4);
  }
  __device__ void store(const float d[4], uint8_t* tile) const {
    for (int i = 0; i < 4; ++i) store_f32(tile + (row[i] * kN + col[i]) * 4, d[i]);
  }
};

// One instruction over k in [k0, k0 + 32) of A[16][depth] and B[8][depth] (B[n][k]).
// A fragment: a0..a3 row g, k = 4q..4q+3; a4..a7 row g + 8; a8..a15 the same 16 further on.
// B fragment: b0..b3 column g, k = 4q..4q+3; b4..b7 k + 16. Lower k in lower bytes.
__device__ void mma_step(float d[4], const uint8_t* a, const uint8_t* b, int depth, int k0, const float c[4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const uint8_t* a_lo = a + g * depth + k0 + 4 * q;
  const uint8_t* a_hi = a + (g + 8) * depth + k0 + 4 * q;
  const uint8_t* b_col = b + g * depth + k0 + 4 * q;
  const uint32_t a0 = load_u32(a_lo), a1 = load_u32(a_hi), a2 = load_u32(a_lo + 16), a3 = load_u32(a_hi + 16);
  const uint32_t b0 = load_u32(b_col), b1 = load_u32(b_col + 16);
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// One warp per record.
__global__ void single_kernel(uint8_t* dump, size_t record_bytes) {
  constexpr SingleLayout L = kMmaSyncSingle;
  uint8_t* record = dump + record_bytes * blockIdx.x;
  const Fragment frag;
  float c[4], d[4];
  frag.load(c, record + L.c());
  mma_step(d, record + L.a(), record + L.b(), L.k, 0, c);
  frag.store(d, record + L.d());
}

// One warp per record: Dc (from C), D0 (from +0) and Ds[j] (from C, stored after each step).
__global__ void chain_kernel(uint8_t* dump, size_t record_bytes) {
  constexpr ChainLayout L = kMmaSyncChain;
  uint8_t* record = dump + record_bytes * blockIdx.x;
  const uint8_t* a = record + L.a();
  const uint8_t* b = record + L.b();
  const Fragment frag;
  float c[4], d[4];

  frag.load(c, record + L.c());
  for (int step = 0; step < kChainSteps; ++step) {
    mma_step(d, a, b, kChainK, 32 * step, c);
    for (int i = 0; i < 4; ++i) c[i] = d[i];
  }
  frag.store(d, record + L.dc());

  for (int i = 0; i < 4; ++i) c[i] = 0.0f;
  for (int step = 0; step < kChainSteps; ++step) {
    mma_step(d, a, b, kChainK, 32 * step, c);
    for (int i = 0; i < 4; ++i) c[i] = d[i];
  }
  frag.store(d, record + L.d0());

  frag.load(c, record + L.c());
  for (int step = 0; step < kChainSteps; ++step) {
    mma_step(d, a, b, kChainK, 32 * step, c);
    frag.store(d, record + L.ds(step));
    for (int i = 0; i < 4; ++i) c[i] = d[i];
  }
}

void run_single(std::vector<uint8_t>& dump) {
  const size_t bytes = kMmaSyncSingle.bytes();
  DeviceDump device(dump);
  single_kernel<<<unsigned(dump.size() / bytes), 32>>>(device.ptr, bytes);
  PROBE_CUDA_CHECK(cudaGetLastError());
  device.fetch(dump);
}

void run_chain(std::vector<uint8_t>& dump) {
  const size_t bytes = kMmaSyncChain.bytes();
  DeviceDump device(dump);
  chain_kernel<<<unsigned(dump.size() / bytes), 32>>>(device.ptr, bytes);
  PROBE_CUDA_CHECK(cudaGetLastError());
  device.fetch(dump);
}

// ---- mapping tests ------------------------------------------------------------------------------

bool mapping_single() {
  constexpr SingleLayout L = kMmaSyncSingle;
  const int one_hot = L.k, integers = 256;
  const ModeSpec spec{"small integers", Operands::small_integers, Accum::small_integers, 1};
  std::vector<uint8_t> dump = generate_single(L, one_hot + integers, 7, ModeTable{&spec, 1, 0});
  for (int t = 0; t < one_hot; ++t) {
    uint8_t* r = dump.data() + L.bytes() * t;
    fill_one_hot(r + L.a(), r + L.b(), r + L.c(), L.m, L.n, L.k, t);
  }
  run_single(dump);
  MappingCheck one{"mma.sync single, one product"}, ints{"mma.sync single, small integers"};
  for (int t = 0; t < one_hot + integers; ++t) {
    const uint8_t* r = dump.data() + L.bytes() * t;
    for (int m = 0; m < L.m; ++m)
      for (int n = 0; n < L.n; ++n) {
        const float c = get_f32(r + L.c() + (m * L.n + n) * 4);
        const float want = exact_dot(r + L.a(), r + L.b(), L.k, m, n, 0, L.k, c);
        (t < one_hot ? one : ints).expect(get_f32(r + L.d() + (m * L.n + n) * 4), want, t, m, n);
      }
  }
  return one.report() & ints.report();
}

bool mapping_chain() {
  constexpr ChainLayout L = kMmaSyncChain;
  const int one_hot = kChainK, integers = 64;
  const ModeSpec spec{"small integers", Operands::small_integers, Accum::small_integers, 1};
  std::vector<uint8_t> dump = generate_chain(L, one_hot + integers, 11, ModeTable{&spec, 1, 0});
  for (int t = 0; t < one_hot; ++t) {
    uint8_t* r = dump.data() + L.bytes() * t;
    fill_one_hot(r + L.a(), r + L.b(), r + L.c(), L.m, L.n, kChainK, t);
  }
  run_chain(dump);
  MappingCheck check{"mma.sync chain (Dc, D0, Ds)"};
  for (int t = 0; t < one_hot + integers; ++t) {
    const uint8_t* r = dump.data() + L.bytes() * t;
    for (int m = 0; m < L.m; ++m)
      for (int n = 0; n < L.n; ++n) {
        const size_t at = (m * L.n + n) * 4;
        const float c = get_f32(r + L.c() + at);
        const uint8_t *a = r + L.a(), *b = r + L.b();
        check.expect(get_f32(r + L.dc() + at), exact_dot(a, b, kChainK, m, n, 0, kChainK, c), t, m, n);
        check.expect(get_f32(r + L.d0() + at), exact_dot(a, b, kChainK, m, n, 0, kChainK, 0), t, m, n);
        for (int s = 0; s < kChainSteps; ++s)
          check.expect(get_f32(r + L.ds(s) + at), exact_dot(a, b, kChainK, m, n, 0, 32 * (s + 1), c), t, m, n);
      }
  }
  return check.report();
}

// ---- the dumps ----------------------------------------------------------------------------------

// Modes 0-3 are those of the shared dump (data/README.md); 4-7 are the cases it lacks.
constexpr ModeSpec kSingleModes[] = {
    {"uniform, C = 0", Operands::uniform, Accum::zero, 1},
    {"large A exponents, C = 0", Operands::large_a, Accum::zero, 1},
    {"A second half negated, C = 0", Operands::half_negated, Accum::zero, 1},
    {"uniform, random nonzero C", Operands::uniform, Accum::wide, 1},
};
constexpr ModeSpec kEdgeModes[] = {
    {"NaN codes, C inf/NaN/max", Operands::nan, Accum::special, 1},
    {"exact cancellation, C = +-0", Operands::exact_pairs, Accum::signed_zero, 1},
    {"fp8 subnormals, tiny C", Operands::subnormal, Accum::tiny, 1},
    {"sparse zeros, any C", Operands::sparse, Accum::any, 1},
};

bool dump_single(const Args& args, const char* name, int records, uint64_t seed, const ModeSpec* modes, int first) {
  constexpr SingleLayout L = kMmaSyncSingle;
  print_modes(name, modes, 4, first);
  std::vector<uint8_t> dump = generate_single(L, records, seed, ModeTable{modes, 4, first});
  if (!args.dry_run) run_single(dump);
  OutputStats stats;
  for (int t = 0; t < records; ++t)
    for (int i = 0; i < L.m * L.n; ++i) stats.add(get_f32(dump.data() + L.bytes() * t + L.d() + 4 * i));
  return write_dump(args.out_dir, name, dump, size_t(records), stats) || args.dry_run;
}

bool dump_chain(const Args& args, const char* name, int records, uint64_t seed) {
  constexpr ChainLayout L = kMmaSyncChain;
  constexpr int count = sizeof(kChainModes) / sizeof(kChainModes[0]);
  print_modes(name, kChainModes, count, 0);
  std::vector<uint8_t> dump = generate_chain(L, records, seed, ModeTable{kChainModes, count, 0});
  if (!args.dry_run) run_chain(dump);
  OutputStats stats;
  for (int t = 0; t < records; ++t)
    for (size_t at = L.dc(); at < L.mode(); at += 4) stats.add(get_f32(dump.data() + L.bytes() * t + at));
  // The shared README has no mma.sync chain layout: the header names model and shape for mma-check.
  const std::vector<uint8_t> header = chain_dump_header("sm90_mma_sync_e4m3", L.m, L.n, uint64_t(records));
  return write_dump(args.out_dir, name, dump, size_t(records), stats, header) || args.dry_run;
}

}  // namespace
}  // namespace probes

int main(int argc, char** argv) {
  using namespace probes;
  const Args args = parse_args(argc, argv, "probe_mma_sync [--out DIR] [--seed N] [--scale F] [--dry-run]");
  std::printf("probe_mma_sync: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32, seed %llu\n",
              static_cast<unsigned long long>(args.seed));
  bool ok = true;
  if (!args.dry_run) {
    print_device();
    ok &= mapping_single();
    ok &= mapping_chain();
  }
  // >= 10^6 single-instruction outputs: 12288 records of 128.
  ok &= dump_single(args, "probe_mma_sync_m16n8k32_e4m3.bin", scaled(8192, args, 4), args.seed + 1, kSingleModes, 0);
  ok &= dump_single(args, "probe_mma_sync_m16n8k32_e4m3_edge.bin", scaled(4096, args, 4), args.seed + 2, kEdgeModes,
                    4);
  ok &= dump_chain(args, "probe_mma_sync_chain_k128_e4m3.bin", scaled(1024, args, 8), args.seed + 3);
  std::printf("probe_mma_sync: %s\n", ok ? "done" : "FAILED (see above)");
  return ok ? 0 : 1;
}
