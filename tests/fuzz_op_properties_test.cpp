// The fuzzer's properties on the ops a whole step adds around the logits and
// the top-k: each catches an implementation of that op alone with a bug it is
// meant to see, and gives "does not apply" to one that lacks the op.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "dsa/fuzz/mutants.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/sparse_sm100.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

using test::fuzz_one;
using test::maker;

// Only prefill logits: the determinism and every-entry-written properties must reach it through prefill cases.
class PrefillOnly : public IndexerOps {
public:
  std::string name() const override { return "prefill only"; }
  void prefill_logits(const PrefillProblem& p, const Profile& f, Logits& out) override {
    ref_->prefill_logits(p, f, out);
  }

protected:
  std::unique_ptr<IndexerOps> ref_ = make_reference_ops();
};

struct PrefillLeavesKs : PrefillOnly {  // the entry at ks of every row is never written
  void prefill_logits(const PrefillProblem& p, const Profile& f, Logits& out) override {
    const Logits before = out;
    ref_->prefill_logits(p, f, out);
    for (int64_t r = 0; r < out.rows; ++r)
      if (p.ke[size_t(r)] > p.ks[size_t(r)]) out.row(r)[p.ks[size_t(r)]] = before.row(r)[p.ks[size_t(r)]];
  }
};

struct PrefillRunDependent : PrefillOnly {  // every second call, row 0's first entry one ulp up
  int calls = 0;
  void prefill_logits(const PrefillProblem& p, const Profile& f, Logits& out) override {
    ref_->prefill_logits(p, f, out);
    if (++calls % 2 == 0 && p.rows > 0 && p.ke[0] > p.ks[0]) {
      float& v = out.row(0)[p.ks[0]];
      if (std::isfinite(v)) v = std::nextafter(v, INFINITY);
    }
  }
};

TEST(FuzzOpProperties, DeterminismAndEveryEntryWrittenDrawPrefillCases) {
  for (const char* property : {property::kDeterminism, property::kEveryEntryWritten}) {
    const CampaignResult r = fuzz_one(maker<PrefillOnly>(), property, 4);
    ASSERT_EQ(r.properties.size(), 1u);
    EXPECT_TRUE(r.properties[0].applicable()) << property;
    EXPECT_EQ(r.properties[0].passed, 4) << property;
  }
}

TEST(FuzzOpProperties, PrefillLogitsUnwrittenOrRunDependentAreCaught) {
  const CampaignResult unwritten = fuzz_one(maker<PrefillLeavesKs>(), property::kEveryEntryWritten, 100);
  ASSERT_TRUE(unwritten.properties[0].failure);
  EXPECT_NE(unwritten.properties[0].failure->message.find("prefill_logits"), std::string::npos);
  const CampaignResult drifting = fuzz_one(maker<PrefillRunDependent>(), property::kDeterminism, 100);
  ASSERT_TRUE(drifting.properties[0].failure);
  EXPECT_EQ(kind_name(drifting.properties[0].failure->shrunk), "prefill");
}

// Only the SM100 sparse ops, or only the padding ops: the properties of
// those ops apply (and determinism, every entry written), no other does.
class SparseOnly : public IndexerOps {
public:
  std::string name() const override { return "sparse only"; }
  void expand_candidate_blocks(const CandidateBlocks& c, const RowBounds& b, SparseBlocks& out) override {
    ref_->expand_candidate_blocks(c, b, out);
  }
  void sparse_logits(const DecodeProblem& p, const Profile& f, const SparseBlocks& s, Logits& out) override {
    ref_->sparse_logits(p, f, s, out);
  }
  void sparse_topk(const Logits& l, const SparseBlocks& s, std::span<const int64_t> ks, TopkIndices& out) override {
    ref_->sparse_topk(l, s, ks, out);
  }

private:
  std::unique_ptr<IndexerOps> ref_ = make_reference_ops();
};

class PaddingOnly : public IndexerOps {
public:
  std::string name() const override { return "padding only"; }
  void pack_rows(const ByteRows& r, std::span<const int32_t> lens, uint8_t pad, ByteRows& out) override {
    ref_->pack_rows(r, lens, pad, out);
  }
  void unpack_topk(const TopkIndices& padded, std::span<const int32_t> lens, TopkIndices& out) override {
    ref_->unpack_topk(padded, lens, out);
  }
  bool skip_decode_fill(bool prefill, int64_t decode, int64_t tokens, bool padding) override {
    return ref_->skip_decode_fill(prefill, decode, tokens, padding);
  }

private:
  std::unique_ptr<IndexerOps> ref_ = make_reference_ops();
};

