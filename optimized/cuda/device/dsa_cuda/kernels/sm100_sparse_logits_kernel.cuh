// The SM100 sparse logits kernel (sm_100a; docs/cuda_sm100.md): bf16 logits of each row's sparse
// columns, q.k on tcgen05 (block-scaled kind::mxf4 with ue8m0 scales per 32 inside the MMA, K = 64
// per instruction, as DeepGEMM issues it; or kind::f8f6f4 e4m3, K = 32, for an fp8 cache), then the
// bf16 head reduction of SPEC 8.
//
// A unit is 128 sparse columns of one row (M = 128 entries, N = H heads). Blocks are persistent
// and take contiguous ranges of units, so a row's Q is loaded once per block. 128 threads: thread m
// gathers entry m of the next unit (its sparse block id, page, slot) into shared memory in the
// tcgen05 no-swizzle layout while the tensor core works on the current unit; thread 0 issues the
// copy of the scales into TMEM, the MMA chain and its commit; then thread m reads TMEM lane m (the
// accumulators of entry m for every head) and writes its logit. Two stages of everything (entries,
// scales, accumulators); Q and its scales change stage only when the row changes.
//
// Columns at or past a row's `end` are loaded as zeros and never stored; a unit wholly past it is
// skipped. Nothing here has run: there is no B200. It is built for sm_100a in CI, and its SASS is
// checked for the block-scaled MMA and for local memory (scripts/check_sm100_sass.sh).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "dsa_cuda/common/ptx.cuh"
#include "dsa_cuda/common/tcgen05.cuh"
#include "dsa_cuda/epilogue/bf16_head_sum.cuh"
#include "dsa_cuda/layout/umma_desc.cuh"

namespace dsa::cuda::kernels {

inline constexpr int kSparseThreads = 128;
inline constexpr int kSparseUnit = 128;     // entries per MMA (M)
inline constexpr uint32_t kTmemCols = 256;  // 2 x 64 accumulator columns, 2 x 4 + 2 x 4 scale columns
inline constexpr uint32_t kAccCols = 64;
inline constexpr uint32_t kSfaCol = 128, kSfbCol = 136;

struct SparseLogitsParams {
  int64_t rows = 0;
  int32_t next_n = 1;  // rows per request: the block table row is r / next_n
  const uint8_t* q = nullptr;         // [rows][H][row_bytes]
  const uint32_t* q_scales = nullptr;  // [rows][H]: one word of D / 32 ue8m0 bytes per head (MXFP4)
  const __nv_bfloat16* weights = nullptr;  // [rows][H]
  const int32_t* block_table = nullptr;
  int32_t max_pages = 0;
  const uint8_t* cache = nullptr;
  int64_t page_bytes = 0;
  int32_t block_size = 0;
  const int32_t* sparse_ids = nullptr;  // [rows][num_sparse]
  const int32_t* end = nullptr;
  int32_t num_sparse = 0, sbk = 8;
  int64_t width = 0;  // num_sparse * sbk: the logits' row stride
  int64_t units_per_row = 0;
  __nv_bfloat16* logits = nullptr;
};

// Dynamic shared memory: two entry tiles, two Q tiles, two staging buffers of 128 scale words for
// the entries and two for Q, two mbarriers and the TMEM address.
template <int kHeads, int kRowBytes>
struct SparseSmem {
  static constexpr uint32_t kTile = kSparseUnit * kRowBytes;
  static constexpr uint32_t kQ = kHeads * kRowBytes;
  static constexpr uint32_t kTiles = 0, kQs = 2 * kTile, kSfa = kQs + 2 * kQ, kSfb = kSfa + 2 * 512,
                            kBars = kSfb + 2 * 512, kTmemSlot = kBars + 16, kTotal = kTmemSlot + 16;
};

template <int kHeads, int kRowBytes, bool kMxfp4>
__global__ void __launch_bounds__(kSparseThreads, 1) sm100_sparse_logits_kernel(SparseLogitsParams p) {
#if DSA_SM100_DEVICE
  using Smem = SparseSmem<kHeads, kRowBytes>;
  static_assert(kHeads == 32 || kHeads == 64, "N = H: 32 or 64");
  static_assert(kRowBytes % 32 == 0 && kRowBytes <= 128, "whole K steps of 32 bytes");
  constexpr int kSteps = kRowBytes / 32;
  extern __shared__ __align__(1024) uint8_t smem[];
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + Smem::kBars);
  uint32_t* tmem_slot = reinterpret_cast<uint32_t*>(smem + Smem::kTmemSlot);
  const int m = threadIdx.x;

