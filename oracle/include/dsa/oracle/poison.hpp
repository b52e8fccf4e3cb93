// The poison protocol behind "every entry written" (SPEC 9).
//
// A harness fills each output buffer with a poison pattern before the kernel
// runs; after it, any poison left is an entry the kernel never wrote.
//   fp32 outputs: 0x7FA5A5A5, a signalling NaN (quiet bit 22 clear). IEEE
//     arithmetic never produces a signalling NaN: an operation returning NaN
//     gives the device's quiet default (GPUs 0x7FFFFFFF, x86 0xFFC00000) or a
//     quietened input NaN, and kernel inputs (fp8 codes, fp32 scales and
//     weights without NaN) hold none to copy. So the pattern cannot be a result.
//   bf16 outputs: 0x7FA5 (the same sNaN's upper half); widened to fp32 by a
//     bit shift it reads 0x7FA50000. Widen bf16 by shifting, not through
//     arithmetic, or the x86 conversion quietens it (0x7FE50000).
//   int32 outputs (indices, blocks): INT32_MIN + 0x5A5A = 0x80005A5A, neither
//     a valid index nor -1, and far from any small negative a bug would write.
// The logits rule lets any NaN equal any NaN, so an unwritten fp32 entry where
// the expected value is NaN would pass it: this check is the one that sees it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dsa/logits.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/sparse_sm100.hpp"

namespace dsa::oracle {

inline constexpr uint32_t kPoisonF32Bits = 0x7FA5A5A5u;
inline constexpr uint16_t kPoisonBf16Bits = 0x7FA5u;
inline constexpr uint32_t kPoisonBf16AsF32Bits = uint32_t(kPoisonBf16Bits) << 16;
inline constexpr int32_t kPoisonI32 = INT32_MIN + 0x5A5A;

void fill_poison(std::span<float> values, uint32_t bits = kPoisonF32Bits);
void fill_poison(std::span<int32_t> values, int32_t poison = kPoisonI32);

// Output buffers as every harness hands them to a kernel: the shape the op
// writes, every entry poisoned. Throws InvalidInput for a negative size.
Logits poisoned_logits(int64_t rows, int64_t width, uint32_t bits = kPoisonF32Bits);  // bf16: kPoisonBf16AsF32Bits
TopkIndices poisoned_topk(int64_t rows, int32_t k);
CandidateBlocks poisoned_blocks(int64_t rows, int32_t slots, int32_t block_size);
SparseBlocks poisoned_sparse(int64_t rows, int32_t num_sparse, int32_t sparse_block_kv);  // ids and end

struct PoisonSite {
  int64_t row = 0;
  int64_t col = 0;
};

struct WrittenVerdict {
  std::string buffer;  // what was checked ("logits", "topk_indices", ...)
  bool passed = true;
  uint32_t poison_bits = 0;
  int64_t rows = 0;
  int64_t entries_checked = 0;
  int64_t survivors = 0;          // poisoned entries left
  int64_t rows_with_survivors = 0;
  std::vector<PoisonSite> first_survivors;  // row-major, first max_listed
};

// Every entry of an index buffer must be written.
WrittenVerdict check_written(const IndexMatrix& out, std::string buffer = "indices", int32_t poison = kPoisonI32,
                             int max_listed = 10);
// Every entry of a float buffer inside each row's [start, end) must be written
// (kernels may leave columns past a row unwritten, SPEC 4).
WrittenVerdict check_written(const Logits& out, const RowBounds& bounds, std::string buffer = "logits",
                             uint32_t poison_bits = kPoisonF32Bits, int max_listed = 10);
// Every entry of a float buffer must be written.
WrittenVerdict check_written(const Logits& out, std::string buffer, uint32_t poison_bits = kPoisonF32Bits,
                             int max_listed = 10);

}  // namespace dsa::oracle