void expect_applicable(const std::function<std::unique_ptr<IndexerOps>()>& make, const std::vector<std::string>& own) {
  CampaignOptions o;
  o.impl = "one family";
  o.make_impl = make;
  o.cases = 3;
  const CampaignResult r = run_campaign(o);
  for (const PropertyResult& p : r.properties) {
    const bool mine = std::find(own.begin(), own.end(), p.property) != own.end();
    const bool generic = p.property == property::kDeterminism || p.property == property::kEveryEntryWritten;
    EXPECT_EQ(p.applicable(), mine || generic) << p.property;
    EXPECT_FALSE(p.failure) << p.property << "\n" << (p.failure ? format_failure(*p.failure) : "");
    // The generic properties draw other decode forms too: those cases are unsupported, never passes.
    if (mine) {
      EXPECT_EQ(p.passed, o.cases) << p.property;
    }
    if (generic) {
      EXPECT_EQ(p.passed + p.unsupported, o.cases) << p.property;
    }
  }
}

TEST(FuzzOpProperties, OnlyThePropertiesOfTheOpsAnImplementationTakesApply) {
  expect_applicable(maker<SparseOnly>(),
                    {property::kSparseBlocksAgree, property::kSparseLogitsAgree, property::kSparseTopkAgrees});
  expect_applicable(maker<PaddingOnly>(), {property::kPaddingRoundTrip, property::kSkipDecodeFillAgrees});
}

// ---- One bug per property of the ops around the logits and the top-k.

using test::PatchedReference;

struct FullMaskLeavesPastTheRow : PatchedReference {  // the full mask forgets the columns from E_r on
  void candidate_mask(Logits& l, const RowBounds& b, const CandidateBlocks& c, CandidateMask m) override {
    const Logits before = l;
    inner().candidate_mask(l, b, c, m);
    if (m != CandidateMask::full) return;
    for (int64_t r = 0; r < l.rows; ++r)
      std::copy(before.row(r) + b.end[size_t(r)], before.row(r) + l.width, l.row(r) + b.end[size_t(r)]);
  }
};

struct StridedMaskKeepsBlockZero : PatchedReference {  // the strided mask never masks the row's first block
  void candidate_mask(Logits& l, const RowBounds& b, const CandidateBlocks& c, CandidateMask m) override {
    const Logits before = l;
    inner().candidate_mask(l, b, c, m);
    if (m != CandidateMask::strided) return;
    for (int64_t r = 0; r < l.rows; ++r) {
      const int64_t start = b.start[size_t(r)], end = std::min(b.end[size_t(r)], start + c.block_size);
      std::copy(before.row(r) + start, before.row(r) + end, l.row(r) + start);
    }
  }
};

// The fused launch's top-k reads every column of a live slot, positions at or past L_r too.
struct FusedTopkPastTheRow : PatchedReference {
  void candidate_logits_top_k(const DecodeProblem& p, const Profile& f, const CandidateBlocks& c, Logits& compact,
                              TopkIndices& out) override {
    inner().candidate_logits_top_k(p, f, c, compact, out);
    for (int64_t r = 0; r < out.rows; ++r) {
      std::vector<float> values;
      std::vector<int32_t> positions;
      for (int64_t col = 0; col < compact.width; ++col)
        if (c.row(r)[col / c.block_size] >= 0) {
          values.push_back(compact.row(r)[col]);
          positions.push_back(int32_t(compact_column_position(c, r, col)));
        }
      topk_row(values.data(), int64_t(values.size()), out.k, out.row(r));
      for (int32_t s = 0; s < out.k; ++s)
        if (out.row(r)[s] >= 0) out.row(r)[s] = positions[size_t(out.row(r)[s])];
    }
  }
};

struct FusedCompactOneUlp : PatchedReference {
  void candidate_logits_top_k(const DecodeProblem& p, const Profile& f, const CandidateBlocks& c, Logits& compact,
                              TopkIndices& out) override {
    inner().candidate_logits_top_k(p, f, c, compact, out);
    for (auto& v : compact.values)
      if (std::isfinite(v)) v = std::nextafter(v, INFINITY);
  }
};

