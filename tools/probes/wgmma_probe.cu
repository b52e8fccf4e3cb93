// Hardware probe: Hopper `wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3`
// (native QGMMA, sm_90a). Writes, in the shared layouts:
//   probe_wgmma_m64n8k32_e4m3.bin       single instructions, modes 0-9 (those of the shared dump)
//   probe_wgmma_m64n8k32_e4m3_edge.bin  single instructions, modes 10-13 (NaN, -0, exact cancellation)
//   probe_wgmma_chain_k128_e4m3.bin     K = 128 chains of 4: Dc, D0 (scale-d = 0 first), Ds[4]
// A and B come from shared memory (as in DeepGEMM); every single instruction is also run with A
// from registers and the two must agree bit for bit. Mapping tests with exact outputs run first and
// pick the descriptor's stride fields (the layout is validated, not assumed).
#include <cstdio>

#include "probe_host.hpp"

namespace probes {
namespace {

constexpr int kM = 64, kN = 8, kK = 32;
// Shared-memory tiles hold K-major 8 x 16-byte core matrices, no swizzle: inside one 32-wide K slice
// the byte of (row, k) lies at (row / 8) * kRowGroupStride + (k / 16) * kKChunkStride + (row % 8) * 16
// + k % 16. Slices follow one another.
constexpr uint32_t kKChunkStride = 128;   // between the two 16-byte halves of K: the "leading" byte offset
constexpr uint32_t kRowGroupStride = 256; // between groups of 8 rows: the "stride" byte offset

struct Strides {
  uint32_t leading, stride;  // the descriptor's two byte-offset fields
};

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

__device__ int core_matrix_offset(int row, int k) {
  return (row >> 3) * kRowGroupStride + (k >> 4) * kKChunkStride + (row & 7) * 16 + (k & 15);
}

// Copies X[rows][depth] (row-major bytes) into shared memory, one 32-wide slice after another.
__device__ void stage(uint8_t* smem, const uint8_t* x, int rows, int depth) {
  for (int i = threadIdx.x; i < rows * depth; i += blockDim.x) {
    const int row = i / depth, k = i % depth;
    smem[(k / kK) * rows * kK + core_matrix_offset(row, k % kK)] = x[i];
  }
}

// Ordinary stores are seen by the tensor cores (the async proxy) only after this fence and a barrier.
__device__ void publish_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
}

__device__ uint64_t descriptor(const uint8_t* smem, Strides s) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  uint64_t desc = (address & 0x3ffff) >> 4;             // bits 0-13: start address / 16
  desc |= uint64_t((s.leading & 0x3ffff) >> 4) << 16;   // bits 16-29: leading byte offset / 16
  desc |= uint64_t((s.stride & 0x3ffff) >> 4) << 32;    // bits 32-45: stride byte offset / 16
  return desc;                                          // base offset 0, swizzle mode 0 (none)
}

