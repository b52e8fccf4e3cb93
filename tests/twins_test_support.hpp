// Helpers of the CPU-twin and mutant tests: rows of the value kinds that break
// radix selects, and one call of an implementation's top-k into a poisoned
// buffer, judged by the oracle (selection rule and every entry written).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/indexer_ops.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/rng.hpp"
#include "test_values.hpp"

namespace dsa::twins_testing {

using ::dsa::test::kInf;
using ::dsa::test::kNaN;

enum class RowKind {
  normal,        // N(0, 1): distinct values, the coarse pass usually decides
  quantized,     // a few levels: massive ties at the cut
  constant,      // one value
  one_coarse_bin,  // distinct values in [1, 1.03): all in one fp16 bin, the fine passes decide
  nan_heavy,     // mostly NaN of both signs, some numbers
  minus_inf_heavy,  // 7 of 8 columns -inf
  signed_zeros,  // +0 and -0 only, with a few +-inf
  extremes,      // subnormals, values beyond fp16's range, +-inf, NaN
};
inline constexpr RowKind kAllRowKinds[] = {RowKind::normal,    RowKind::quantized,       RowKind::constant,
                                           RowKind::one_coarse_bin, RowKind::nan_heavy, RowKind::minus_inf_heavy,
                                           RowKind::signed_zeros, RowKind::extremes};

inline std::string to_string(RowKind k) {
  switch (k) {
    case RowKind::normal: return "normal";
    case RowKind::quantized: return "quantized";
    case RowKind::constant: return "constant";
    case RowKind::one_coarse_bin: return "one_coarse_bin";
    case RowKind::nan_heavy: return "nan_heavy";
    case RowKind::minus_inf_heavy: return "minus_inf_heavy";
    case RowKind::signed_zeros: return "signed_zeros";
    case RowKind::extremes: return "extremes";
  }
  return "?";
}

inline void fill_row(float* row, int64_t n, RowKind kind, Rng& rng) {
  const float level[4] = {float(rng.uniform_int(-4, 4)) * 0.5f, float(rng.uniform_int(-4, 4)) * 0.5f,
                          float(rng.uniform_int(-4, 4)) * 0.5f, float(rng.uniform_int(-4, 4)) * 0.5f};
  for (int64_t i = 0; i < n; ++i) {
    float x = float(rng.normal());
    switch (kind) {
      case RowKind::normal: break;
      case RowKind::quantized: x = level[rng.uniform_int(0, 3)]; break;
      case RowKind::constant: x = level[0]; break;
      case RowKind::one_coarse_bin: x = 1.0f + float(rng.uniform01()) * 0.03f; break;
      case RowKind::nan_heavy:
        if (rng.bernoulli(0.8)) x = rng.bernoulli(0.5) ? kNaN : -kNaN;
        break;
      case RowKind::minus_inf_heavy:
        if (i % 8 != 0) x = -kInf;
        break;
      case RowKind::signed_zeros:
        x = rng.bernoulli(0.05) ? (rng.bernoulli(0.5) ? kInf : -kInf) : (rng.bernoulli(0.5) ? 0.0f : -0.0f);
        break;
      case RowKind::extremes: {
        const int64_t pick = rng.uniform_int(0, 5);
        x = pick == 0   ? std::ldexp(x, -140)       // fp32 subnormals (fp16 zero)
            : pick == 1 ? std::ldexp(x, -16)        // fp16 subnormals
            : pick == 2 ? std::ldexp(x, 20)         // beyond fp16's range
            : pick == 3 ? (rng.bernoulli(0.5) ? kInf : -kInf)
            : pick == 4 ? kNaN
                        : x;
        break;
      }
    }
    row[i] = x;
  }
}

// Decode rows [0, lens[r]) of a [rows][width] logits tensor of one kind.
struct TopkCase {
  Logits logits;
  RowBounds bounds;
};

inline TopkCase make_case(const std::vector<int64_t>& lens, int64_t width, RowKind kind, Rng& rng,
                          int64_t start = 0) {
  TopkCase c;
  c.logits.rows = int64_t(lens.size());
  c.logits.width = width;
  c.logits.values.resize(size_t(c.logits.rows * width));
  for (int64_t r = 0; r < c.logits.rows; ++r) {
    // Past the row: garbage the top-k must never read.
    float* row = c.logits.row(r);
    for (int64_t i = 0; i < width; ++i) row[i] = 1e30f;
    fill_row(row + start, lens[size_t(r)], kind, rng);
    c.bounds.start.push_back(start);
    c.bounds.end.push_back(start + lens[size_t(r)]);
  }
  return c;
}

// The indices an implementation writes into a poisoned [rows][k] buffer.
inline TopkIndices run_topk(IndexerOps& ops, const Logits& logits, const RowBounds& bounds, int k) {
  TopkIndices out = oracle::poisoned_topk(logits.rows, k);
  ops.topk(logits, bounds, out);
  return out;
}

// Passes when the indices obey the top-k rule on `logits` and every slot was written.
inline ::testing::AssertionResult topk_correct(const TopkIndices& t, const Logits& logits, const RowBounds& bounds) {
  const auto selection = oracle::check_topk(oracle::view(t), logits, bounds);
  const auto written = oracle::check_written(oracle::view(t), "topk_indices");
  if (selection.passed && written.passed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << oracle::format_table(selection) << oracle::format_table(written);
}

// Pads a ragged step of random rows (pack_rows) and unpacks random padded
// top-k rows (unpack_topk) with `ops` and with `ref`, from the same poisoned
// buffers: passes when both write the same bytes and the same indices.
inline ::testing::AssertionResult padding_as_reference(IndexerOps& ops, IndexerOps& ref,
                                                       const std::vector<int32_t>& decode_lens, int32_t next_n,
                                                       int64_t row_bytes, int32_t k, Rng& rng) {
  int64_t ragged_rows = 0;
  for (const int32_t d : decode_lens) ragged_rows += d;
  const int64_t padded_rows = int64_t(decode_lens.size()) * next_n;
  ByteRows ragged{ragged_rows, row_bytes, {}};
  for (int64_t i = 0; i < ragged_rows * row_bytes; ++i) ragged.bytes.push_back(uint8_t(rng.next_u32()));
  ByteRows packed{padded_rows, row_bytes, std::vector<uint8_t>(size_t(padded_rows * row_bytes), 0x5a)};
  ByteRows packed_ref = packed;
  ops.pack_rows(ragged, decode_lens, 0x7f, packed);
  ref.pack_rows(ragged, decode_lens, 0x7f, packed_ref);
  if (packed.bytes != packed_ref.bytes) return ::testing::AssertionFailure() << ops.name() << ": pack_rows differs";
  TopkIndices padded{padded_rows, k, {}};
  for (int64_t i = 0; i < padded_rows * k; ++i) padded.indices.push_back(int32_t(rng.next_u32() % 100000));
  TopkIndices unpacked{ragged_rows, k, std::vector<int32_t>(size_t(ragged_rows * k), -7)};
  TopkIndices unpacked_ref = unpacked;
  ops.unpack_topk(padded, decode_lens, unpacked);
  ref.unpack_topk(padded, decode_lens, unpacked_ref);
  if (unpacked.indices != unpacked_ref.indices)
    return ::testing::AssertionFailure() << ops.name() << ": unpack_topk differs";
  return ::testing::AssertionSuccess();
}

}  // namespace dsa::twins_testing
