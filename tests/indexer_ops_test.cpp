// IndexerOps: the op names, the default bodies, ForwardingOps, and every op of
// the reference against the free functions it wraps and hand-worked cases.
#include "dsa/indexer_ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "candidate_test_support.hpp"
#include "ops_test_support.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/padding.hpp"
#include "dsa/sparse_sm100.hpp"
#include "test_support.hpp"

namespace dsa {
namespace {

using test::call;
using test::TakesNothing;
using test::unsupported_message;
using testing::bits_of;
using testing::kInf;

TEST(IndexerOpsNames, EveryOpRoundTripsThroughItsName) {
  const auto ops = all_ops();
  EXPECT_EQ(ops.size(), 15u);
  for (const Op op : ops) EXPECT_EQ(parse_op(to_string(op)), op) << to_string(op);
  try {
    parse_op("topk_decode");
    ADD_FAILURE() << "an unknown op parsed";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "op");
    EXPECT_NE(std::string(e.what()).find("sparse_topk"), std::string::npos) << e.what();  // lists the known ops
  }
}

TEST(IndexerOpsDefaults, EveryDefaultBodyThrowsUnsupportedNamingTheImplAndTheOp) {
  TakesNothing nothing;
  for (const Op op : all_ops())
    EXPECT_EQ(unsupported_message(nothing, op), "takes_nothing: " + std::string(to_string(op)) + " is not implemented");
}

TEST(IndexerOpsForwarding, EveryOpReachesTheInnerImplementation) {
  ForwardingOps forwarding("forwarding", std::make_unique<TakesNothing>());
  EXPECT_EQ(forwarding.name(), "forwarding");
  // The inner implementation's refusal comes back: each op was forwarded.
  for (const Op op : all_ops())
    EXPECT_EQ(unsupported_message(forwarding, op),
              "takes_nothing: " + std::string(to_string(op)) + " is not implemented");
  EXPECT_THROW(ForwardingOps("empty", nullptr), InvalidInput);
}

TEST(IndexerOpsForwarding, DefaultsToTheReference) {
  ForwardingOps forwarding("forwarding");
  EXPECT_TRUE(forwarding.skip_decode_fill(false, 4, 4, false));
  EXPECT_FALSE(forwarding.skip_decode_fill(false, 4, 4, true));
}

// ---- The reference's ops.

using oracle::poisoned_logits;
using oracle::poisoned_topk;

void expect_same_bits(const Logits& a, const Logits& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.width, b.width);
  for (size_t i = 0; i < a.values.size(); ++i)
    ASSERT_EQ(bits_of(a.values[i]), bits_of(b.values[i])) << "entry " << i << ": " << a.values[i] << " vs " << b.values[i];
}

// A prefill chunk whose rows start past 0: row r sees [ks, ke) = [3r, num_k - rows + r + 1).
PrefillProblem prefill_with_row_starts(ElementFormat element, int32_t heads, bool bf16_weights, uint64_t seed) {
  SyntheticPrefillConfig config;
  config.rows = 6;
  config.heads = heads;
  config.head_dim = 64;
  config.num_k = 80;
  config.element = element;
  Rng rng(seed);
  PrefillProblem p = make_prefill_problem(config, rng);
  for (int32_t r = 0; r < p.rows; ++r) p.ks[size_t(r)] = 3 * r;
  if (bf16_weights)
    for (float& w : p.weights) w = round_to_bf16(w);
  return p;
}

CandidateBlocks blocks_of(int64_t rows, int32_t slots, int32_t block_size, std::vector<int32_t> ids) {
  CandidateBlocks c{rows, slots, block_size, std::move(ids)};
  c.validate();
  return c;
}

TEST(ReferenceOps, PrefillTopkThroughTheOpTakesRowStarts) {
  const PrefillProblem p = prefill_with_row_starts(ElementFormat::e4m3fn, 8, false, 3);
  const Logits logits = prefill_logits(p, find_profile("exact")).logits;
  auto ops = make_reference_ops();
  TopkIndices out = poisoned_topk(p.rows, 16);
  ops->topk(logits, prefill_row_bounds(p), out);
  EXPECT_EQ(out.indices, prefill_topk(p, logits, 16).indices);
  // Indices are relative to ks: row 5 starts at 15, so its best entry is its max over [15, ke) minus 15.
  const int64_t ks = p.ks[5], ke = p.ke[5];
  const float* row = logits.row(5);
  const int64_t best = std::max_element(row + ks, row + ke) - row;
  EXPECT_EQ(out.row(5)[0], best - ks);
  for (int32_t i = 0; i < out.k; ++i) EXPECT_LT(out.row(5)[i], ke - ks);
}