struct PrefillCompactIgnoresKs : PatchedReference {  // block c read from [c*S, ...), not [ks + c*S, ...)
  void prefill_compact_candidate_logits(const PrefillProblem& p, const Profile& f, const CandidateBlocks& c,
                                        Logits& out) override {
    PrefillProblem from_zero = p;
    for (size_t r = 0; r < p.ks.size(); ++r) from_zero.ke[r] -= from_zero.ks[r], from_zero.ks[r] = 0;
    inner().prefill_compact_candidate_logits(from_zero, f, c, out);
  }
};

struct UnpackAssumesFullRequests : PatchedReference {  // real rows taken as the first rows of the padded step
  void unpack_topk(const TopkIndices& padded, std::span<const int32_t>, TopkIndices& out) override {
    std::copy_n(padded.indices.begin(), out.indices.size(), out.indices.begin());
  }
};

struct PackPadsOnlyTheFirstByte : PatchedReference {  // a pad slot gets the pad in its first byte only
  void pack_rows(const ByteRows& ragged, std::span<const int32_t> lens, uint8_t pad, ByteRows& packed) override {
    const ByteRows before = packed;
    inner().pack_rows(ragged, lens, pad, packed);
    const int64_t next_n = packed.rows / int64_t(lens.size());
    for (int64_t r = 0; r < packed.rows; ++r)
      if (r % next_n >= lens[size_t(r / next_n)])
        std::copy(before.row(r) + 1, before.row(r) + packed.row_bytes, packed.row(r) + 1);
  }
};

struct SkipIgnoresPadding : PatchedReference {
  bool skip_decode_fill(bool prefill, int64_t decode, int64_t tokens, bool) override {
    return inner().skip_decode_fill(prefill, decode, tokens, false);
  }
};

struct SkipAcceptsAnyCount : PatchedReference {
  bool skip_decode_fill(bool prefill, int64_t decode, int64_t tokens, bool padding) override {
    return !prefill && !padding && decode == tokens;
  }
};

struct SparseEndsNotCut : PatchedReference {  // end counts whole sparse blocks, not cut at the row's end
  void expand_candidate_blocks(const CandidateBlocks& c, const RowBounds& b, SparseBlocks& out) override {
    inner().expand_candidate_blocks(c, b, out);
    for (auto& e : out.end) e = (e + out.sparse_block_kv - 1) / out.sparse_block_kv * out.sparse_block_kv;
  }
};

struct SparseIdsNotShifted : PatchedReference {  // ids of rows with ks > 0 not shifted by ks / SBK
  void expand_candidate_blocks(const CandidateBlocks& c, const RowBounds& b, SparseBlocks& out) override {
    RowBounds from_zero = b;
    for (int64_t r = 0; r < b.rows(); ++r)
      from_zero.end[size_t(r)] -= from_zero.start[size_t(r)], from_zero.start[size_t(r)] = 0;
    inner().expand_candidate_blocks(c, from_zero, out);
  }
};

struct SparseLogitsOneBf16Step : PatchedReference {  // column 0 one bf16 step up
  void sparse_logits(const DecodeProblem& p, const Profile& f, const SparseBlocks& s, Logits& out) override {
    inner().sparse_logits(p, f, s, out);
    for (int64_t r = 0; r < out.rows; ++r)
      if (s.end[size_t(r)] > 0 && std::isfinite(out.row(r)[0]))
        out.row(r)[0] = std::bit_cast<float>(std::bit_cast<uint32_t>(out.row(r)[0]) + (1u << 16));
  }
};

struct SparseTopkColumnsNotPositions : PatchedReference {  // the remap to positions forgotten
  void sparse_topk(const Logits& l, const SparseBlocks& s, std::span<const int64_t>, TopkIndices& out) override {
    const TopkIndices columns = dsa::sparse_topk(l, s, out.k);
    std::copy(columns.indices.begin(), columns.indices.end(), out.indices.begin());
  }
};

