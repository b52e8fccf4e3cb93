// `dsa-oracle reference` (issue 7): it reproduces every committed golden file
// from that file's own inputs, bit for bit, and a file with one thing wrong
// gets exit code 2, a message naming the problem, and no output file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "dsa/dataset/safetensors.hpp"
#include "cli_test_support.hpp"
#include "test_support.hpp"

namespace dsa {
namespace {

namespace fs = std::filesystem;
using dataset::Safetensors;

using test::CliRun;
using test::run_cli;

std::vector<uint8_t> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The file a user would bring: the golden file without its expected outputs.
Safetensors inputs_only(const Safetensors& golden) {
  std::set<std::string> outputs;
  std::stringstream list(golden.metadata.at("outputs"));
  for (std::string name; std::getline(list, name, ',');) outputs.insert(name);
  Safetensors in;
  for (const auto& [name, t] : golden.tensors())
    if (!outputs.count(name)) in.put(name, t.dtype, t.shape, t.bytes);
  in.metadata = golden.metadata;
  in.metadata.erase("outputs");
  return in;
}

class TempDir {
public:
  TempDir() : path_(fs::temp_directory_path() / ("dsa_reference_test_" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

private:
  fs::path path_;
};

std::vector<fs::path> golden_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(test::source_dir()) / "data" / "golden"))
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ReferenceCommand, ReproducesEveryCommittedGoldenFileFromItsInputs) {
  const auto files = golden_files();
  ASSERT_GE(files.size(), 6u) << "no committed golden sets under data/golden";
  // Under the sanitizers every third file (each run is a whole process).
  const size_t stride = std::getenv("DSA_SANITIZED") ? 3 : 1;
  TempDir dir;
  std::set<std::string> profiles;
  for (size_t i = 0; i < files.size(); i += stride) {
    const Safetensors golden = dataset::read_safetensors(files[i].string());
    const fs::path in = dir.path() / "in.safetensors", out = dir.path() / "out.safetensors";
    dataset::write_safetensors(in.string(), inputs_only(golden));
    const CliRun r = run_cli("reference --op " + golden.metadata.at("op") + " --profile " +
                          golden.metadata.at("profile") + " --in " + in.string() + " --out " + out.string());
    ASSERT_EQ(r.exit_code, 0) << files[i] << "\n" << r.output;
    EXPECT_EQ(file_bytes(out), file_bytes(files[i])) << files[i] << " is not reproduced bit for bit";
    profiles.insert(golden.metadata.at("profile"));
  }
  EXPECT_GE(profiles.size(), 2u);
}

// One thing wrong with a good file: exit 2, the message names it, no output.
class ReferenceValidation : public ::testing::Test {
protected:
  void SetUp() override {
    good_ = inputs_only(dataset::read_safetensors(
        (fs::path(test::source_dir()) / "data/golden/exact/v32_decode/v32_decode_00_nn1.safetensors").string()));
  }
  void expect_rejected(const Safetensors& bad, const std::string& fragment, const std::string& flags = "",
                       const std::string& profile = "exact") {
    const fs::path in = dir_.path() / "bad.safetensors", out = dir_.path() / "never.safetensors";
    dataset::write_safetensors(in.string(), bad);
    const CliRun r = run_cli("reference --op " + bad.metadata.at("op") + " --profile " + profile + " --in " +
                          in.string() + " --out " + out.string() + " " + flags);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(fragment), std::string::npos) << "message does not name '" << fragment << "':\n"
                                                          << r.output;
    EXPECT_FALSE(fs::exists(out)) << "an output file was left behind";
  }
  static void replace(Safetensors& f, const std::string& name, std::function<void(dataset::Tensor&)> change) {
    dataset::Tensor t = f.at(name);
    change(t);
    Safetensors copy;
    for (const auto& [n, old] : f.tensors())
      if (n != name) copy.put(n, old.dtype, old.shape, old.bytes);
    copy.put(name, t.dtype, t.shape, t.bytes);
    copy.metadata = f.metadata;
    f = copy;
  }
  static Safetensors without(const Safetensors& f, const std::string& name) {
    Safetensors copy;
    for (const auto& [n, t] : f.tensors())
      if (n != name) copy.put(n, t.dtype, t.shape, t.bytes);
    copy.metadata = f.metadata;
    return copy;
  }
  Safetensors good_;
  TempDir dir_;
};

TEST_F(ReferenceValidation, TheGoodFileIsAccepted) {
  const fs::path in = dir_.path() / "good.safetensors", out = dir_.path() / "good_out.safetensors";
  dataset::write_safetensors(in.string(), good_);
  const CliRun r = run_cli("reference --op decode_topk --profile exact --in " + in.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out));
}