  if (m == 0) {
    ptx::mbar_init(&bars[0], 1);
    ptx::mbar_init(&bars[1], 1);
    ptx::fence_barrier_init();
  }
  if (m < 32) tc::tmem_alloc(tmem_slot, kTmemCols);
  tc::fence_before_thread_sync();
  __syncthreads();
  tc::fence_after_thread_sync();
  const uint32_t tmem = *tmem_slot;

  const int64_t units = p.rows * p.units_per_row;
  const int64_t first = units * blockIdx.x / gridDim.x, last = units * (blockIdx.x + 1) / gridDim.x;
  // A unit holds work when its first column is below the row's end.
  const auto live = [&](int64_t u) { return (u % p.units_per_row) * kSparseUnit < int64_t(p.end[u / p.units_per_row]); };
  const auto next_live = [&](int64_t u) {
    while (u < last && !live(u)) ++u;
    return u;
  };

  // Thread m's part of unit u into stage s; the row's Q (and its scales) into Q stage qs when asked.
  // e4m3: the K scale of entry m in each stage (two names, not an array indexed by the stage,
  // which would live in local memory).
  float scale_0 = 0.0f, scale_1 = 0.0f;
  const auto load = [&](int64_t u, int s, bool with_q, int qs) {
    const int64_t row = u / p.units_per_row;
    const int64_t col = (u % p.units_per_row) * kSparseUnit + m;
    uint8_t* tile = smem + Smem::kTiles + s * Smem::kTile;
    uint4 chunks[kRowBytes / 16];
    uint32_t sf = 0;
    float scale = 0.0f;
    if (col < p.end[row]) {
      const int64_t entry = int64_t(p.sparse_ids[row * p.num_sparse + col / p.sbk]) * p.sbk + col % p.sbk;
      const int32_t page = p.block_table[(row / p.next_n) * p.max_pages + entry / p.block_size];
      const int64_t slot = entry % p.block_size;
      const uint8_t* page_base = p.cache + int64_t(page) * p.page_bytes;
      const uint4* src = reinterpret_cast<const uint4*>(page_base + slot * kRowBytes);
#pragma unroll
      for (int c = 0; c < kRowBytes / 16; ++c) chunks[c] = __ldg(src + c);
      const uint8_t* scale_at = page_base + int64_t(p.block_size) * kRowBytes + slot * 4;
      if constexpr (kMxfp4) sf = __ldg(reinterpret_cast<const uint32_t*>(scale_at));
      else scale = __ldg(reinterpret_cast<const float*>(scale_at));
    } else {
#pragma unroll
      for (int c = 0; c < kRowBytes / 16; ++c) chunks[c] = make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int c = 0; c < kRowBytes / 16; ++c)
      *reinterpret_cast<uint4*>(tile + layout::core_matrix_offset(m, c * 16, kRowBytes)) = chunks[c];
    if constexpr (kMxfp4) reinterpret_cast<uint32_t*>(smem + Smem::kSfa + s * 512)[layout::scale_staging_index(m)] = sf;
    (s ? scale_1 : scale_0) = scale;
    if (with_q) {
      uint8_t* q_tile = smem + Smem::kQs + qs * Smem::kQ;
      const uint8_t* q_row = p.q + row * kHeads * kRowBytes;
      for (int i = m; i < kHeads * kRowBytes / 16; i += kSparseThreads) {
        const int h = i / (kRowBytes / 16), c = i % (kRowBytes / 16);
        *reinterpret_cast<uint4*>(q_tile + layout::core_matrix_offset(h, c * 16, kRowBytes)) =
            __ldg(reinterpret_cast<const uint4*>(q_row + h * kRowBytes) + c);
      }
      if constexpr (kMxfp4)
        reinterpret_cast<uint32_t*>(smem + Smem::kSfb + qs * 512)[layout::scale_staging_index(m)] =
            m < kHeads ? __ldg(p.q_scales + row * kHeads + m) : 0u;
    }
    tc::fence_proxy_async_shared();  // the tensor core reads what the threads wrote
  };

