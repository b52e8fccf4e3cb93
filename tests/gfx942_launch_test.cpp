// The gfx942 launchers' checks, on the CPU: malformed calls throw InvalidInput
// naming the argument; calls the kernels do not take are refused with the
// reason (the design's "return False"); a call they take is refused here only
// because this machine has no gfx942 device. Nothing is launched here.
#include <gtest/gtest.h>

#ifdef DSA_WITH_HIP_LAUNCHERS

#include <array>
#include <string>

#include "dsa/error.hpp"
#include "dsa/optimized/hip/gfx942_ops.hpp"
#include "dsa/optimized/hip/launch.hpp"
#include "dsa/synthetic.hpp"
#include "gfx942_test_support.hpp"

namespace dsa {
namespace {

using gfx942::DecodeStep;

// Host arrays standing in for device pointers: the checks read no memory.
struct FakeTensors {
  alignas(16) std::array<uint8_t, 64> bytes{};
  alignas(16) std::array<float, 64> floats{};
  alignas(16) std::array<int32_t, 64> ints{};
  alignas(16) std::array<uint32_t, 64> counters{};
  alignas(16) std::array<uint64_t, 64> pairs{};
  // As large as any launch here asks (the checks compare sizes only).
  gfx942::SelectWorkspace workspace() { return {pairs.data(), int64_t(1) << 40, counters.data(), int64_t(1) << 40}; }
};

DecodeStep valid_step(FakeTensors& t) {
  DecodeStep s;
  s.rows.q = t.bytes.data();
  s.rows.kv_cache = t.bytes.data();
  s.rows.weights = t.floats.data();
  s.rows.seq_lens = t.ints.data();
  s.rows.block_table = t.ints.data();
  s.rows.num_pages = 8;
  s.rows.batch = 2;
  s.rows.next_n = 2;
  s.rows.max_pages = 4;
  s.rows.page_size = 64;
  s.heads = 64;
  s.head_dim = 128;
  return s;
}

template <typename F>
void expect_invalid(F f, const std::string& argument) {
  try {
    f();
    ADD_FAILURE() << "no InvalidInput for " << argument;
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), argument) << e.what();
  }
}

TEST(Gfx942Launch, ValidDecodeStepPassesTheChecks) {
  FakeTensors t;
  const DecodeStep s = valid_step(t);
  EXPECT_EQ(gfx942::check_decode_step(s), "");
  EXPECT_EQ(gfx942::check_paged_logits(s, t.floats.data(), 1024, 1024), "");
  DecodeStep h32 = s;
  h32.heads = 32;
  EXPECT_EQ(gfx942::check_decode_step(h32), "");
}

TEST(Gfx942Launch, MalformedCallsNameTheArgument) {
  FakeTensors t;
  const auto with = [&](auto change) {
    DecodeStep s = valid_step(t);
    change(s);
    return s;
  };
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.rows.q = nullptr; })); }, "q");
  expect_invalid([&] { gfx942::check_decode_step(with([&](DecodeStep& s) { s.rows.q = t.bytes.data() + 4; })); },
                 "q");
  expect_invalid([&] { gfx942::check_decode_step(with([&](DecodeStep& s) { s.rows.kv_cache = t.bytes.data() + 8; })); },
                 "kv_cache");
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.rows.weights = nullptr; })); }, "weights");
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.rows.seq_lens = nullptr; })); },
                 "seq_lens");
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.rows.block_table = nullptr; })); },
                 "block_table");
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.rows.batch = 0; })); }, "batch");
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.rows.next_n = -1; })); }, "next_n");
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.rows.page_size = 0; })); }, "page_size");
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.rows.num_pages = 0; })); }, "num_pages");
  expect_invalid([&] { gfx942::check_decode_step(with([](DecodeStep& s) { s.heads = 0; })); }, "heads");
  const DecodeStep s = valid_step(t);
  expect_invalid([&] { gfx942::check_paged_logits(s, nullptr, 16, 16); }, "logits");
  expect_invalid([&] { gfx942::check_paged_logits(s, t.floats.data(), 8, 16); }, "logits_stride");
  expect_invalid([&] { gfx942::check_paged_logits(s, t.floats.data(), 16, -1); }, "width");
}