TEST_F(ReferenceValidation, MissingTensor) { expect_rejected(without(good_, "weights"), "weights"); }

TEST_F(ReferenceValidation, WrongDtype) {
  Safetensors bad = good_;
  replace(bad, "seq_lens", [](dataset::Tensor& t) { t.dtype = dataset::Dtype::F32; });
  expect_rejected(bad, "seq_lens");
}

TEST_F(ReferenceValidation, WrongShape) {
  Safetensors bad = good_;
  replace(bad, "weights", [](dataset::Tensor& t) {
    t.shape.back() -= 1;
    t.bytes.resize(size_t(dataset::element_count(t.shape)) * 4);
  });
  expect_rejected(bad, "weights");
}

TEST_F(ReferenceValidation, PageIdOutsideTheCache) {
  Safetensors bad = good_;
  replace(bad, "block_table", [](dataset::Tensor& t) {
    const int32_t huge = 1 << 20;
    std::memcpy(t.bytes.data(), &huge, 4);
  });
  expect_rejected(bad, "block_table");
}

TEST_F(ReferenceValidation, LengthBeyondThePageTable) {
  Safetensors bad = good_;
  replace(bad, "seq_lens", [](dataset::Tensor& t) {
    const int32_t long_len = 1 << 24;
    std::memcpy(t.bytes.data(), &long_len, 4);
  });
  expect_rejected(bad, "seq_lens");
}

TEST_F(ReferenceValidation, NanInQWeightsOrScales) {
  Safetensors bad = good_;
  replace(bad, "q", [](dataset::Tensor& t) { t.bytes[5] = 0x7f; });
  expect_rejected(bad, "q");
  bad = good_;
  replace(bad, "weights", [](dataset::Tensor& t) {
    const float nan = std::nanf("");
    std::memcpy(t.bytes.data() + 8, &nan, 4);
  });
  expect_rejected(bad, "weights");
  bad = good_;
  // The first token's scale: page block_table[0][0], right after the page's values.
  const auto table = good_.i32("block_table");
  const auto& cache = good_.at("kv_cache");
  const int64_t page_size = cache.shape[1], stride = cache.shape[3];
  const size_t at = size_t(table[0]) * size_t(page_size * stride) + size_t(page_size * (stride - 4));
  replace(bad, "kv_cache", [at](dataset::Tensor& t) {
    const float nan = std::nanf("");
    std::memcpy(t.bytes.data() + at, &nan, 4);
  });
  expect_rejected(bad, "kv_cache");
}

TEST_F(ReferenceValidation, ProfileAndFormatThatNoKernelHas) {
  Safetensors bad = good_;
  bad.metadata["fp8"] = "e4m3fnuz";
  replace(bad, "q", [](dataset::Tensor& t) { t.dtype = dataset::Dtype::U8; });
  expect_rejected(bad, "e4m3fnuz", "", "deepgemm_sm90");
}

TEST_F(ReferenceValidation, FlagThatContradictsTheMetadata) {
  expect_rejected(good_, "topk", "--topk 7");
  expect_rejected(good_, "next_n", "--next-n 3");
}

TEST_F(ReferenceValidation, TruncatedFile) {
  const fs::path in = dir_.path() / "cut.safetensors", out = dir_.path() / "never.safetensors";
  auto bytes = dataset::serialize_safetensors(good_);
  bytes.resize(bytes.size() / 2);
  std::ofstream(in, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  const CliRun r = run_cli("reference --op decode_topk --profile exact --in " + in.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

// The doc's "bring your own inputs" example, end to end, with Debian's python3-numpy.
TEST(ReferenceCommand, BringYourOwnInputsExample) {
  std::string python;
  for (const char* py : {"/usr/bin/python3", "python3"})
    if (std::system((std::string(py) + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) {
      python = py;
      break;
    }
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy (Debian: apt-get install python3-numpy)";
  TempDir dir;
  const fs::path in = dir.path() / "byo.safetensors", out = dir.path() / "byo_expected.safetensors";
  const std::string script = test::source_dir() + "/python/examples/bring_your_own_inputs.py";
  ASSERT_EQ(std::system((python + " '" + script + "' '" + in.string() + "'").c_str()), 0);
  const CliRun r = run_cli("reference --op decode_topk --profile deepgemm_sm90 --in " + in.string() + " --out " +
                           out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Safetensors result = dataset::read_safetensors(out.string());
  EXPECT_TRUE(result.contains("topk_indices"));
  EXPECT_TRUE(result.contains("logits"));
  EXPECT_EQ(result.at("q").dtype, dataset::Dtype::F8_E4M3);  // inputs untouched
  EXPECT_EQ(result.metadata.at("profile"), "deepgemm_sm90");
}

}  // namespace
}  // namespace dsa