__device__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// Keeps the compiler from moving accumulator reads or writes across the asynchronous instructions.
__device__ void pin(float d[4]) {
  for (int i = 0; i < 4; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

__device__ void wgmma_ss(float d[4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0, %1, %2, %3}, %4, %5, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ void wgmma_rs(float d[4], const uint32_t a[4], uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// Accumulator fragment of m64n8 f32: warp w holds rows 16w..16w+15; d0, d1 at row 16w + g, columns
// 2q, 2q + 1; d2, d3 at row 16w + g + 8.
struct Fragment {
  int row[4], col[4];
  __device__ Fragment() {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    for (int i = 0; i < 4; ++i) {
      row[i] = 16 * warp + g + (i >= 2 ? 8 : 0);
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

// A from registers, the layout of mma.sync's m16n8k32 A per warp: a0..a3 row g, k = 4q..4q+3,
// a4..a7 row g + 8, a8..a15 the same 16 further on.
__device__ void load_a_fragment(uint32_t a[4], const uint8_t* x) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const uint8_t* lo = x + (16 * warp + g) * kK + 4 * q;
  const uint8_t* hi = lo + 8 * kK;
  a[0] = load_u32(lo);
  a[1] = load_u32(hi);
  a[2] = load_u32(lo + 16);
  a[3] = load_u32(hi + 16);
}

// One warpgroup per record. d_out receives D (the record's own D, or a side buffer for the
// register-A run) at d_out + d_stride * record.
template <bool kAFromRegisters>
__global__ void __launch_bounds__(128) single_kernel(const uint8_t* dump, size_t record_bytes, uint8_t* d_out,
                                                     size_t d_stride, Strides strides) {
  constexpr SingleLayout L = kWgmmaSingle;
  __shared__ __align__(1024) uint8_t smem_a[kM * kK];
  __shared__ __align__(1024) uint8_t smem_b[kN * kK];
  const uint8_t* record = dump + record_bytes * blockIdx.x;
  if (!kAFromRegisters) stage(smem_a, record + L.a(), kM, kK);
  stage(smem_b, record + L.b(), kN, kK);
  publish_shared();

  const int scale_d = load_u32(record + L.scale_d()) != 0;
  const Fragment frag;
  float d[4];
  frag.load(d, record + L.c());
  uint32_t a[4];
  if (kAFromRegisters) load_a_fragment(a, record + L.a());
  pin(d);
  wgmma_fence();
  if (kAFromRegisters)
    wgmma_rs(d, a, descriptor(smem_b, strides), scale_d);
  else
    wgmma_ss(d, descriptor(smem_a, strides), descriptor(smem_b, strides), scale_d);
  wgmma_commit();
  wgmma_wait_all();
  pin(d);
  frag.store(d, d_out + d_stride * blockIdx.x);
}

// One warpgroup per record: Dc (4 back to back from C), D0 (4 back to back, scale-d = 0 on the
// first, C still in the accumulators), Ds[j] (from C, waited for and stored after each step).
__global__ void __launch_bounds__(128) chain_kernel(uint8_t* dump, size_t record_bytes, Strides strides) {
  constexpr ChainLayout L = kWgmmaChain;
  __shared__ __align__(1024) uint8_t smem_a[kM * kChainK];
  __shared__ __align__(1024) uint8_t smem_b[kN * kChainK];
  uint8_t* record = dump + record_bytes * blockIdx.x;
  stage(smem_a, record + L.a(), kM, kChainK);
  stage(smem_b, record + L.b(), kN, kChainK);
  publish_shared();
  uint64_t desc_a[kChainSteps], desc_b[kChainSteps];
  for (int s = 0; s < kChainSteps; ++s) {
    desc_a[s] = descriptor(smem_a + s * kM * kK, strides);
    desc_b[s] = descriptor(smem_b + s * kN * kK, strides);
  }
  const Fragment frag;
  float d[4];

  frag.load(d, record + L.c());
  pin(d);
  wgmma_fence();
  wgmma_ss(d, desc_a[0], desc_b[0], 1);
  wgmma_ss(d, desc_a[1], desc_b[1], 1);
  wgmma_ss(d, desc_a[2], desc_b[2], 1);
  wgmma_ss(d, desc_a[3], desc_b[3], 1);
  wgmma_commit();
  wgmma_wait_all();
  pin(d);
  frag.store(d, record + L.dc());

  frag.load(d, record + L.c());
  pin(d);
  wgmma_fence();
  wgmma_ss(d, desc_a[0], desc_b[0], 0);
  wgmma_ss(d, desc_a[1], desc_b[1], 1);
  wgmma_ss(d, desc_a[2], desc_b[2], 1);
  wgmma_ss(d, desc_a[3], desc_b[3], 1);
  wgmma_commit();
  wgmma_wait_all();
  pin(d);
  frag.store(d, record + L.d0());

  frag.load(d, record + L.c());
  for (int s = 0; s < kChainSteps; ++s) {
    pin(d);
    wgmma_fence();
    wgmma_ss(d, desc_a[s], desc_b[s], 1);
    wgmma_commit();
    wgmma_wait_all();
    pin(d);
    frag.store(d, record + L.ds(s));
  }
}

// Runs every record with A from shared memory (D into the dump) and returns the D of the run with
// A from registers, record after record, for the comparison.
std::vector<uint8_t> run_single(std::vector<uint8_t>& dump, Strides strides) {
  constexpr SingleLayout L = kWgmmaSingle;
  const size_t records = dump.size() / L.bytes(), tile = size_t(kM) * kN * 4;
  DeviceDump device(dump);
  uint8_t* side = nullptr;
  PROBE_CUDA_CHECK(cudaMalloc(&side, tile * records));
  single_kernel<false><<<unsigned(records), 128>>>(device.ptr, L.bytes(), device.ptr + L.d(), L.bytes(), strides);
  PROBE_CUDA_CHECK(cudaGetLastError());
  single_kernel<true><<<unsigned(records), 128>>>(device.ptr, L.bytes(), side, tile, strides);
  PROBE_CUDA_CHECK(cudaGetLastError());
  device.fetch(dump);
  std::vector<uint8_t> from_registers(tile * records);
  PROBE_CUDA_CHECK(cudaMemcpy(from_registers.data(), side, from_registers.size(), cudaMemcpyDeviceToHost));
  PROBE_CUDA_CHECK(cudaFree(side));
  return from_registers;
}

void run_chain(std::vector<uint8_t>& dump, Strides strides) {
  DeviceDump device(dump);
  chain_kernel<<<unsigned(dump.size() / kWgmmaChain.bytes()), 128>>>(device.ptr, kWgmmaChain.bytes(), strides);
  PROBE_CUDA_CHECK(cudaGetLastError());
  device.fetch(dump);
}

// Bit-for-bit agreement of the shared-memory-A D (in the dump) and the register-A D.
bool same_with_a_from_registers(const std::vector<uint8_t>& dump, const std::vector<uint8_t>& from_registers,
                                const char* what) {
  constexpr SingleLayout L = kWgmmaSingle;
  const size_t records = dump.size() / L.bytes(), tile = size_t(kM) * kN * 4;
  size_t differ = 0;
  for (size_t t = 0; t < records; ++t)
    differ += std::memcmp(dump.data() + L.bytes() * t + L.d(), from_registers.data() + tile * t, tile) != 0;
  std::printf("%s: A from registers %s A from shared memory (%zu of %zu records differ)\n", what,
              differ ? "DIFFERS from" : "agrees bit for bit with", differ, records);
  return differ == 0;
}

// ---- mapping tests ------------------------------------------------------------------------------

bool check_single_mapping(Strides strides, bool verbose) {
  constexpr SingleLayout L = kWgmmaSingle;
  const int one_hot = kK, integers = 256;
  const ModeSpec specs[] = {{"integers", Operands::small_integers, Accum::small_integers, 1},
                            {"integers, scale-d 0", Operands::small_integers, Accum::small_integers, 0}};
  std::vector<uint8_t> dump = generate_single(L, one_hot + integers, 7, ModeTable{specs, 2, 0});
  for (int t = 0; t < one_hot; ++t) {
    uint8_t* r = dump.data() + L.bytes() * t;
    fill_one_hot(r + L.a(), r + L.b(), r + L.c(), kM, kN, kK, t);
  }
  const std::vector<uint8_t> from_registers = run_single(dump, strides);
  const size_t tile = size_t(kM) * kN * 4;
  MappingCheck shared{"wgmma single, A from shared memory"}, regs{"wgmma single, A from registers"};
  for (int t = 0; t < one_hot + integers; ++t) {
    const uint8_t* r = dump.data() + L.bytes() * t;
    const bool use_c = get_i32(r, L.scale_d()) != 0;
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        const size_t at = size_t(m * kN + n) * 4;
        const float want = exact_dot(r + L.a(), r + L.b(), kK, m, n, 0, kK, use_c ? get_f32(r + L.c() + at) : 0.0);
        shared.expect(get_f32(r + L.d() + at), want, t, m, n);
        regs.expect(get_f32(from_registers.data() + tile * t + at), want, t, m, n);
      }
  }
  if (!verbose) return shared.wrong == 0 && regs.wrong == 0;
  return shared.report() & regs.report();
}

bool check_chain_mapping(Strides strides) {
  constexpr ChainLayout L = kWgmmaChain;
  const int one_hot = kChainK, integers = 64;
  const ModeSpec spec{"integers", Operands::small_integers, Accum::small_integers, 1};
  std::vector<uint8_t> dump = generate_chain(L, one_hot + integers, 11, ModeTable{&spec, 1, 0});
  for (int t = 0; t < one_hot; ++t) {
    uint8_t* r = dump.data() + L.bytes() * t;
    fill_one_hot(r + L.a(), r + L.b(), r + L.c(), kM, kN, kChainK, t);
  }
  run_chain(dump, strides);
  MappingCheck check{"wgmma chain (Dc, D0, Ds)"};
  for (int t = 0; t < one_hot + integers; ++t) {
    const uint8_t* r = dump.data() + L.bytes() * t;
    const uint8_t *a = r + L.a(), *b = r + L.b();
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        const size_t at = size_t(m * kN + n) * 4;
        const float c = get_f32(r + L.c() + at);
        check.expect(get_f32(r + L.dc() + at), exact_dot(a, b, kChainK, m, n, 0, kChainK, c), t, m, n);
        check.expect(get_f32(r + L.d0() + at), exact_dot(a, b, kChainK, m, n, 0, kChainK, 0), t, m, n);
        for (int s = 0; s < kChainSteps; ++s)
          check.expect(get_f32(r + L.ds(s) + at), exact_dot(a, b, kChainK, m, n, 0, kK * (s + 1), c), t, m, n);
      }
  }
  return check.report();
}

// The PTX manual reads "leading" as the K direction for K-major operands; should the hardware read
// the fields the other way round, the swapped pair is tried rather than a device run wasted.
Strides choose_strides(bool& ok) {
  const Strides candidates[] = {{kKChunkStride, kRowGroupStride}, {kRowGroupStride, kKChunkStride}};
  for (const Strides& s : candidates) {
    if (check_single_mapping(s, false)) {
      std::printf("descriptor: leading byte offset %u, stride byte offset %u\n", s.leading, s.stride);
      check_single_mapping(s, true);
      return s;
    }
  }
  std::printf("descriptor: no stride pair passes the mapping test; details with the first:\n");
  check_single_mapping(candidates[0], true);
  ok = false;
  return candidates[0];
}

// ---- the dumps ----------------------------------------------------------------------------------

// Modes 0-9 are those of the shared dump (data/README.md); 10-13 are the cases it lacks.
constexpr ModeSpec kSingleModes[] = {
    {"uniform, C = 0", Operands::uniform, Accum::zero, 1},
    {"uniform, C of the products' size", Operands::uniform, Accum::products, 1},
    {"narrow exponents, C = 0", Operands::narrow, Accum::zero, 1},
    {"cancellation, C = 0", Operands::half_negated, Accum::zero, 1},
    {"cancellation with C", Operands::half_negated, Accum::products, 1},
    {"tiny C (fp32 subnormals too)", Operands::uniform, Accum::tiny, 1},
    {"huge C", Operands::uniform, Accum::huge, 1},
    {"sparse (85 % zero operands), any C", Operands::sparse, Accum::any, 1},
    {"subnormal-heavy, small C", Operands::subnormal, Accum::small, 1},
    {"scale-d = 0 (C ignored)", Operands::uniform, Accum::products, 0},
};
constexpr ModeSpec kEdgeModes[] = {
    {"NaN codes, C inf/NaN/max", Operands::nan, Accum::special, 1},
    {"exact cancellation, C = +-0", Operands::exact_pairs, Accum::signed_zero, 1},
    {"exact cancellation, scale-d = 0", Operands::exact_pairs, Accum::any, 0},
    {"no nonzero product, any C", Operands::zero_products, Accum::any, 1},
};

bool dump_single(const Args& args, Strides strides, const char* name, int records, uint64_t seed,
                 const ModeSpec* modes, int count, int first) {
  constexpr SingleLayout L = kWgmmaSingle;
  print_modes(name, modes, count, first);
  std::vector<uint8_t> dump = generate_single(L, records, seed, ModeTable{modes, count, first});
  bool ok = true;
  if (!args.dry_run) ok = same_with_a_from_registers(dump, run_single(dump, strides), name);
  OutputStats stats;
  for (int t = 0; t < records; ++t)
    for (int i = 0; i < kM * kN; ++i) stats.add(get_f32(dump.data() + L.bytes() * t + L.d() + 4 * i));
  return (write_dump(args.out_dir, name, dump, size_t(records), stats) || args.dry_run) && ok;
}

// Dc and Ds[3] are the same sum issued two ways; they must agree if back-to-back issue keeps nothing extra.
bool dump_chain(const Args& args, Strides strides, const char* name, int records, uint64_t seed) {
  constexpr ChainLayout L = kWgmmaChain;
  constexpr int count = sizeof(kChainModes) / sizeof(kChainModes[0]);
  print_modes(name, kChainModes, count, 0);
  std::vector<uint8_t> dump = generate_chain(L, records, seed, ModeTable{kChainModes, count, 0});
  if (!args.dry_run) run_chain(dump, strides);
  OutputStats stats;
  size_t differ = 0;
  for (int t = 0; t < records; ++t) {
    const uint8_t* r = dump.data() + L.bytes() * t;
    for (size_t at = L.dc(); at < L.mode(); at += 4) stats.add(get_f32(r + at));
    for (size_t i = 0; i < L.tile(); i += 4) differ += std::memcmp(r + L.dc() + i, r + L.ds(kChainSteps - 1) + i, 4) != 0;
  }
  if (!args.dry_run)
    std::printf("%s: back-to-back Dc and stepwise Ds[3] differ in %zu outputs\n", name, differ);
  return write_dump(args.out_dir, name, dump, size_t(records), stats) || args.dry_run;
}

}  // namespace
}  // namespace probes

int main(int argc, char** argv) {
  using namespace probes;
  const Args args = parse_args(argc, argv, "probe_wgmma [--out DIR] [--seed N] [--scale F] [--dry-run]");
  std::printf("probe_wgmma: wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3, seed %llu\n",
              static_cast<unsigned long long>(args.seed));
  bool ok = true;
  Strides strides{kKChunkStride, kRowGroupStride};
  if (!args.dry_run) {
    print_device();
    strides = choose_strides(ok);
    ok &= check_chain_mapping(strides);
  }
  // >= 10^6 single-instruction outputs: 2048 + 1024 records of 512.
  ok &= dump_single(args, strides, "probe_wgmma_m64n8k32_e4m3.bin", scaled(2048, args, 10), args.seed + 11,
                    kSingleModes, 10, 0);
  ok &= dump_single(args, strides, "probe_wgmma_m64n8k32_e4m3_edge.bin", scaled(1024, args, 4), args.seed + 12,
                    kEdgeModes, 4, 10);
  ok &= dump_chain(args, strides, "probe_wgmma_chain_k128_e4m3.bin", scaled(512, args, 8), args.seed + 13);
  std::printf("probe_wgmma: %s\n", ok ? "done" : "FAILED (see above)");
  return ok ? 0 : 1;
}