TEST(Gfx942Launch, RefusesWhatTheKernelsDoNotTake) {
  FakeTensors t;
  const auto refusal = [&](auto change) {
    DecodeStep s = valid_step(t);
    change(s);
    return gfx942::check_decode_step(s);
  };
  EXPECT_NE(refusal([](DecodeStep& s) { s.element = ElementFormat::e4m3fn; }).find("e4m3fnuz"), std::string::npos);
  EXPECT_NE(refusal([](DecodeStep& s) { s.layout = CacheLayout::block_flat; }).find("preshuffle"), std::string::npos);
  EXPECT_NE(refusal([](DecodeStep& s) { s.head_dim = 64; }).find("head_dim"), std::string::npos);
  EXPECT_NE(refusal([](DecodeStep& s) { s.heads = 16; }).find("heads 16"), std::string::npos);
  EXPECT_NE(refusal([](DecodeStep& s) { s.rows.page_size = 24; }).find("page_size 24"), std::string::npos);
  EXPECT_NE(refusal([](DecodeStep& s) { s.rows.page_size = 1; }).find("page_size 1"), std::string::npos);
}

TEST(Gfx942Launch, CandidateLaunchTakesOnlyTheDesignsCalls) {
  FakeTensors t;
  const DecodeStep s = valid_step(t);
  const auto check = [&](int32_t k, bool aiter, bool padded) {
    return gfx942::check_candidate_logits_top_k(s, t.ints.data(), 2048, 8, t.floats.data(), t.ints.data(), k, k,
                                                aiter, padded, t.counters.data(), t.workspace());
  };
  EXPECT_EQ(check(512, true, false), "");
  EXPECT_NE(check(512, false, false).find("AITER"), std::string::npos);
  EXPECT_NE(check(512, true, true).find("padded"), std::string::npos);
  EXPECT_NE(check(2048, true, false).find("topk_tokens 2048"), std::string::npos);
  expect_invalid([&] {
    gfx942::check_candidate_logits_top_k(s, nullptr, 2048, 8, t.floats.data(), t.ints.data(), 512, 512, true, false,
                                         t.counters.data(), t.workspace());
  }, "candidate_blocks");
  expect_invalid([&] {
    gfx942::check_candidate_logits_top_k(s, t.ints.data(), 0, 8, t.floats.data(), t.ints.data(), 512, 512, true, false,
                                         t.counters.data(), t.workspace());
  }, "slots");
  expect_invalid([&] {
    gfx942::check_candidate_logits_top_k(s, t.ints.data(), 2048, 8, t.floats.data(), t.ints.data(), 256, 512, true,
                                         false, t.counters.data(), t.workspace());
  }, "topk_stride");
  expect_invalid([&] {
    gfx942::check_candidate_logits_top_k(s, t.ints.data(), 2048, 8, t.floats.data(), t.ints.data(), 512, 512, true,
                                         false, nullptr, t.workspace());
  }, "row_done");
}

TEST(Gfx942Launch, WithoutAGfx942DeviceEveryLaunchReturnsFalse) {
  if (gfx942::device_available()) GTEST_SKIP() << "a gfx942 device is present";
  FakeTensors t;
  const DecodeStep s = valid_step(t);
  const gfx942::LaunchResult dense = gfx942::paged_logits(s, t.floats.data(), 64, 64, nullptr);
  EXPECT_FALSE(dense.launched);
  EXPECT_NE(dense.why.find("no gfx942 device"), std::string::npos) << dense.why;
  const gfx942::LaunchResult fused = gfx942::candidate_logits_top_k(
      s, t.ints.data(), 2048, 8, t.floats.data(), t.ints.data(), 512, 512, true, false, t.counters.data(),
      t.workspace(), nullptr);
  EXPECT_FALSE(fused);
  EXPECT_NE(fused.why.find("no gfx942 device"), std::string::npos) << fused.why;
  // Refused before the device is asked: the reason is the call's, not the machine's.
  DecodeStep fn = s;
  fn.element = ElementFormat::e4m3fn;
  EXPECT_NE(gfx942::paged_logits(fn, t.floats.data(), 64, 64, nullptr).why.find("e4m3fnuz"), std::string::npos);
}