TEST(ReferenceOps, CandidateMaskIsApplyCandidateMaskInPlace) {
  // Hand-worked: one row of 8 columns, blocks of 2, the row ends at 7, block 1 and 3 are candidates.
  const CandidateBlocks c = blocks_of(1, 2, 2, {3, 1});
  const RowBounds bounds{{0}, {7}};
  auto ops = make_reference_ops();
  Logits full{1, 8, {0, 1, 2, 3, 4, 5, 6, 7}}, strided = full;
  ops->candidate_mask(full, bounds, c, CandidateMask::full);
  ops->candidate_mask(strided, bounds, c, CandidateMask::strided);
  EXPECT_EQ(full.values, (std::vector<float>{-kInf, -kInf, 2, 3, -kInf, -kInf, 6, -kInf}));  // -inf past E_r too
  EXPECT_EQ(strided.values, (std::vector<float>{-kInf, -kInf, 2, 3, -kInf, -kInf, 6, 7}));   // the rest as it was

  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 8, 64, {90, 37}, 2, 11);
  Logits dense = decode_logits(p, find_profile("exact")).logits;
  const CandidateBlocks chosen = select_candidate_blocks(p, dense, 16, 3);
  for (const CandidateMask variant : {CandidateMask::full, CandidateMask::strided}) {
    Logits mine = dense, theirs = dense;
    ops->candidate_mask(mine, candidate_row_bounds(p), chosen, variant);
    apply_candidate_mask(theirs, candidate_row_bounds(p), chosen, variant);
    expect_same_bits(mine, theirs);
  }
}

TEST(ReferenceOps, PrefillCompactIsPrefillDenseAtThePositionsForEveryProfileThatTakesFp8) {
  int profiles_run = 0;
  for (const std::string& name : profile_names()) {
    const Profile& profile = find_profile(name);
    for (const ElementFormat element : {ElementFormat::e4m3fn, ElementFormat::e4m3fnuz}) {
      if (!profile.accepts(element)) continue;
      SCOPED_TRACE(name + " " + std::string(to_string(element)));
      const PrefillProblem p = prefill_with_row_starts(element, testing::heads_for(profile), true, 5);
      const Logits dense = prefill_logits(p, profile).logits;
      // S = 8: blocks in any order, a -1 slot, blocks past ke.
      const CandidateBlocks c = blocks_of(p.rows, 4, 8,
                                          {0, 9, -1, 3, 8, 1, 2, -1, 5, 0, 7, 6, -1, -1, -1, 2, 4, 3, 9, 8, 1, 0, 6, 5});
      Logits out = poisoned_logits(p.rows, 32);
      make_reference_ops()->prefill_compact_candidate_logits(p, profile, c, out);
      expect_same_bits(out, prefill_compact_candidate_logits(p, profile, c));
      for (int64_t r = 0; r < p.rows; ++r)
        for (int64_t col = 0; col < out.width; ++col) {
          const int64_t pos = compact_column_position(c, r, col);
          const int64_t column = p.ks[size_t(r)] + pos;
          const float want = pos >= 0 && column < p.ke[size_t(r)] ? dense.at(r, column) : -kInf;
          ASSERT_EQ(bits_of(out.at(r, col)), bits_of(want)) << "row " << r << " compact column " << col;
        }
      ++profiles_run;
    }
  }
  EXPECT_GE(profiles_run, 4);  // exact, deepgemm_sm90, deepgemm_sm100(_bf16), aiter, ...
}

TEST(ReferenceOps, PrefillLogitsAtEqualsPrefillLogits) {
  const PrefillProblem p = prefill_with_row_starts(ElementFormat::e4m3fn, 16, false, 9);
  const Profile& profile = find_profile("deepgemm_sm90");
  const Logits dense = prefill_logits(p, profile).logits;
  // Any order, duplicates, and columns outside [ks, ke) (which give -inf).
  std::vector<std::vector<int64_t>> positions(size_t(p.rows));
  for (int64_t r = 0; r < p.rows; ++r)
    positions[size_t(r)] = {p.ke[size_t(r)] - 1, 0, p.ks[size_t(r)], -1, p.ks[size_t(r)], p.ke[size_t(r)], 20};
  const auto at = prefill_logits_at(p, profile, positions);
  for (int64_t r = 0; r < p.rows; ++r)
    for (size_t i = 0; i < positions[size_t(r)].size(); ++i) {
      const int64_t col = positions[size_t(r)][i];
      const float want = col >= p.ks[size_t(r)] && col < p.ke[size_t(r)] ? dense.at(r, col) : -kInf;
      EXPECT_EQ(bits_of(at[size_t(r)][i]), bits_of(want)) << "row " << r << " column " << col;
    }
  EXPECT_THROW(prefill_logits_at(p, profile, {}), InvalidInput);
}

