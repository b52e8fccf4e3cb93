// The fuzzer's generators: valid cases within their work limits, the lengths,
// layouts and values that matter all drawn, descriptions that round-trip
// through JSON, and arrays that depend only on the description.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "dsa/error.hpp"
#include "dsa/fuzz/generators.hpp"
#include "dsa/kcache.hpp"
#include "dsa/padding.hpp"
#include "fuzz_test_support.hpp"

namespace dsa::fuzz {
namespace {

using test::sample;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(FuzzGenerators, TopkCasesStayWithinTheirLimits) {
  const GenLimits limits;
  for (const TopkCase& c : sample(gen_topk_case(limits), test::scaled_count(60), 11)) {
    ASSERT_GE(c.rows.size(), 1u);
    ASSERT_LE(int32_t(c.rows.size()), limits.max_rows);
    ASSERT_GE(c.k, 1);
    ASSERT_LE(c.k, 2048);
    const Logits logits = make_logits(c);
    EXPECT_LE(logits.rows * logits.width, limits.logits_elements + logits.rows * 300) << summary(c);
    for (const TopkRow& r : c.rows) {
      EXPECT_GE(r.len, 0);
      EXPECT_LE(r.start + r.len, logits.width);
    }
  }
}

TEST(FuzzGenerators, DrawTheLengthsThatMatter) {
  std::set<std::string> seen;
  int64_t longest = 0;
  for (const TopkCase& c : sample(gen_topk_case(), 400, 12))
    for (const TopkRow& r : c.rows) {
      if (r.len == 0) seen.insert("0");
      if (r.len == 1) seen.insert("1");
      if (r.len == c.k - 1 && c.k > 2) seen.insert("k-1");
      if (r.len == c.k && c.k > 1) seen.insert("k");
      if (r.len == c.k + 1) seen.insert("k+1");
      if (r.len == 16385) seen.insert("16385");
      if (r.start > 0) seen.insert("offset");
      longest = std::max(longest, r.len);
    }
  for (const char* want : {"0", "1", "k-1", "k", "k+1", "16385", "offset"}) EXPECT_TRUE(seen.count(want)) << want;
  EXPECT_GE(longest, int64_t(1) << 17);
}

TEST(FuzzGenerators, DrawEveryValueDistribution) {
  std::set<ValueKind> kinds;
  std::set<TailKind> tails;
  for (const TopkCase& c : sample(gen_topk_case(), 200, 13)) {
    tails.insert(c.tail);
    for (const TopkRow& r : c.rows) kinds.insert(r.values);
  }
  EXPECT_EQ(kinds.size(), 10u);
  EXPECT_EQ(tails.size(), 2u);
}

TEST(FuzzGenerators, ValueDistributionsAreWhatTheySay) {
  TopkCase c;
  c.k = 1;
  c.seed = 3;
  for (ValueKind kind : {ValueKind::few_levels, ValueKind::constant, ValueKind::mostly_neg_inf,
                         ValueKind::one_coarse_bin, ValueKind::nan_heavy, ValueKind::below_fp16})
    c.rows.push_back({0, 4096, kind, 5});
  const Logits logits = make_logits(c);
  std::set<float> levels, below;
  int64_t neg_inf = 0, nan = 0;
  for (int64_t i = 0; i < 4096; ++i) {
    levels.insert(logits.at(0, i));
    EXPECT_EQ(logits.at(1, i), logits.at(1, 0));
    neg_inf += std::isinf(logits.at(2, i));
    const float v = logits.at(3, i);
    EXPECT_TRUE(v >= 1.0f && v < 1.0f + std::ldexp(1.0f, -11)) << v;  // one fp16 value: 1.0
    nan += std::isnan(logits.at(4, i));
    const float w = logits.at(5, i);
    EXPECT_TRUE(std::isfinite(w)) << w;
    if (w < -65520.0f) below.insert(w);  // past fp16's largest finite magnitude, by rounding too
  }
  EXPECT_LE(levels.size(), 4u);
  EXPECT_NEAR(double(neg_inf) / 4096, 7.0 / 8, 0.03);
  EXPECT_NEAR(double(nan) / 4096, 7.0 / 8, 0.03);
  EXPECT_NEAR(double(below.size()) / 4096, 15.0 / 16, 0.03);  // distinct values, nearly all
}

TEST(FuzzGenerators, CandidateCasesAreValid) {
  for (const CandidateCase& c : sample(gen_candidate_case(), test::scaled_count(60), 14)) {
    const Logits logits = make_logits(c);
    const RowBounds cb = candidate_bounds(c), tb = topk_bounds(c);
    ASSERT_EQ(cb.rows(), logits.rows);
    for (int64_t r = 0; r < logits.rows; ++r) {
      EXPECT_LE(tb.end[size_t(r)], cb.end[size_t(r)]);  // L_r <= E_r (SPEC 7)
      EXPECT_LE(cb.end[size_t(r)], logits.width);
    }
    const CandidateBlocks blocks = make_candidates(c, logits);
    EXPECT_NO_THROW(blocks.validate()) << summary(c);
    EXPECT_EQ(blocks.rows, logits.rows);
  }
}

TEST(FuzzGenerators, DecodeCasesBuildValidProblemsWithinTheWorkLimit) {
  const GenLimits limits;
  std::set<std::string> seen;
  int built = 0;
  for (const DecodeCase& c : sample(gen_decode_case(limits), 150, 15)) {
    EXPECT_LE(decode_products(c), decode_product_limit(c, limits)) << summary(c);
    if (built++ % (3 * test::fuzz_scale()) == 0) {  // a third of them built: the arrays cost more than the drawing
      DecodeProblem p;
      ASSERT_NO_THROW(p = make_problem(c)) << summary(c);
      int64_t products = 0;
      for (int64_t r = 0; r < p.rows(); ++r) products += visible_len(p, r) * p.heads * p.head_dim;
      EXPECT_LE(products, decode_product_limit(c, limits));
      if (c.padded && requires_padding(p)) seen.insert("padded");
    }
    EXPECT_TRUE(profile_of(c).accepts(c.element));
    if (c.layout == CacheLayout::preshuffle) {
      EXPECT_TRUE(c.head_dim == 128 && c.block_size % 16 == 0);
    }
    if (c.padded) {
      EXPECT_FALSE(c.lens_2d);
    }
    seen.insert(std::string(to_string(c.layout)) + "/" + std::string(to_string(c.element)));
    if (c.lens_2d) seen.insert("2-D");
    if (c.compress_ratio == 4 && !c.lens_2d) seen.insert("ratio 4");
    if (c.page_table == PageTableKind::shared && c.requests.size() > 1) seen.insert("shared");
    if (c.page_table == PageTableKind::non_contiguous) seen.insert("non_contiguous");
    if (c.next_n == 8) seen.insert("next_n 8");
    if (c.requests.size() >= 32) seen.insert("batch >= 32");
    if (c.k_scales == ScaleKind::huge) seen.insert("huge scales");
    if (c.k_codes == CodeKind::subnormal_codes || c.q_codes == CodeKind::subnormal_codes) seen.insert("subnormal");
    seen.insert("H" + std::to_string(c.heads));
    seen.insert("D" + std::to_string(c.head_dim));
    seen.insert(c.profile);
  }
  for (const char* want : {"block_flat/e4m3fn", "block_flat/e4m3fnuz", "preshuffle/e4m3fnuz", "mxfp4/mxfp4", "padded",
                           "2-D", "ratio 4", "shared", "non_contiguous", "next_n 8", "batch >= 32", "huge scales",
                           "subnormal", "H8", "H16", "H32", "H64", "D64", "D128", "exact", "deepgemm_sm90"})
    EXPECT_TRUE(seen.count(want)) << want;
}

TEST(FuzzGenerators, PrefillCasesBuildValidProblems) {
  for (const PrefillCase& c : sample(gen_prefill_case(), test::scaled_count(80), 16)) {
    PrefillProblem p;
    ASSERT_NO_THROW(p = make_problem(c)) << summary(c);
    for (int32_t r = 0; r < p.rows; ++r) EXPECT_LE(p.ke[size_t(r)], p.num_k);
  }
}

TEST(FuzzGenerators, PaddedOnlyDrawsPaddedSteps) {
  for (const DecodeCase& c : sample(gen_decode_case({}, {.padded_only = true}), test::scaled_count(40), 17)) {
    EXPECT_TRUE(c.padded);
    EXPECT_GE(c.next_n, 2);
    for (const auto& q : c.requests) EXPECT_TRUE(q.decode_len >= 1 && q.decode_len <= c.next_n);
  }
}

TEST(FuzzGenerators, CasesRoundTripThroughJson) {
  std::vector<FuzzCase> cases;
  for (auto& c : sample(gen_topk_case(), test::scaled_count(30), 18)) cases.emplace_back(c);
  for (auto& c : sample(gen_candidate_case(), test::scaled_count(30), 19)) cases.emplace_back(c);
  for (auto& c : sample(gen_decode_case(), test::scaled_count(30), 20)) cases.emplace_back(c);
  for (auto& c : sample(gen_prefill_case(), test::scaled_count(30), 21)) cases.emplace_back(c);
  for (const FuzzCase& c : cases) {
    const nlohmann::json j = to_json(c);
    const FuzzCase back = case_from_json(nlohmann::json::parse(j.dump()));
    EXPECT_EQ(to_json(back), j);
    EXPECT_EQ(kind_name(back), kind_name(c));
  }
}

TEST(FuzzGenerators, MalformedReplayStringsAreRejectedByName) {
  auto error_of = [](const std::string& text) {
    try {
      case_from_json(nlohmann::json::parse(text));
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.argument(), "replay");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(R"({"kind":"sorting"})").find("unknown case kind"), std::string::npos);
  EXPECT_NE(error_of(R"({"kind":"topk","k":1,"width_pad":0,"seed":0,"rows":[]})").find("tail"), std::string::npos);
  EXPECT_NE(error_of(R"({"kind":"topk","k":1,"width_pad":0,"tail":"lava","seed":0,"rows":[]})").find("lava"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind":"topk","k":1,"width_pad":0,"tail":"garbage","seed":0,"rows":[[0]]})").find("rows"),
            std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("object"), std::string::npos);
}

TEST(FuzzGenerators, ArraysDependOnlyOnTheDescription) {
  for (const DecodeCase& c : sample(gen_decode_case(), test::scaled_count(20), 22)) {
    const DecodeProblem a = make_problem(c), b = make_problem(std::get<DecodeCase>(case_from_json(to_json(c))));
    EXPECT_EQ(a.q, b.q);
    EXPECT_EQ(a.cache.bytes, b.cache.bytes);
    EXPECT_EQ(a.block_table, b.block_table);
    EXPECT_TRUE(same_bits(a.weights, b.weights));
  }
  for (const TopkCase& c : sample(gen_topk_case(), test::scaled_count(20), 23)) EXPECT_TRUE(same_bits(make_logits(c).values, make_logits(c).values));
}

// Shrinking drops rows; the rows left must keep their data, or a shrunk case
// would fail for another reason than the original.
TEST(FuzzGenerators, RowsKeepTheirDataWhenOthersAreDropped) {
  TopkCase c;
  c.k = 4;
  c.seed = 9;
  c.rows = {{0, 50, ValueKind::normal, 1}, {3, 40, ValueKind::few_levels, 2}, {0, 70, ValueKind::extremes, 3}};
  TopkCase dropped = c;
  dropped.rows.erase(dropped.rows.begin());
  const Logits full = make_logits(c), part = make_logits(dropped);
  for (int64_t r = 0; r < 2; ++r) {
    const TopkRow& row = dropped.rows[size_t(r)];
    EXPECT_EQ(std::memcmp(full.row(r + 1) + row.start, part.row(r) + row.start, size_t(row.len) * sizeof(float)), 0);
  }

  DecodeCase d;
  d.seed = 4;
  d.next_n = 2;
  d.requests = {{40, {}, 0, 7}, {33, {}, 0, 8}};
  DecodeCase second = d;
  second.requests.erase(second.requests.begin());
  const DecodeProblem p = make_problem(d), q = make_problem(second);
  const size_t row_bytes = size_t(p.heads) * size_t(p.head_dim);
  EXPECT_TRUE(std::equal(p.q.begin() + int64_t(2 * row_bytes), p.q.end(), q.q.begin()));
  const Logits lp = decode_logits(p, find_profile("exact")).logits, lq = decode_logits(q, find_profile("exact")).logits;
  for (int64_t j = 0; j < 2; ++j)
    EXPECT_EQ(std::memcmp(lp.row(2 + j), lq.row(j), size_t(visible_len(q, j)) * sizeof(float)), 0);
}

TEST(FuzzGenerators, PageTablesAreShuffledSharedAndNonContiguous) {
  DecodeCase c;
  c.seed = 5;
  c.block_size = 16;
  c.requests = {{64, {}, 0, 1}, {64, {}, 0, 2}};
  c.page_table = PageTableKind::shared;
  DecodeProblem p = make_problem(c);
  // Request 1 reads request 0's pages (prefix sharing).
  for (int i = 0; i < 4; ++i) EXPECT_EQ(p.block_table[size_t(i)], p.block_table[size_t(p.max_pages + i)]);
  c.page_table = PageTableKind::non_contiguous;
  p = make_problem(c);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(p.block_table[size_t(i)] % 2, 1);  // junk pages between
  c.page_table = PageTableKind::contiguous;
  const Logits contiguous = decode_logits(make_problem(c), find_profile("exact")).logits;
  c.page_table = PageTableKind::shuffled;
  const Logits shuffled = decode_logits(make_problem(c), find_profile("exact")).logits;
  EXPECT_TRUE(same_bits(contiguous.values, shuffled.values));  // same tokens, other pages
}

}  // namespace
}  // namespace dsa::fuzz
