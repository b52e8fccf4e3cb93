// Host side shared by the SM90 logits launchers: the checks every launch makes, the choice of the
// shared-memory ring, and the dispatch onto the kernel's instantiations.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "cuda_check.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/sm90_logits.hpp"
#include "dsa_cuda/kernels/sm90_logits_kernel.cuh"
#include "dsa_cuda/scheduler/unit_schedule.cuh"

namespace dsa::cuda::launch {

using kernels::LogitsMode;
using kernels::LogitsParams;

inline void refuse(const std::string& why) { throw Unsupported("cuda_sm90: " + why); }

// The device: present, and compute capability 9.0 (the kernels are sm_90a code).
inline const DeviceInfo& require_sm90() {
  const DeviceInfo& d = device_info();
  if (!d.present) refuse("no CUDA device (" + d.why_absent + ")");
  if (d.major != 9 || d.minor != 0)
    refuse("needs an sm_90 device (H100/H200), found " + d.name + " (sm_" + std::to_string(d.major) +
           std::to_string(d.minor) + ")");
  return d;
}

inline void require_aligned(const void* p, const char* what) {
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) refuse(std::string(what) + " is not 16-byte aligned");
}

inline void require_shape(int32_t heads, int32_t head_dim) {
  if (heads != 32 && heads != 64) refuse("takes H 32 or 64, got " + std::to_string(heads));
  if (head_dim != 64 && head_dim != 128) refuse("takes D 64 or 128, got " + std::to_string(head_dim));
}

// Math warpgroups of a launch's kernel (launch_variant's choice): four where a warpgroup computes one
// unit at a time (two rows per chain, or the accurate variant's promoted steps), so that four units
// are in flight per SM as in DeepGEMM's kernel; three where it pairs units (two chains per wait), in
// the fused candidate launch (rank_rows) of either variant: its ranking after the units spilled in
// the 96 registers ptxas gives four (the accurate kernel: 352 bytes at H 64, D 128; none in three's 128),
// and in the accurate variant's row pairs, whose sum and step buffer of N = 2H take 2H registers.
constexpr int math_warpgroups(bool accurate, bool row_pairs, bool rank_rows) {
  if (accurate && row_pairs) return 3;
  return (accurate || row_pairs) && !rank_rows ? 4 : 3;
}

// Stages of the K ring (kernels::ring_length: a multiple of the pipelines, as deep as fits); refuses
// a Q too large to leave room for a ring.
inline int32_t ring_stages(const DeviceInfo& d, int32_t heads, int32_t head_dim, int32_t group_rows,
                           int32_t pipelines) {
  const int32_t stages =
      kernels::ring_length(heads, head_dim, group_rows, uint32_t(d.smem_per_block_optin), pipelines);
  if (stages == 0) refuse("the Q of " + std::to_string(group_rows) + " rows does not fit in shared memory");
  return stages;
}

// Persistent blocks of a launch: one per SM, or fewer under set_sm90_grid_limit (tests).
int32_t grid_blocks(const DeviceInfo& d);

// The decode launches' checks and parameters (sm90_paged_logits.cu): a step the kernels take, candidate
// blocks they take, the parameters of a step with group_rows query rows per segment and copies of
// `block` entries, and those of the compact kernel over `candidates` into `out`.
void check_step(const DeviceDecodeStep& s);
void check_candidates(int32_t slots, int32_t candidate_block_size);
LogitsParams decode_params(const DeviceDecodeStep& s, int32_t group_rows, int32_t block);
LogitsParams compact_params(const DeviceDecodeStep& step, const int32_t* candidates, int32_t slots,
                            int32_t candidate_block_size, const int32_t* schedule, float* out);

// p.stages: the ring for this kernel's pipelines.
template <int kHeads, int kHeadDim, bool kAccurate, LogitsMode kMode, bool kRowPairs, int kMathWG, int kStepBuffers,
          bool kRankRows = false>
void run_kernel(LogitsParams p, const DeviceInfo& d, cudaStream_t stream) {
  const auto kernel =
      kernels::sm90_logits_kernel<kHeads, kHeadDim, kAccurate, kMode, kRowPairs, kMathWG, kStepBuffers, kRankRows>;
  constexpr kernels::RegisterSplit kSplit = kernels::register_split(kMathWG, kAccurate && kRowPairs);
  if constexpr (kSplit.math != 0) {
    // setmaxnreg redistributes the block's launch registers: with fewer the kernel would hang.
    cudaFuncAttributes a{};
    DSA_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
    if (a.numRegs < kSplit.launch)
      refuse("the kernel was built with " + std::to_string(a.numRegs) + " registers per thread; its setmaxnreg "
             "split needs " + std::to_string(kSplit.launch));
  }
  p.stages = ring_stages(d, kHeads, kHeadDim, p.group_rows, kMathWG);
  const kernels::LogitsSmem layout(kHeads, kHeadDim, p.group_rows, p.stages);
  if (kRankRows && layout.stages * layout.tile_bytes < sizeof(epilogue::RankSmem))
    refuse("the ring of " + std::to_string(layout.stages) + " stages is too small for the ranking's shared memory");
  const uint32_t smem = layout.total;
  DSA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  kernel<<<grid_blocks(d), kernels::logits_threads(kMathWG), smem, stream>>>(p);
  DSA_CUDA_CHECK(cudaGetLastError());
}