TEST(ReferenceOps, FusedLaunchIsCompactLogitsThenCompactTopk) {
  const Profile& profile = find_profile("aiter_gfx942_gluon");
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fnuz, testing::heads_for(profile), 64,
                                                        {300, 77, 16}, 2, 21);
  const Logits dense = decode_logits(p, profile).logits;
  const CandidateBlocks c = select_candidate_blocks(p, dense, 16, 5);
  auto ops = make_reference_ops();
  Logits compact = poisoned_logits(p.rows(), 5 * 16);
  TopkIndices out = poisoned_topk(p.rows(), 24);
  ops->candidate_logits_top_k(p, profile, c, compact, out);
  const Logits want_compact = compact_candidate_logits(p, profile, c);
  expect_same_bits(compact, want_compact);
  EXPECT_EQ(out.indices, compact_candidate_topk(want_compact, c, visible_lens(p), 24).indices);
  // And the positions are the dense candidate top-k's.
  EXPECT_EQ(out.indices, candidate_topk(p, dense, c, 24).indices);

  Logits wrong = poisoned_logits(p.rows(), 5 * 16 + 1);
  try {
    ops->candidate_logits_top_k(p, profile, c, wrong, out);
    ADD_FAILURE() << "a wrong compact buffer was taken";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "compact_logits") << e.what();
  }
}

TEST(ReferenceOps, CompactLogitsThroughTheOpIsTheFreeFunction) {
  const Profile& profile = find_profile("deepgemm_sm90");
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 16, 64, {130, 5}, 1, 4);
  const CandidateBlocks c = blocks_of(2, 3, 16, {8, 0, -1, 0, 3, 1});
  Logits out = poisoned_logits(2, 48);
  make_reference_ops()->compact_candidate_logits(p, profile, c, out);
  expect_same_bits(out, compact_candidate_logits(p, profile, c));
}

TEST(ReferenceOps, PackRowsHandWorkedAndRoundTrip) {
  // Two requests of 2 and 1 rows of 3 bytes, packed to next_n = 3.
  const std::vector<int32_t> lens{2, 1};
  const ByteRows ragged{3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  ByteRows packed{6, 3, std::vector<uint8_t>(18, 0xEE)};
  auto ops = make_reference_ops();
  ops->pack_rows(ragged, lens, 0x7F, packed);
  EXPECT_EQ(packed.bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 0x7F, 0x7F, 0x7F,  //
                                                7, 8, 9, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F}));
  EXPECT_EQ(unpack_rows<uint8_t>(packed.bytes, lens, 3, 3), ragged.bytes);

  // A padded decode q: the op packs what pack_decode_rows packs.
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 8, 64, {40, 70, 20}, 1, 2);
  RaggedDecodeRows rows;
  rows.decode_lens = {3, 1, 2};
  const int64_t row_bytes = 8 * 64;
  rows.q.resize(6 * size_t(row_bytes));
  std::iota(rows.q.begin(), rows.q.end(), uint8_t(0));
  rows.weights.assign(6 * 8, 0.5f);
  DecodeProblem packed_problem = p;
  pack_decode_rows(packed_problem, rows);
  ByteRows q{6, row_bytes, rows.q}, q_packed{9, row_bytes, std::vector<uint8_t>(9 * size_t(row_bytes))};
  ops->pack_rows(q, rows.decode_lens, q_pad_byte(ElementFormat::e4m3fn), q_packed);
  EXPECT_EQ(q_packed.bytes, packed_problem.q);

  ByteRows uneven{7, 3, std::vector<uint8_t>(21)};
  EXPECT_THROW(ops->pack_rows(ragged, lens, 0, uneven), InvalidInput);  // 7 rows is not next_n per request
  ByteRows short_rows{6, 2, std::vector<uint8_t>(12)};
  EXPECT_THROW(ops->pack_rows(ragged, lens, 0, short_rows), InvalidInput);
}