struct SparseTopkLeavesTheTail : PatchedReference {  // the -1 tail of rows with end < k never written
  void sparse_topk(const Logits& l, const SparseBlocks& s, std::span<const int64_t> ks, TopkIndices& out) override {
    TopkIndices mine = out;
    inner().sparse_topk(l, s, ks, mine);
    for (size_t i = 0; i < out.indices.size(); ++i)
      if (mine.indices[i] >= 0) out.indices[i] = mine.indices[i];
  }
};

struct FusedDriftsEverySecondCall : PatchedReference {  // the compact logits one ulp up on even calls
  int calls = 0;
  void candidate_logits_top_k(const DecodeProblem& p, const Profile& f, const CandidateBlocks& c, Logits& compact,
                              TopkIndices& out) override {
    inner().candidate_logits_top_k(p, f, c, compact, out);
    if (++calls % 2) return;
    for (auto& v : compact.values)
      if (std::isfinite(v)) v = std::nextafter(v, INFINITY);
  }
};

struct OpExpect {
  const char* property;
  const char* bug;
  std::function<std::unique_ptr<IndexerOps>()> make;
};

void PrintTo(const OpExpect& e, std::ostream* os) { *os << e.property << " / " << e.bug; }

class FuzzOpPropertyCatches : public ::testing::TestWithParam<OpExpect> {};

TEST_P(FuzzOpPropertyCatches, ItsBug) {
  const OpExpect& e = GetParam();
  const CampaignResult r = fuzz_one(e.make, e.property, 300);
  ASSERT_EQ(r.properties.size(), 1u);
  const PropertyResult& p = r.properties[0];
  ASSERT_TRUE(p.failure) << e.property << " ran " << p.cases << " cases without finding " << e.bug;
  EXPECT_TRUE(p.failure->reproduced());
  EXPECT_EQ(replay(e.make, e.property, to_json(p.failure->shrunk).dump()).verdict, Verdict::fail);
  // Shrunk to a small case: a few rows (two requests of two slots for a padding bug) and few columns.
  EXPECT_LE(case_size(p.failure->shrunk).rows, 4) << format_failure(*p.failure);
  EXPECT_LE(case_size(p.failure->shrunk).max_visible, 64) << format_failure(*p.failure);
}

INSTANTIATE_TEST_SUITE_P(
    OneBugEach, FuzzOpPropertyCatches,
    ::testing::Values(
        OpExpect{property::kCandidateMaskAgrees, "full_mask_past_row", maker<FullMaskLeavesPastTheRow>()},
        OpExpect{property::kCandidateMaskAgrees, "strided_keeps_block0", maker<StridedMaskKeepsBlockZero>()},
        OpExpect{property::kCandidateLogitsTopkAgrees, "topk_past_row", maker<FusedTopkPastTheRow>()},
        OpExpect{property::kCandidateLogitsTopkAgrees, "compact_one_ulp", maker<FusedCompactOneUlp>()},
        OpExpect{property::kPrefillCompactEqualsDense, "ignores_ks", maker<PrefillCompactIgnoresKs>()},
        OpExpect{property::kPaddingRoundTrip, "unpack_full_requests", maker<UnpackAssumesFullRequests>()},
        OpExpect{property::kPaddingRoundTrip, "pad_first_byte", maker<PackPadsOnlyTheFirstByte>()},
        OpExpect{property::kSkipDecodeFillAgrees, "ignores_padding", maker<SkipIgnoresPadding>()},
        OpExpect{property::kSkipDecodeFillAgrees, "any_count", maker<SkipAcceptsAnyCount>()},
        OpExpect{property::kSparseBlocksAgree, "ends_not_cut", maker<SparseEndsNotCut>()},
        OpExpect{property::kSparseBlocksAgree, "ids_not_shifted", maker<SparseIdsNotShifted>()},
        OpExpect{property::kSparseLogitsAgree, "one_bf16_step", maker<SparseLogitsOneBf16Step>()},
        OpExpect{property::kSparseTopkAgrees, "columns_not_positions", maker<SparseTopkColumnsNotPositions>()},
        OpExpect{property::kEveryEntryWritten, "sparse_topk_tail", maker<SparseTopkLeavesTheTail>()},
        OpExpect{property::kDeterminism, "fused_drifts", maker<FusedDriftsEverySecondCall>()}),
    [](const auto& info) { return std::string(info.param.property) + "_" + info.param.bug; });

}  // namespace
}  // namespace dsa::fuzz
