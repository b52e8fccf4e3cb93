// The SM100 sparse form (SPEC 7): expansion of candidate blocks to sparse
// block ids with `end`, the bf16 sparse logits (bit-identical to the dense
// bf16 logits at the same positions), DeepSelect's top-k and the remap.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "candidate_test_support.hpp"
#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/sparse_sm100.hpp"

namespace dsa {
namespace {

using testing::bits_of;
using testing::kInf;
using testing::kNaN;
using testing::row_of;

std::vector<int32_t> ids_of(const SparseBlocks& s, int64_t r) { return {s.row(r), s.row(r) + s.num_sparse}; }

SparseBlocks expand_one(std::vector<int32_t> ids, int32_t S, int64_t ks, int64_t ke) {
  const CandidateBlocks cand{1, int32_t(ids.size()), S, std::move(ids)};
  return expand_candidate_blocks(cand, RowBounds{{ks}, {ke}});
}

TEST(SparseBlockKv, LargestOf16And8DividingTheCandidateBlock) {
  EXPECT_EQ(pick_sparse_block_kv(8), 8);
  EXPECT_EQ(pick_sparse_block_kv(16), 16);
  EXPECT_EQ(pick_sparse_block_kv(32), 16);
  EXPECT_EQ(pick_sparse_block_kv(24), 8);
  EXPECT_EQ(pick_sparse_block_kv(40), 8);
  for (const int32_t bad : {4, 12, 0, -16}) EXPECT_THROW(pick_sparse_block_kv(bad), InvalidInput) << bad;
}

TEST(ExpandCandidateBlocks, SortedValidIdsThenTheLastRepeated) {
  // S = 32: SBK 16, two sparse blocks per candidate. ke = 100: ids below ceil(100/16) = 7 are valid.
  const auto s = expand_one({3, -1, 0, 7}, 32, 0, 100);
  EXPECT_EQ(s.sparse_block_kv, 16);
  EXPECT_EQ(s.num_sparse, 8);
  EXPECT_EQ(s.width(), 128);
  EXPECT_EQ(ids_of(s, 0), (std::vector<int32_t>{0, 1, 6, 6, 6, 6, 6, 6}));
  EXPECT_EQ(s.end[0], 2 * 16 + 4);  // the last block holds entries 96..99
}

TEST(ExpandCandidateBlocks, RowEndingOnASparseBlockAndOnePastIt) {
  auto s = expand_one({3, -1, 0, 7}, 32, 0, 96);
  EXPECT_EQ(ids_of(s, 0), (std::vector<int32_t>{0, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(s.end[0], 32);
  s = expand_one({3, -1, 0, 7}, 32, 0, 97);
  EXPECT_EQ(ids_of(s, 0), (std::vector<int32_t>{0, 1, 6, 6, 6, 6, 6, 6}));
  EXPECT_EQ(s.end[0], 33);
}

TEST(ExpandCandidateBlocks, EmptyRowsRepeatTheBase) {
  auto s = expand_one({2, 0}, 8, 0, 0);
  EXPECT_EQ(ids_of(s, 0), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(s.end[0], 0);
  s = expand_one({-1, -1}, 8, 0, 50);
  EXPECT_EQ(s.end[0], 0);
  s = expand_one({-1, 9}, 8, 24, 40);  // block 9 lies past the row
  EXPECT_EQ(ids_of(s, 0), (std::vector<int32_t>{3, 3}));
  EXPECT_EQ(s.end[0], 0);
}

TEST(ExpandCandidateBlocks, RatioThreeForBlocksOf24) {
  const auto s = expand_one({1, -1}, 24, 0, 1000);
  EXPECT_EQ(s.sparse_block_kv, 8);
  EXPECT_EQ(ids_of(s, 0), (std::vector<int32_t>{3, 4, 5, 5, 5, 5}));
  EXPECT_EQ(s.end[0], 24);
}

TEST(ExpandCandidateBlocks, PrefillRowWithUnalignedKs) {
  // ks = 13, ke = 50 (37 entries), SBK = 8: base 13 / 8 = 1; block i of the
  // row starts at packed column i*8 + 13 % 8.
  const auto s = expand_one({4, 0, 2}, 8, 13, 50);
  EXPECT_EQ(ids_of(s, 0), (std::vector<int32_t>{1, 3, 5}));
  EXPECT_EQ(s.end[0], 2 * 8 + 5);  // the last block starts at 4*8 + 13 = 45: entries 45..49
  const std::vector<int64_t> ks = {13};
  EXPECT_EQ(sparse_column_position(s, ks, 0, 0), 0);
  EXPECT_EQ(sparse_column_position(s, ks, 0, 17), 33);  // block 2 of the row (id 5), offset 1
  EXPECT_EQ(sparse_column_position(s, ks, 0, 20), 36);  // packed 49 = ke - 1
  const TopkIndices columns{1, 4, {17, 0, 20, -1}};
  EXPECT_EQ(remap_sparse_topk(columns, s, ks).indices, (std::vector<int32_t>{33, 0, 36, -1}));
}

TEST(SparseTopk, ReadsOnlyTheValidPrefixAndFillsMinusOne) {
  const auto s = expand_one({1, 0}, 8, 0, 13);  // ids {0, 1}, end 13
  ASSERT_EQ(s.end[0], 13);
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[size_t(i)] = float(i % 5);
  v[14] = 1e9f;  // the kernel's padding columns: never read
  v[15] = kNaN;
  const Logits logits{1, 16, v};
  EXPECT_EQ(row_of(sparse_topk(logits, s, 16), 0),
            (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, -1, -1}));
  EXPECT_EQ(row_of(sparse_topk(logits, s, 4), 0), (std::vector<int32_t>{4, 9, 3, 8}));
  v[2] = kNaN;
  v[7] = -0.0f;
  EXPECT_EQ(row_of(sparse_topk(Logits{1, 16, v}, s, 3), 0), (std::vector<int32_t>{2, 4, 9}));
  EXPECT_THROW(sparse_topk(logits, s, 0), InvalidInput);
  EXPECT_THROW(sparse_topk(logits, s, kDeepSelectMaxK + 1), InvalidInput);
  EXPECT_NO_THROW(sparse_topk(logits, s, kDeepSelectMaxK));
}

DecodeProblem mxfp4_problem(std::vector<int32_t> lens, int32_t next_n, uint64_t seed, int32_t heads = 16,
                            int32_t head_dim = 128) {
  return testing::small_decode_problem(ElementFormat::mxfp4, heads, head_dim, std::move(lens), next_n, seed, 64);
}

// "" when every valid sparse column holds the dense logit of its entry (bits)
// and the columns past `end` are -inf.
std::string sparse_mismatch(const Logits& dense, const Logits& sparse_logits, const SparseBlocks& s) {
  const std::vector<int64_t> zero(size_t(s.rows), 0);
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t col = 0; col < s.width(); ++col) {
      const float want = col < s.end[size_t(r)] ? dense.at(r, sparse_column_position(s, zero, r, col)) : -kInf;
      if (bits_of(sparse_logits.at(r, col)) != bits_of(want))
        return "row " + std::to_string(r) + " column " + std::to_string(col);
    }
  return "";
}

TEST(SparseLogits, BitIdenticalToTheDenseBf16Logits) {
  const DecodeProblem p = mxfp4_problem({300, 129, 0}, 2, 17);
  const Profile& profile = find_profile("deepgemm_sm100_bf16");
  const Logits dense = decode_logits(p, profile).logits;
  const CandidateBlocks cand = select_candidate_blocks(p, dense, 32, 4);
  const SparseBlocks s = expand_candidate_blocks(p, cand);
  const Logits sparse = sparse_logits(p, profile, s);
  EXPECT_EQ(sparse.width, 4 * 32);
  EXPECT_EQ(sparse_mismatch(dense, sparse, s), "");
  // The valid columns are exactly the candidate positions the row sees.
  const auto lens = visible_lens(p);
  const std::vector<int64_t> zero(size_t(p.rows()), 0);
  for (int64_t r = 0; r < p.rows(); ++r) {
    std::vector<int64_t> got, want;
    for (int64_t col = 0; col < s.end[size_t(r)]; ++col) got.push_back(sparse_column_position(s, zero, r, col));
    for (int32_t c = 0; c < cand.slots; ++c)
      for (int64_t t = 0; t < 32 && cand.row(r)[c] >= 0; ++t)
        if (cand.row(r)[c] * 32 + t < lens[size_t(r)]) want.push_back(cand.row(r)[c] * 32 + t);
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << "row " << r;
  }
  EXPECT_EQ(s.end[4], 0);  // the empty request
}

TEST(SparseLogits, RejectsAnFp8CacheAndFp32Logits) {
  const DecodeProblem fp8 = testing::small_decode_problem(ElementFormat::e4m3fn, 16, 128, {40}, 1, 1);
  const CandidateBlocks cand{1, 1, 16, {0}};
  EXPECT_THROW(sparse_logits(fp8, find_profile("deepgemm_sm100_bf16"), expand_candidate_blocks(fp8, cand)),
               InvalidInput);
  const DecodeProblem p = mxfp4_problem({40}, 1, 1);
  EXPECT_THROW(sparse_logits(p, find_profile("exact"), expand_candidate_blocks(p, cand)), InvalidInput);
}

// The whole sparse step equals the candidate top-k on the dense bf16 logits:
// sorted unique ids keep positions ascending, so even ties agree.
TEST(SparseCandidateTopk, EqualsCandidateTopkOnTheDenseLogits) {
  testing::check_property(8, [] {
    const int32_t batch = *rc::gen::inRange(1, 4);
    std::vector<int32_t> lens;
    for (int32_t b = 0; b < batch; ++b) lens.push_back(*rc::gen::inRange(0, 700));
    const DecodeProblem p = mxfp4_problem(lens, *rc::gen::inRange(1, 3), *rc::gen::arbitrary<uint64_t>(),
                                          *rc::gen::element(8, 16), *rc::gen::element(64, 128));
    const Profile& profile = find_profile("deepgemm_sm100_bf16");
    const Logits dense = decode_logits(p, profile).logits;
    const int32_t S = *rc::gen::element(8, 16, 32, 48);
    CandidateBlocks cand;
    if (*rc::gen::arbitrary<bool>()) {
      cand = select_candidate_blocks(p, dense, S, *rc::gen::inRange(1, 12));
    } else {
      const int32_t C = *rc::gen::inRange(1, 12);
      cand = CandidateBlocks{p.rows(), C, S, {}};
      for (int64_t r = 0; r < p.rows(); ++r) {
        std::set<int32_t> used;
        for (int32_t c = 0; c < C; ++c) {
          int32_t id = *rc::gen::inRange<int32_t>(-1, int32_t(p.logits_width / S + 2));
          if (!used.insert(id).second) id = -1;
          cand.blocks.push_back(id);
        }
      }
    }
    const SparseBlocks s = expand_candidate_blocks(p, cand);
    for (int64_t r = 0; r < s.rows; ++r) {
      const int32_t valid = (s.end[size_t(r)] + s.sparse_block_kv - 1) / s.sparse_block_kv;
      RC_ASSERT(std::is_sorted(s.row(r), s.row(r) + valid));
      RC_ASSERT(std::adjacent_find(s.row(r), s.row(r) + valid) == s.row(r) + valid);
      if (valid > 0)
        RC_ASSERT(std::all_of(s.row(r) + valid, s.row(r) + s.num_sparse, [&](int32_t id) { return id == s.row(r)[valid - 1]; }));
    }
    const std::string miss = sparse_mismatch(dense, sparse_logits(p, profile, s), s);
    if (!miss.empty()) RC_FAIL(miss);
    const int k = *rc::gen::inRange(1, 100);
    RC_ASSERT(sparse_candidate_topk(p, profile, cand, k).indices == candidate_topk(p, dense, cand, k).indices);
  });
}

}  // namespace
}  // namespace dsa