gfx942::LogitsRows valid_rows(FakeTensors& t) {
  gfx942::LogitsRows in;
  in.logits = t.floats.data();
  in.logits_stride = 131072;
  in.width = 131072;
  in.seq_lens = t.ints.data();
  in.rows = 8;
  in.next_n = 2;
  return in;
}

TEST(Gfx942Launch, SelectionLaunchesCheckTheirCalls) {
  FakeTensors t;
  const gfx942::LogitsRows in = valid_rows(t);
  EXPECT_EQ(gfx942::check_top_k(in, t.ints.data(), 512, 512), "");
  EXPECT_NE(gfx942::check_top_k(in, t.ints.data(), 2048, 2048).find("topk_tokens 2048"), std::string::npos);
  EXPECT_EQ(gfx942::check_candidates(in, t.ints.data(), 2048, 8), "");
  expect_invalid([&] { gfx942::check_top_k(in, t.ints.data(), 256, 512); }, "topk_stride");
  expect_invalid([&] { gfx942::check_top_k(in, nullptr, 512, 512); }, "topk_indices");
  expect_invalid([&] { gfx942::check_candidates(in, t.ints.data(), 2048, 0); }, "candidate_block_size");
  expect_invalid([&] { gfx942::check_candidates(in, nullptr, 2048, 8); }, "candidate_blocks");
  gfx942::LogitsRows odd = in;
  odd.rows = 7;
  expect_invalid([&] { gfx942::check_logits_rows(odd); }, "rows");
  odd = in;
  odd.logits = nullptr;
  expect_invalid([&] { gfx942::check_logits_rows(odd); }, "logits");
  odd = in;
  odd.width = in.logits_stride + 1;
  expect_invalid([&] { gfx942::check_logits_rows(odd); }, "width");
  // vLLM's topk_indices_buffer[:, :512] view: rows of 512 entries 2048 apart (TreeOutput::out_stride).
  EXPECT_EQ(gfx942::check_top_k(in, t.ints.data(), 2048, 512), "");
  if (!gfx942::device_available()) {
    const auto says = [](const gfx942::LaunchResult& r, const char* why) {
      return r.why.find(why) != std::string::npos;
    };
    EXPECT_TRUE(says(gfx942::decode_top_k(in, t.ints.data(), 512, 512, t.workspace(), nullptr), "no gfx942 device"));
    EXPECT_TRUE(says(gfx942::decode_top_k(in, t.ints.data(), 2048, 512, t.workspace(), nullptr), "no gfx942 device"));
    EXPECT_TRUE(
        says(gfx942::select_candidates(in, 8, t.ints.data(), 2048, t.workspace(), nullptr), "no gfx942 device"));
    EXPECT_TRUE(says(
        gfx942::candidate_top_k(in, t.ints.data(), 2048, 8, t.ints.data(), 512, 512, t.workspace(), nullptr),
        "no gfx942 device"));
    EXPECT_TRUE(says(
        gfx942::candidate_top_k(in, t.ints.data(), 2048, 8, t.ints.data(), 1024, 1024, t.workspace(), nullptr),
        "topk_tokens 1024"));
  }
}

// The shared tree's plan sizes the workspace: rows of 2^17 columns are 16
// leaves of 8192 and one merge node (fan-in 16 for k = 512).
TEST(Gfx942Launch, WorkspaceIsTheTreePlans) {
  const gfx942::WorkspaceSize decode = gfx942::select_workspace_size(8, 131072, 512);
  EXPECT_EQ(decode.why, "");
  EXPECT_EQ(decode.counters, 8 * 17);
  EXPECT_EQ(decode.slot_pairs, 8 * 17 * 512);
  // One leaf: no merge, but the plan still keeps a node a row.
  EXPECT_EQ(gfx942::select_workspace_size(8, 8192, 512).counters, 8);
  // The fused launch's 4-wave blocks hold 4096 entries: 2048 blocks of 8 are 4 leaves and their merge.
  EXPECT_EQ(gfx942::select_workspace_size(2, 2048 * 8, 512, true).counters, 2 * 5);
  EXPECT_NE(gfx942::select_workspace_size(8, 131072, 8192).why.find("k = 8192"), std::string::npos);
  FakeTensors t;
  gfx942::SelectWorkspace small = t.workspace();
  small.slot_pairs = decode.slot_pairs - 1;
  expect_invalid([&] { gfx942::check_workspace(small, decode); }, "workspace.slot_pairs");
  small = t.workspace();
  small.counter_count = decode.counters - 1;
  expect_invalid([&] { gfx942::check_workspace(small, decode); }, "workspace.counter_count");
  EXPECT_EQ(gfx942::check_workspace(t.workspace(), decode), "");
}