TEST(ReferenceOps, UnpackTopkDropsThePaddedRows) {
  const std::vector<int32_t> lens{1, 2};
  const TopkIndices padded{4, 2, {10, 11, -1, -1, 20, 21, 30, 31}};
  TopkIndices out = poisoned_topk(3, 2);
  auto ops = make_reference_ops();
  ops->unpack_topk(padded, lens, out);
  EXPECT_EQ(out.indices, (std::vector<int32_t>{10, 11, 20, 21, 30, 31}));
  EXPECT_EQ(out.indices, unpack_topk(padded, lens, 2).indices);
  TopkIndices wrong_k = poisoned_topk(3, 3);
  EXPECT_THROW(ops->unpack_topk(padded, lens, wrong_k), InvalidInput);
  TopkIndices wrong_rows = poisoned_topk(4, 2);
  EXPECT_THROW(ops->unpack_topk(padded, lens, wrong_rows), InvalidInput);
}

TEST(ReferenceOps, SkipDecodeFillIsTheRuleOfPadding) {
  auto ops = make_reference_ops();
  for (const bool prefill : {false, true})
    for (const bool padding : {false, true})
      for (const int64_t decode_tokens : {0, 3, 4})
        EXPECT_EQ(ops->skip_decode_fill(prefill, decode_tokens, 4, padding),
                  skip_decode_fill(prefill, decode_tokens, 4, padding));
  EXPECT_TRUE(ops->skip_decode_fill(false, 4, 4, false));
  EXPECT_THROW(ops->skip_decode_fill(false, 5, 4, false), InvalidInput);
}

TEST(ReferenceOps, SparseOpsAreTheSm100Functions) {
  const Profile& profile = find_profile("deepgemm_sm100_bf16");
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::mxfp4, 16, 64, {150, 33, 64}, 1, 8, 64);
  const CandidateBlocks c = blocks_of(3, 2, 32, {4, 1, 0, 3, -1, 1});
  auto ops = make_reference_ops();

  const SparseBlocks want = expand_candidate_blocks(p, c);
  SparseBlocks sparse = oracle::poisoned_sparse(3, want.num_sparse, want.sparse_block_kv);
  ops->expand_candidate_blocks(c, topk_row_bounds(p), sparse);
  EXPECT_EQ(sparse.ids, want.ids);
  EXPECT_EQ(sparse.end, want.end);

  Logits values = poisoned_logits(3, want.width());
  ops->sparse_logits(p, profile, sparse, values);
  expect_same_bits(values, sparse_logits(p, profile, want));

  const std::vector<int64_t> row_ks(3, 0);
  TopkIndices out = poisoned_topk(3, 20);
  ops->sparse_topk(values, sparse, row_ks, out);
  EXPECT_EQ(out.indices, sparse_candidate_topk(p, profile, c, 20).indices);

  SparseBlocks wrong = sparse;
  wrong.num_sparse += 1;
  wrong.ids.resize(size_t(3 * wrong.num_sparse));
  try {
    ops->expand_candidate_blocks(c, topk_row_bounds(p), wrong);
    ADD_FAILURE() << "a wrong sparse buffer was taken";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "sparse_block_ids") << e.what();
  }
}

TEST(ReferenceOps, WrongOutputBuffersAreNamed) {
  const DecodeProblem p = testing::small_decode_problem(ElementFormat::e4m3fn, 8, 64, {40}, 1, 2);
  auto ops = make_reference_ops();
  const Profile& profile = find_profile("exact");
  Logits narrow = poisoned_logits(1, p.logits_width - 1);
  try {
    ops->decode_logits(p, profile, narrow);
    ADD_FAILURE() << "a narrow logits buffer was taken";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "logits") << e.what();
  }
  // The declared shape is right but the storage is not: still refused, never written past.
  Logits hollow{1, p.logits_width, std::vector<float>(3)};
  EXPECT_THROW(ops->decode_logits(p, profile, hollow), InvalidInput);
  const Logits logits = decode_logits(p, profile).logits;
  TopkIndices no_k{1, 0, {}};
  try {
    ops->topk(logits, topk_row_bounds(p), no_k);
    ADD_FAILURE() << "k = 0 was taken";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "topk") << e.what();
  }
}

}  // namespace
}  // namespace dsa
