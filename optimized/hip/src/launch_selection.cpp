// Host side of kernels/decode_top_k.hip, select_candidates.hip and
// candidate_top_k.hip: one block of 256 threads per row.
#include "dsa/optimized/hip/launch.hpp"
#include "hip_runtime.hpp"

namespace dsa::gfx942 {
namespace {

constexpr uint32_t kThreads = 256;

template <typename Params>
LaunchResult launch_rows(const char* kernel, const Params& p, int32_t rows, hipStream_t stream) {
  const std::string why = detail::launch(kernel, (std::string("dsa_gfx942_") + kernel).c_str(), &p, sizeof(p),
                                         uint32_t(rows), 1, kThreads, stream);
  return {why.empty(), why};
}

}  // namespace

LaunchResult decode_top_k(const LogitsRows& in, int32_t* topk_indices, int64_t topk_stride, int32_t topk_tokens,
                          hipStream_t stream) {
  if (std::string why = check_top_k(in, topk_indices, topk_stride, topk_tokens); !why.empty()) return {false, why};
  return launch_rows("decode_top_k", DecodeTopkParams{in, topk_indices, topk_stride, topk_tokens}, in.rows, stream);
}

LaunchResult select_candidates(const LogitsRows& in, int32_t candidate_block_size, int32_t* candidate_blocks,
                               int32_t slots, hipStream_t stream) {
  if (std::string why = check_candidates(in, candidate_blocks, slots, candidate_block_size); !why.empty())
    return {false, why};
  return launch_rows("select_candidates", SelectCandidatesParams{in, candidate_block_size, candidate_blocks, slots},
                     in.rows, stream);
}

LaunchResult candidate_top_k(const LogitsRows& in, const int32_t* candidate_blocks, int32_t slots,
                             int32_t candidate_block_size, int32_t* topk_indices, int64_t topk_stride,
                             int32_t topk_tokens, hipStream_t stream) {
  std::string why = check_candidates(in, candidate_blocks, slots, candidate_block_size);
  if (const std::string topk = check_top_k(in, topk_indices, topk_stride, topk_tokens); why.empty()) why = topk;
  if (!why.empty()) return {false, why};
  return launch_rows("candidate_top_k",
                     CandidateTopkParams{in, candidate_blocks, slots, candidate_block_size, topk_indices, topk_stride,
                                         topk_tokens},
                     in.rows, stream);
}

}  // namespace dsa::gfx942