TEST(Gfx942Launch, SkipDecodeFillIsTheReferenceRule) {
  EXPECT_TRUE(gfx942::skip_decode_fill(8, 8, false));
  EXPECT_FALSE(gfx942::skip_decode_fill(8, 8, true));
  EXPECT_FALSE(gfx942::skip_decode_fill(6, 8, false));
  expect_invalid([] { gfx942::skip_decode_fill(9, 8, false); }, "num_decode_tokens");
}

DecodeProblem fnuz_step() {
  SyntheticDecodeConfig c;
  c.batch = 2;
  c.next_n = 2;
  c.heads = 64;
  c.head_dim = 128;
  c.element = ElementFormat::e4m3fnuz;
  c.layout = CacheLayout::preshuffle;
  c.block_size = 64;
  c.seq_lens = {100, 3};
  Rng rng(3);
  return make_decode_problem(c, rng);
}

template <typename F>
std::string unsupported_reason(F f) {
  try {
    f();
  } catch (const Unsupported& e) {
    return e.what();
  }
  return "(no Unsupported)";
}

// The implementation under test: shapes first (InvalidInput), then what the
// kernels compute (Unsupported for another profile or a padded step), then the
// device (Unsupported here: no MI300).
TEST(Gfx942Ops, ChecksThenRefusesWithoutADevice) {
  if (gfx942::device_available()) GTEST_SKIP() << "a gfx942 device is present";
  const auto ops = gfx942::make_gfx942_ops();
  EXPECT_EQ(ops->name(), "hip_gfx942");
  const DecodeProblem p = fnuz_step();
  const Profile& ours = find_profile("dsa_gfx942");
  Logits out{p.rows(), p.logits_width, std::vector<float>(size_t(p.rows() * p.logits_width))};
  EXPECT_NE(unsupported_reason([&] { ops->decode_logits(p, ours, out); }).find("no gfx942 device"), std::string::npos);
  EXPECT_NE(unsupported_reason([&] { ops->decode_logits(p, find_profile("exact"), out); }).find("not exact"),
            std::string::npos);
  DecodeProblem padded = p;
  padded.decode_lens = {2, 1};
  EXPECT_NE(unsupported_reason([&] { ops->decode_logits(padded, ours, out); }).find("padded"), std::string::npos);
  Logits narrow{p.rows(), p.logits_width - 1, std::vector<float>(size_t(p.rows() * (p.logits_width - 1)))};
  expect_invalid([&] { ops->decode_logits(p, ours, narrow); }, "logits");
  TopkIndices topk{p.rows(), 512, std::vector<int32_t>(size_t(p.rows()) * 512)};
  const RowBounds bounds = topk_row_bounds(p);
  EXPECT_NE(unsupported_reason([&] { ops->topk(out, bounds, topk); }).find("no gfx942 device"), std::string::npos);
  CandidateBlocks blocks{p.rows(), 4, 8, std::vector<int32_t>(size_t(p.rows()) * 4, -1)};
  EXPECT_NE(unsupported_reason([&] { ops->candidate_select(out, bounds, blocks); }).find("no gfx942 device"),
            std::string::npos);
  EXPECT_NE(unsupported_reason([&] { ops->prefill_logits(PrefillProblem{}, ours, out); }).find("not implemented"),
            std::string::npos);
  EXPECT_TRUE(ops->skip_decode_fill(false, 4, 4, false));
}

TEST(Gfx942Launch, CodeObjectsAreBuiltIntoTheLaunchers) {
  DSA_REQUIRE_GFX942();
  EXPECT_TRUE(gfx942::code_objects_built());
}

}  // namespace
}  // namespace dsa

#else

TEST(Gfx942Launch, NeedsTheHipHeaders) { GTEST_SKIP() << "hip/hip_runtime_api.h not found: no gfx942 launchers built"; }

#endif
