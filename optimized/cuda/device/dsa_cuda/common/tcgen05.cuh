// Thin wrappers over the SM100 tensor-core PTX the sparse logits kernel uses (sm_100a only): tensor
// memory (TMEM) allocation, the block-scaled and plain fp8 tcgen05.mma, the shared-to-TMEM copy of
// the scale factors (UTCCP), commit onto an mbarrier, TMEM loads and the tcgen05 fences. Each
// wrapper compiles to nothing outside the sm_100a device pass, so the sm_90a image holds stubs.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 1000 && defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define DSA_SM100_DEVICE 1
#else
#define DSA_SM100_DEVICE 0
#endif

namespace dsa::cuda::tc {

// One warp allocates `cols` TMEM columns (a power of two >= 32) and writes their base address to
// shared memory; it gives up its right to allocate more so that other blocks on the SM may.
__device__ __forceinline__ void tmem_alloc(uint32_t* smem_slot, uint32_t cols) {
#if DSA_SM100_DEVICE
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(smem_slot))),
               "r"(cols)
               : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void tmem_dealloc(uint32_t tmem, uint32_t cols) {
#if DSA_SM100_DEVICE
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem), "r"(cols) : "memory");
#endif
}

// D[tmem] (+)= A x B with e2m1 A and B in shared memory (descriptors), K = 64 per instruction,
// one ue8m0 scale per 32 of K for each row of A and each column of B, read from TMEM
// (sfa_tmem, sfb_tmem; the instruction descriptor's scale ids pick the bytes). accumulate = 0
// overwrites D (the first instruction of a chain).
__device__ __forceinline__ void mma_mxf4(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                         uint32_t sfa_tmem, uint32_t sfb_tmem, uint32_t accumulate) {
#if DSA_SM100_DEVICE
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 [%0], %1, %2, %3, [%5], [%6], p;\n}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(sfa_tmem), "r"(sfb_tmem)
      : "memory");
#endif
}

// D[tmem] (+)= A x B with e4m3 A and B, K = 32 per instruction (DeepGEMM's fp8 cache).
__device__ __forceinline__ void mma_f8f6f4(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                           uint32_t accumulate) {
#if DSA_SM100_DEVICE
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
      : "memory");
#endif
}

// 32 rows x 128 bits of shared memory (a no-swizzle descriptor) into TMEM columns [col, col + 4),
// the same rows for each of the four lane quarters (what the M = 128 scale layout reads).
__device__ __forceinline__ void utccp_32x128b_warpx4(uint32_t tmem, uint64_t smem_desc) {
#if DSA_SM100_DEVICE
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" ::"r"(tmem), "l"(smem_desc) : "memory");
#endif
}

// Arrives on the mbarrier once every tcgen05 operation this thread issued before has completed.
__device__ __forceinline__ void commit(uint64_t* bar) {
#if DSA_SM100_DEVICE
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(bar)))
               : "memory");
#endif
}

__device__ __forceinline__ void fence_before_thread_sync() {
#if DSA_SM100_DEVICE
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void fence_after_thread_sync() {
#if DSA_SM100_DEVICE
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
#endif
}

// Generic-proxy writes to shared memory made visible to the tensor core (the async proxy).
__device__ __forceinline__ void fence_proxy_async_shared() {
#if DSA_SM100_DEVICE
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// Lane l of warp w (w % 4 = the lane quarter) reads 16 consecutive 32-bit columns of TMEM lane
// 32 (w % 4) + l starting at `tmem`; tmem_wait_ld(r) before using them.
__device__ __forceinline__ void tmem_ld_32x32b_x16(uint32_t tmem, uint32_t (&r)[16]) {
#if DSA_SM100_DEVICE
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15}, [%16];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]),
        "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
      : "r"(tmem));
#else
  for (uint32_t& v : r) v = 0;
#endif
}

// Waits for this thread's TMEM loads; the registers pass through the wait so that no use of them
// can be scheduled before it.
__device__ __forceinline__ void tmem_wait_ld(uint32_t (&r)[16]) {
#if DSA_SM100_DEVICE
  asm volatile("tcgen05.wait::ld.sync.aligned;\n"
               : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]), "+r"(r[4]), "+r"(r[5]), "+r"(r[6]), "+r"(r[7]),
                 "+r"(r[8]), "+r"(r[9]), "+r"(r[10]), "+r"(r[11]), "+r"(r[12]), "+r"(r[13]), "+r"(r[14]), "+r"(r[15])
               :
               : "memory");
#endif
}

}  // namespace dsa::cuda::tc
