// vllm_top_k_per_row_decode as an implementation under test (a baseline, in
// builds with DSA_VLLM_BASELINE): the topk op on decode rows [0, L_r), with
// vLLM's 2-D lengths (one per row, next_n 1). Rows starting past column 0
// are refused (vLLM's decode op has none).
#include <cuda_runtime.h>

#include <span>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "dsa/error.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/vllm_topk.hpp"

namespace dsa::cuda {
namespace {

class VllmTopkOps final : public IndexerOps {
public:
  std::string name() const override { return "vllm_top_k_per_row_decode"; }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    if (!sm90_available()) throw Unsupported(name() + ": needs an sm_90 GPU; " + device_info().why_absent);
    check_row_bounds(logits, bounds);
    require_output("topk_indices", out, logits.rows);
    std::vector<int32_t> lens(size_t(logits.rows));
    for (int64_t r = 0; r < logits.rows; ++r) {
      if (bounds.start[size_t(r)] != 0) throw Unsupported(name() + ": decode rows only (every row starts at column 0)");
      lens[size_t(r)] = int32_t(bounds.end[size_t(r)]);
    }
    if (logits.rows == 0) return;
    DeviceBuffer<float> d_logits(std::span<const float>(logits.values));
    DeviceBuffer<int32_t> d_lens{std::span<const int32_t>(lens)};
    DeviceBuffer<int32_t> d_out(std::span<const int32_t>(out.indices));
    vllm_top_k_per_row_decode(d_logits.data(), logits.rows, logits.width, 1, d_lens.data(), true, d_out.data(),
                                     out.k, nullptr);
    DSA_CUDA_CHECK(cudaGetLastError());
    DSA_CUDA_CHECK(cudaDeviceSynchronize());
    d_out.download(std::span<int32_t>(out.indices));
  }
};

}  // namespace

std::unique_ptr<IndexerOps> make_vllm_topk_ops() { return std::make_unique<VllmTopkOps>(); }

}  // namespace dsa::cuda