#ifdef DSA_SM90_EXPERIMENT
// Experiment builds only (never CI): DSA_SM90_EXPERIMENT=1 runs the three-warpgroup kernel where four
// are the choice.
inline int experiment() {
  static const int e = [] {
    const char* v = std::getenv("DSA_SM90_EXPERIMENT");
    return v ? std::atoi(v) : 0;
  }();
  return e;
}
#endif
template <int kHeads, int kHeadDim, bool kAccurate, LogitsMode kMode, bool kRowPairs, bool kRankRows = false>
void launch_kernel(const LogitsParams& p, const DeviceInfo& d, cudaStream_t stream) {
  constexpr int kMathWG = math_warpgroups(kAccurate, kRowPairs, kRankRows);
  // The accurate variant's promotion: one step buffer beside the sum, which fits the 96 registers ptxas
  // gives four math warpgroups (mma/promoted_chain.cuh); the fused launch's three keep one too, and so do
  // the row pairs' three, whose buffer of N = 2H fits only in the 160 of their setmaxnreg split.
  constexpr int kStepBuffers = kAccurate ? 1 : 2;
#ifdef DSA_SM90_EXPERIMENT
  if constexpr (kHeads == 64 && kHeadDim == 128 && kMode == LogitsMode::paged && kMathWG == 4 && !kRankRows) {
    if (experiment() == 1) return run_kernel<kHeads, kHeadDim, kAccurate, kMode, kRowPairs, 3, 2>(p, d, stream);
  }
#endif
  run_kernel<kHeads, kHeadDim, kAccurate, kMode, kRowPairs, kMathWG, kStepBuffers, kRankRows>(p, d, stream);
}

// The instantiations each mode uses: the standard variant chains two rows per wgmma (N = 2H) where a
// segment has several rows (decode with next_n >= 2, prefill groups), else two units per step; the
// accurate variant chains two rows for decode with next_n >= 2 (prefill keeps skipping the rows that
// do not see a unit, which a pair cannot), else one unit at a time. kRankRows: the compact kernel of
// the fused candidate launch.
template <int kHeads, int kHeadDim, LogitsMode kMode, bool kRankRows = false>
void launch_variant(const LogitsParams& p, bool accurate, const DeviceInfo& d, cudaStream_t stream) {
  static_assert(!kRankRows || kMode == LogitsMode::compact, "only compact rows are ranked in the launch");
  if (accurate) {
    if constexpr (kMode == LogitsMode::paged) {
      if (p.next_n >= 2) return launch_kernel<kHeads, kHeadDim, true, kMode, true>(p, d, stream);
    }
    return launch_kernel<kHeads, kHeadDim, true, kMode, false, kRankRows>(p, d, stream);
  }
  if constexpr (kMode == LogitsMode::compact) {
    launch_kernel<kHeads, kHeadDim, false, kMode, false, kRankRows>(p, d, stream);
  } else if constexpr (kMode == LogitsMode::prefill) {
    launch_kernel<kHeads, kHeadDim, false, kMode, true>(p, d, stream);
  } else if (p.next_n >= 2) {
    launch_kernel<kHeads, kHeadDim, false, kMode, true>(p, d, stream);
  } else {
    launch_kernel<kHeads, kHeadDim, false, kMode, false>(p, d, stream);
  }
}

template <LogitsMode kMode, bool kRankRows = false>
void dispatch(const LogitsParams& p, int32_t heads, int32_t head_dim, Sm90Variant variant, const DeviceInfo& d,
              cudaStream_t stream) {
  const bool a = variant == Sm90Variant::accurate;
  if (heads == 64 && head_dim == 128) launch_variant<64, 128, kMode, kRankRows>(p, a, d, stream);
  else if (heads == 64) launch_variant<64, 64, kMode, kRankRows>(p, a, d, stream);
  else if (head_dim == 128) launch_variant<32, 128, kMode, kRankRows>(p, a, d, stream);
  else launch_variant<32, 64, kMode, kRankRows>(p, a, d, stream);
}

template <LogitsMode kMode>
void launch_schedule(const LogitsParams& p, int32_t* prefix, int32_t* first_tile, cudaStream_t stream) {
  scheduler::schedule_units<kMode><<<1, 1024, 0, stream>>>(p, prefix, first_tile);
  DSA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dsa::cuda::launch
