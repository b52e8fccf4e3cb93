// `deepgemm_sm90` against the real kernel: every valid logit (columns below
// each row's valid_len) of DeepGEMM's SM90 paged MQA logits, run on an H200
// (data/deepgemm_sm90/*.npz, made outside the project), bit for bit; any NaN
// matches any NaN. Once through decode_logits, once through a direct loop
// (the wgmma model's per-head dots and the profile's program) that reads the
// archive's bytes itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "build_paths.hpp"
#include "dsa/dataset/npz.hpp"
#include "dsa/logits.hpp"
#include "dsa/mma/models.hpp"
#include "dsa/problem.hpp"
#include "dsa/profile.hpp"

namespace dsa {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> cases() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(DSA_SOURCE_DIR) / "data" / "deepgemm_sm90"))
    if (e.path().extension() == ".npz") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

struct KernelCase {
  std::string name;
  DecodeProblem problem;
  std::vector<float> logits;      // the kernel's [rows][width]
  std::vector<int32_t> valid_len;  // per row
};

KernelCase load(const fs::path& path) {
  const dataset::NpzFile npz(path.string());
  const auto& q = npz.at("q_fp8");
  const auto& kv = npz.at("kv_cache");
  const auto& lens = npz.at("context_lens");
  const auto& table = npz.at("block_table");
  if (q.ndim() != 4 || kv.ndim() != 4 || kv.shape[2] != 1 || table.ndim() != 2)
    throw std::runtime_error(path.string() + ": unexpected shapes");
  KernelCase c;
  c.name = path.stem().string();
  DecodeProblem& p = c.problem;
  p.batch = int32_t(q.shape[0]);
  p.next_n = int32_t(q.shape[1]);
  p.heads = int32_t(q.shape[2]);
  p.head_dim = int32_t(q.shape[3]);
  p.element = ElementFormat::e4m3fn;
  p.q = q.u8();
  p.weights = npz.at("weights").f32();
  p.seq_lens = lens.i32();
  p.seq_lens_2d = lens.ndim() == 2;
  p.block_table = table.i32();
  p.max_pages = int32_t(table.shape[1]);
  p.logits_width = npz.at("max_context_len").integers().at(0);
  p.cache.layout = CacheLayout::block_flat;
  p.cache.element = ElementFormat::e4m3fn;
  p.cache.num_pages = int32_t(kv.shape[0]);
  p.cache.block_size = int32_t(kv.shape[1]);
  p.cache.head_dim = p.head_dim;
  if (kv.shape[3] != p.head_dim + 4) throw std::runtime_error(path.string() + ": kv_cache is not [pages, 64, 1, D + 4]");
  p.cache.bytes = kv.u8();
  c.logits = npz.at("logits").f32();
  c.valid_len = npz.at("valid_len").i32();
  return c;
}

std::string describe(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", double(v), std::bit_cast<uint32_t>(v));
  return buf;
}