  // Thread 0: the scales into TMEM, then the chain of D / 64 (MXFP4) or D / 32 (e4m3) MMAs.
  const auto issue = [&](int s, bool new_q, int qs) {
    if (m != 0) return;
    tc::fence_after_thread_sync();
    const uint32_t sfa = tmem + kSfaCol + 4 * s, sfb = tmem + kSfbCol + 4 * qs;
    if constexpr (kMxfp4) {
      tc::utccp_32x128b_warpx4(sfa, layout::scale_descriptor(ptx::smem_addr(smem + Smem::kSfa + s * 512)));
      if (new_q) tc::utccp_32x128b_warpx4(sfb, layout::scale_descriptor(ptx::smem_addr(smem + Smem::kSfb + qs * 512)));
    }
    const uint32_t a_tile = ptx::smem_addr(smem + Smem::kTiles + s * Smem::kTile);
    const uint32_t b_tile = ptx::smem_addr(smem + Smem::kQs + qs * Smem::kQ);
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      const uint64_t a = layout::kmajor_tile_descriptor(a_tile, kRowBytes, k);
      const uint64_t b = layout::kmajor_tile_descriptor(b_tile, kRowBytes, k);
      if constexpr (kMxfp4)
        tc::mma_mxf4(tmem + kAccCols * s, a, b, layout::mxf4_idesc(kSparseUnit, kHeads, 2 * k), sfa, sfb, k > 0);
      else
        tc::mma_f8f6f4(tmem + kAccCols * s, a, b, layout::f8f6f4_e4m3_idesc(kSparseUnit, kHeads), k > 0);
    }
    tc::commit(&bars[s]);
  };

  int64_t u = next_live(first);
  int s = 0, qs = 0;
  uint32_t phases = 0;  // bit s: the parity stage s waits for
  int64_t q_row = -1;
  if (u < last) {
    q_row = u / p.units_per_row;
    load(u, 0, true, 0);
    __syncthreads();
    issue(0, true, 0);
  }
  const int warp_lanes = (m / 32) * 32;  // this warp's TMEM lane quarter
  while (u < last) {
    const int64_t row = u / p.units_per_row;
    const int64_t n = next_live(u + 1);
    const bool has_next = n < last;
    const bool next_new_q = has_next && n / p.units_per_row != q_row;
    if (has_next) load(n, s ^ 1, next_new_q, qs ^ (next_new_q ? 1 : 0));

    ptx::mbar_wait(&bars[s], (phases >> s) & 1u);
    phases ^= 1u << s;
    tc::fence_after_thread_sync();
    float acc[kHeads];
#pragma unroll
    for (int h = 0; h < kHeads; h += 16) {
      uint32_t r[16];
      tc::tmem_ld_32x32b_x16(tmem + (uint32_t(warp_lanes) << 16) + kAccCols * s + h, r);
      tc::tmem_wait_ld(r);
#pragma unroll
      for (int i = 0; i < 16; ++i) acc[h + i] = __uint_as_float(r[i]);
    }
    __nv_bfloat162 w[kHeads / 2];
    const __nv_bfloat162* w_row = reinterpret_cast<const __nv_bfloat162*>(p.weights + row * kHeads);
#pragma unroll
    for (int i = 0; i < kHeads / 2; ++i) w[i] = w_row[i];
    __nv_bfloat16 logit = epilogue::bf16_head_sum<kHeads>(acc, w);
    if constexpr (!kMxfp4) logit = __hmul_rn(logit, __float2bfloat16_rn(s ? scale_1 : scale_0));
    const int64_t col = (u % p.units_per_row) * kSparseUnit + m;
    if (col < p.end[row]) p.logits[row * p.width + col] = logit;

    tc::fence_before_thread_sync();
    __syncthreads();  // the next unit's loads are in shared memory; this stage's TMEM has been read
    if (has_next) {
      if (next_new_q) qs ^= 1, q_row = n / p.units_per_row;
      issue(s ^ 1, next_new_q, qs);
    }
    s ^= 1;
    u = n;
  }
  tc::fence_before_thread_sync();
  __syncthreads();
  tc::fence_after_thread_sync();
  if (m < 32) tc::tmem_dealloc(tmem, kTmemCols);
#endif
}

}  // namespace dsa::cuda::kernels
