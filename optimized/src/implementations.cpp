// The table of implementations (implementations.hpp): one entry each.
#include "dsa/optimized/implementations.hpp"

#include <set>

#include "dsa/error.hpp"
#include "dsa/optimized/compact_candidates.hpp"
#include "dsa/optimized/persistent_topk.hpp"
#include "dsa/optimized/radix_topk.hpp"
#if defined(DSA_WITH_CUDA)
#include "dsa/optimized/cuda/cuda_ops.hpp"
#include "dsa/optimized/cuda/runtime.hpp"
#include "dsa/optimized/cuda/select_ops.hpp"
#endif
#if defined(DSA_WITH_VLLM_BASELINE)
#include "dsa/optimized/cuda/vllm_topk.hpp"
#endif
#if defined(DSA_WITH_HIP)
#include "dsa/optimized/hip/gfx942_ops.hpp"
#include "dsa/optimized/hip/launch.hpp"
#endif

namespace dsa::optimized {
namespace {

using Factory = std::function<std::unique_ptr<IndexerOps>()>;

bool always() { return true; }

Implementation entry(std::string name, std::string description, Device device, Contract contract, Factory make,
                     std::function<bool()> available = always) {
  Implementation e;
  e.name = std::move(name);
  e.description = std::move(description);
  e.device = device;
  e.contract = std::move(contract);
  e.make = std::move(make);
  e.available = std::move(available);
  return e;
}

// A contract of these ops and "anything" for every other clause.
Contract ops(std::set<Op> taken) {
  Contract c;
  c.ops = std::move(taken);
  return c;
}

std::vector<Implementation> build_table() {
  std::vector<Implementation> table;
  const std::vector<Op> all = all_ops();
  table.push_back(entry("reference", "the bit-exact CPU reference: every op, under any profile", Device::cpu,
                        ops({all.begin(), all.end()}), [] { return make_reference_ops(); }));
  table.push_back(entry("cpu_radix_topk",
                        "CPU twin of vLLM top_k_per_row (fp16 coarse pass, then fp32 radix passes into a bounded buffer)",
                        Device::cpu, ops({Op::topk}), [] { return make_cpu_radix_topk(); }));
  table.push_back(entry("cpu_persistent_topk",
                        "CPU twin of vLLM persistent_topk (persistent blocks, filtered and radix paths)", Device::cpu,
                        ops({Op::topk}), [] { return make_cpu_persistent_topk(); }));
  // Its logits copy whatever profile it is given (the reference's arithmetic
  // on the staged candidate pages), so it claims no single profile.
  table.push_back(entry("cpu_compact_candidates",
                        "CPU twin of the consumer layers' compact-candidate path (logits at candidate columns only)",
                        Device::cpu,
                        ops({Op::compact_candidate_logits, Op::candidate_topk, Op::candidate_logits_top_k}),
                        [] { return make_cpu_compact_candidates(); }));
  // GPU entries, each under its library's macro.
#if defined(DSA_WITH_CUDA)
  // The SM90 logits kernels (optimized/cuda, docs/cuda.md): wgmma on sm_90a, available on an H100/H200.
  for (const cuda::Sm90Variant v : {cuda::Sm90Variant::standard, cuda::Sm90Variant::accurate}) {
    Contract c = ops({Op::decode_logits, Op::compact_candidate_logits, Op::candidate_logits_top_k, Op::prefill_logits});
    c.profile = std::string(cuda::profile_of(v));
    c.cache_layouts = {CacheLayout::block_flat};
    c.page_sizes = {64};
    c.max_next_n = 4;  // next_n * H <= 256 (one copy of a request's Q)
    c.heads = {32, 64};
    c.head_dims = {64, 128};
    c.candidate_block_sizes = {8, 16, 32, 64};  // the compact kernel stages whole candidate blocks
    const bool accurate = v == cuda::Sm90Variant::accurate;
    table.push_back(entry(accurate ? "cuda_sm90_accurate" : "cuda_sm90",
                          accurate ? "SM90 logits kernels (wgmma e4m3), each k32 step promoted to fp32: dense, compact "
                                     "(and its top-k), prefill"
                                   : "SM90 logits kernels (wgmma e4m3, DeepGEMM's order): dense paged (clean), compact "
                                     "candidate (and its top-k), prefill",
                          Device::cuda, c, [v] { return cuda::make_cuda_sm90_ops(v); }, cuda::sm90_available));
  }
  // The selection kernels (optimized/common/select on the CUDA vendor layer, docs/cuda.md): no
  // logits, so no profile. The two entries take the same ops and differ in their top-k launches.
  const Contract selection_ops = ops({Op::topk, Op::candidate_select, Op::candidate_mask, Op::candidate_topk,
                                      Op::pack_rows, Op::unpack_topk, Op::skip_decode_fill});
  // cuda_select's top-k launches run GroupTopK (a row per cluster of blocks).
  table.push_back(entry("cuda_select",
                        "CUDA selection kernels (shared GroupTopK: a row per cluster of blocks, read once, total "
                        "order): top-k, candidate selection, mask, candidate top-k, padding",
                        Device::cuda,
                        selection_ops,
                        [] { return cuda::make_cuda_select_ops(); }, cuda::sm90_available));
  // The tree kernel has no cluster: it is the selection the gfx942 build launches (wave 64), so the
  // GPU campaign of this entry is the H200's test of that shared code (docs/gfx942.md).
  table.push_back(entry("cuda_select_tree",
                        "CUDA selection kernels with the top-k launches on the shared TreeTopK (no clusters; the "
                        "code hip_gfx942 runs at wave 64): top-k, candidate selection, mask, candidate top-k, padding",
                        Device::cuda,
                        selection_ops,
                        [] { return cuda::make_cuda_select_tree_ops(); }, cuda::sm90_available));
  // The SM100 sparse backend (docs/cuda_sm100.md). Its expansion and top-k over `end` are plain
  // CUDA and run on the H200 too; its tcgen05 logits run only on a B200 (none here: built, never run).
  table.push_back(entry("cuda_sm100_sparse_select",
                        "SM100 sparse backend: candidate blocks into sorted sparse block ids and `end`; the top-k "
                        "over [0, end) remapped to positions (plain CUDA, sm_90/sm_100)",
                        Device::cuda, ops({Op::expand_candidate_blocks, Op::sparse_topk}),
                        [] { return cuda::make_cuda_sm100_sparse_ops(cuda::Sm100SparseKernels::select); },
                        cuda::sparse_select_available));
  {
    Contract c = ops({Op::sparse_logits});
    c.profile = "deepgemm_sm100_bf16";
    c.cache_layouts = {CacheLayout::mxfp4};
    c.heads = {32, 64};
    c.head_dims = {64, 128};
    // Sparse blocks of 8 or 16 entries (the largest dividing the candidate block), pages a multiple of them.
    c.candidate_block_sizes = {8, 16, 32, 64};
    c.page_sizes = {16, 32, 64, 256};
    table.push_back(entry("cuda_sm100_sparse_logits",
                          "SM100 sparse backend: bf16 sparse logits of an MXFP4 cache on block-scaled tcgen05 "
                          "(kind::mxf4), sm_100a only: built and SASS-checked, never run (no B200 here)",
                          Device::cuda, c, [] { return cuda::make_cuda_sm100_sparse_ops(cuda::Sm100SparseKernels::logits); },
                          cuda::sm100_available));
  }
#endif
#if defined(DSA_WITH_VLLM_BASELINE)
  // A baseline, not ours: vLLM's kernel from its source (optimized/cuda/vllm_baseline/README.md).
  {
    Contract c = ops({Op::topk});
    c.row_starts = false;  // vLLM's decode op: every row starts at column 0
    table.push_back(entry("vllm_top_k_per_row_decode",
                          "vLLM's top_k_per_row_decode built from its source (a baseline; GPU bundle only)",
                          Device::cuda, c, [] { return cuda::make_vllm_topk_ops(); }, cuda::sm90_available));
  }
#endif
#if defined(DSA_WITH_HIP)
  // The gfx942 kernels (docs/gfx942.md): built into gfx942 code objects here,
  // available only where a gfx942 device is (never on this project's machines).
  Contract gfx942 = ops({Op::decode_logits, Op::candidate_logits_top_k, Op::topk, Op::candidate_select,
                         Op::candidate_mask, Op::candidate_topk, Op::pack_rows, Op::unpack_topk,
                         Op::skip_decode_fill});
  gfx942.profile = "dsa_gfx942";
  gfx942.cache_layouts = {CacheLayout::preshuffle};
  gfx942.page_sizes = {16, 32, 64, 128, 256};
  gfx942.heads = {32, 64};
  gfx942.head_dims = {128};
  gfx942.k_values = {512};
  table.push_back(entry("hip_gfx942",
                        "gfx942 (MI300) HIP kernels: AITER's Gluon logits (dense, compact + top 512); the shared "
                        "selection code at wave 64 (top-k, candidate selection, mask, candidate top-k, padding)",
                        Device::hip, gfx942, [] { return gfx942::make_gfx942_ops(); }, gfx942::device_available));
#endif
  std::set<std::string> names;
  for (const Implementation& entry : table)
    if (!names.insert(entry.name).second) throw std::logic_error("implementation '" + entry.name + "' listed twice");
  return table;
}

}  // namespace

std::string_view to_string(Device device) {
  switch (device) {
    case Device::cpu: return "cpu";
    case Device::cuda: return "cuda";
    case Device::hip: return "hip";
  }
  return "unknown";
}

const std::vector<Implementation>& implementations() {
  static const std::vector<Implementation> table = build_table();
  return table;
}

const Implementation& find_implementation(std::string_view name) {
  for (const Implementation& entry : implementations())
    if (entry.name == name) return entry;
  std::string known;
  for (const Implementation& entry : implementations()) known += (known.empty() ? "" : ", ") + entry.name;
  throw InvalidInput("impl", "unknown implementation '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> implementation_names() {
  std::vector<std::string> names;
  for (const Implementation& entry : implementations()) names.push_back(entry.name);
  return names;
}

std::vector<const Implementation*> implementations_taking(Op op) {
  std::vector<const Implementation*> taking;
  for (const Implementation& entry : implementations())
    if (entry.takes(op)) taking.push_back(&entry);
  return taking;
}

}  // namespace dsa::optimized