bool same(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

struct Tally {
  int64_t matched = 0, total = 0, nan = 0;
  std::string first_miss;
};

void compare_row(const KernelCase& c, int64_t row, const float* ours, Tally& t) {
  const int64_t width = c.problem.logits_width;
  for (int64_t n = 0; n < c.valid_len[size_t(row)]; ++n) {
    const float kernel = c.logits[size_t(row * width + n)];
    ++t.total;
    t.nan += std::isnan(kernel);
    if (same(ours[n], kernel)) {
      ++t.matched;
    } else if (t.first_miss.empty()) {
      t.first_miss = "row " + std::to_string(row) + " column " + std::to_string(n) + ": ours " + describe(ours[n]) +
                     ", kernel " + describe(kernel);
    }
  }
}

TEST(DeepGemmSm90Kernel, DecodeLogitsMatchesEveryValidLogit) {
  const auto paths = cases();
  ASSERT_FALSE(paths.empty()) << "no data/deepgemm_sm90/*.npz";
  const Profile& profile = find_profile("deepgemm_sm90");
  Tally all;
  for (const auto& path : paths) {
    const KernelCase c = load(path);
    // Our visible lengths are the kernel's (SPEC 4: 1-D lengths L - next_n + j + 1).
    ASSERT_EQ(visible_lens(c.problem), std::vector<int64_t>(c.valid_len.begin(), c.valid_len.end())) << c.name;
    const LogitsResult r = decode_logits(c.problem, profile);
    Tally t;
    for (int64_t row = 0; row < c.problem.rows(); ++row) compare_row(c, row, r.logits.row(row), t);
    std::cout << "[ deepgemm_sm90 ] " << c.name << ": matched " << t.matched << " of " << t.total
              << (t.nan ? " (" + std::to_string(t.nan) + " NaN)" : "") << "\n";
    EXPECT_EQ(t.matched, t.total) << c.name << ", first difference at " << t.first_miss;
    all.matched += t.matched;
    all.total += t.total;
  }
  std::cout << "[ deepgemm_sm90 ] all cases: matched " << all.matched << " of " << all.total << "\n";
  EXPECT_EQ(all.matched, all.total);
}

int64_t matches(const KernelCase& c, const Profile& profile) {
  const LogitsResult r = decode_logits(c.problem, profile);
  Tally t;
  for (int64_t row = 0; row < c.problem.rows(); ++row) compare_row(c, row, r.logits.row(row), t);
  return t.total - t.matched;
}

// The archives decide between orders: nearby alternatives miss logits.
TEST(DeepGemmSm90Kernel, TheDataRejectsOtherOrders) {
  const std::string dir = std::string(DSA_SOURCE_DIR) + "/data/deepgemm_sm90/";
  const KernelCase h64 = load(dir + "o00_order_b4_n1_1d.npz"), h8 = load(dir + "o06_order_h8_b4_n2_1d.npz");
  const Profile& sm90 = find_profile("deepgemm_sm90");
  ASSERT_EQ(matches(h64, sm90), 0);
  ASSERT_EQ(matches(h8, sm90), 0);
  // The order probes' dots are exact, so only the reduction differs here.
  EXPECT_GT(matches(h64, find_profile("exact")), 0);
  // The same lanes with the K scale applied after they combine.
  Profile late_scale = sm90;
  late_scale.build_reduction = +[](int heads) {
    std::vector<ReduceStep> prog;
    int32_t next = 0;
    std::vector<int32_t> lanes;
    for (int q = 0; q < 4; ++q) {
      std::vector<int> even, odd;
      for (int g = 0; g < heads / 8; ++g) even.push_back(8 * g + 2 * q), odd.push_back(8 * g + 2 * q + 1);
      lanes.push_back(reduce::add(prog, next, reduce::fma_chain_from_pair(prog, next, even),
                                  reduce::fma_chain_from_pair(prog, next, odd)));
    }
    reduce::scale(prog, next, reduce::butterfly(prog, next, lanes, {1, 2}));
    return prog;
  };
  EXPECT_GT(matches(h64, late_scale), 0);
  // H = 8 without the fused even head: two rounded products, then their sum.
  Profile unfused = sm90;
  unfused.build_reduction = +[](int) {
    std::vector<ReduceStep> prog;
    int32_t next = 0;
    std::vector<int32_t> lanes;
    for (int q = 0; q < 4; ++q)
      lanes.push_back(reduce::scale(prog, next, reduce::add(prog, next, reduce::product(prog, next, 2 * q),
                                                            reduce::product(prog, next, 2 * q + 1))));
    reduce::butterfly(prog, next, lanes, {1, 2});
    return prog;
  };
  EXPECT_GT(matches(h8, unfused), 0);
}

// The same comparison without the logits plumbing: entries gathered from the
// archive's pages here, per-head dots by the wgmma model, then the program.
TEST(DeepGemmSm90Kernel, DirectModelAndProgramMatch) {
  const Profile& profile = find_profile("deepgemm_sm90");
  Tally all;
  for (const auto& path : cases()) {
    const KernelCase c = load(path);
    const DecodeProblem& p = c.problem;
    const int H = p.heads, D = p.head_dim, B = p.cache.block_size;
    const size_t page_bytes = size_t(B) * size_t(D + 4);
    const ReductionProgram program(profile, H);
    Tally t;
    for (int64_t row = 0; row < p.rows(); ++row) {
      const int64_t b = row / p.next_n, len = c.valid_len[size_t(row)];
      const uint8_t* q = p.q.data() + size_t(row) * size_t(H) * size_t(D);
      std::vector<float> ours(static_cast<size_t>(len));
      std::vector<uint8_t> k(size_t(ReductionProgram::kBlock) * size_t(D));
      std::vector<float> scales(ReductionProgram::kBlock), per_token(size_t(ReductionProgram::kBlock) * size_t(H)),
          dots(per_token.size());
      for (int64_t t0 = 0; t0 < len; t0 += ReductionProgram::kBlock) {
        const int n = int(std::min<int64_t>(ReductionProgram::kBlock, len - t0));
        for (int i = 0; i < n; ++i) {
          const int64_t entry = t0 + i;
          const int32_t page = p.block_table[size_t(b * p.max_pages + entry / B)];
          const uint8_t* base = p.cache.bytes.data() + size_t(page) * page_bytes;
          std::memcpy(k.data() + size_t(i) * D, base + size_t(entry % B) * D, size_t(D));
          std::memcpy(&scales[size_t(i)], base + size_t(B) * D + size_t(entry % B) * 4, 4);
        }
        mma::chain_dots(profile.mma, q, H, k.data(), n, D, per_token.data());
        for (int h = 0; h < H; ++h)
          for (int i = 0; i < n; ++i) dots[size_t(h * n + i)] = per_token[size_t(i * H + h)];
        program.run(dots.data(), p.weights.data() + size_t(row) * H, scales.data(), n, ours.data() + t0);
      }
      compare_row(c, row, ours.data(), t);
    }
    EXPECT_EQ(t.matched, t.total) << c.name << ", first difference at " << t.first_miss;
    all.matched += t.matched;
    all.total += t.total;
  }
  EXPECT_GT(all.total, 0);
  EXPECT_EQ(all.matched, all.total);
}

}  // namespace
}  // namespace dsa
