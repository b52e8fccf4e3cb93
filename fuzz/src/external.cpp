// The external implementation: a command that reads a case from a safetensors
// file and writes its outputs to another (external.hpp).
#include "dsa/fuzz/external.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "dsa/dataset/safetensors.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/oracle/poison.hpp"

namespace dsa::fuzz {
namespace {

namespace fs = std::filesystem;
using dataset::Dtype;
using dataset::Safetensors;

constexpr const char* kExchangeSchema = "dsa-oracle/external/1";

std::vector<int32_t> as_i32(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

void put_bounds(Safetensors& st, const RowBounds& bounds) {
  st.put_i32("ks", {bounds.rows()}, as_i32(bounds.start));
  st.put_i32("ke", {bounds.rows()}, as_i32(bounds.end));
}

void put_logits(Safetensors& st, const Logits& logits) { st.put_f32("logits", {logits.rows, logits.width}, logits.values); }

void put_blocks(Safetensors& st, const CandidateBlocks& c) {
  st.put_i32("candidate_blocks", {c.rows, c.slots}, c.blocks);
  st.metadata["candidate_block_size"] = std::to_string(c.block_size);
  st.metadata["candidate_topk_blocks"] = std::to_string(c.slots);
}

void put_decode(Safetensors& st, const DecodeProblem& p, const Profile& profile) {
  const int64_t B = p.batch, n = p.next_n, H = p.heads, D = p.head_dim;
  if (p.element == ElementFormat::e4m3fn) {
    st.put_f8_e4m3("q", {B, n, H, D}, p.q);
  } else if (p.element == ElementFormat::e4m3fnuz) {
    st.put_u8("q", {B, n, H, D}, p.q);
  } else {
    st.put_u8("q", {B, n, H, D / 2}, p.q);
    st.put_u8("q_scales", {B, n, H, D / 32}, p.q_block_scales);
  }
  const int64_t per_token = int64_t(p.cache.page_bytes()) / p.cache.block_size;
  st.put_u8("kv_cache", {p.cache.num_pages, p.cache.block_size, 1, per_token}, p.cache.bytes);
  st.put_f32("weights", {p.rows(), H}, p.weights);
  if (p.seq_lens_2d)
    st.put_i32("seq_lens", {B, n}, p.seq_lens);
  else
    st.put_i32("seq_lens", {B}, p.seq_lens);
  st.put_i32("block_table", {B, p.max_pages}, p.block_table);
  if (!p.decode_lens.empty()) st.put_i32("decode_lens", {B}, p.decode_lens);
  if (is_fp8(p.element)) st.metadata["fp8"] = std::string(to_string(p.element));  // absent for MXFP4, as in golden files
  st.metadata["layout"] = std::string(to_string(p.cache.layout));
  st.metadata["page_size"] = std::to_string(p.cache.block_size);
  st.metadata["next_n"] = std::to_string(p.next_n);
  st.metadata["heads"] = std::to_string(p.heads);
  st.metadata["head_dim"] = std::to_string(p.head_dim);
  st.metadata["compress_ratio"] = std::to_string(p.compress_ratio);
  st.metadata["logits_width"] = std::to_string(p.logits_width);
  st.metadata["max_model_len"] = std::to_string(p.logits_width * p.compress_ratio);
  st.metadata["padded_lengths"] = std::string(to_string(p.padded_lengths));
  st.metadata["profile"] = profile.name;
}

std::vector<int32_t> poison_i32(int64_t count) { return std::vector<int32_t>(size_t(count), oracle::kPoisonI32); }
std::vector<float> poison_f32(int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  oracle::fill_poison(v);
  return v;
}

std::string tail_of(const fs::path& log, size_t bytes) {
  std::ifstream in(log, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > bytes ? "..." + s.substr(s.size() - bytes) : s;
}

class ExternalOps final : public IndexerOps {
public:
  ExternalOps(std::string command, ExternalOptions options) : command_(std::move(command)), options_(options) {
    if (options_.work_dir.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / "dsa-external-XXXXXX").string();
      if (!mkdtemp(pattern.data())) throw std::runtime_error("external: cannot create a folder under " + pattern);
      dir_ = pattern;
      owns_dir_ = !options_.keep_files;
    } else {
      dir_ = options_.work_dir;
      fs::create_directories(dir_);
    }
  }
  ~ExternalOps() override {
    std::error_code ec;
    if (owns_dir_) fs::remove_all(dir_, ec);
  }

  std::string name() const override { return std::string("external:") + command_; }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    Safetensors in = request("topk");
    put_logits(in, logits);
    put_bounds(in, bounds);
    in.metadata["topk"] = std::to_string(out.k);
    in.put_i32("topk_indices", {out.rows, out.k}, poison_i32(out.rows * out.k));
    out.indices = run(in).i32("topk_indices", {out.rows, out.k});
  }

  void candidate_select(const Logits& logits, const RowBounds& bounds, CandidateBlocks& out) override {
    Safetensors in = request("candidate_select");
    put_logits(in, logits);
    put_bounds(in, bounds);
    in.metadata["candidate_block_size"] = std::to_string(out.block_size);
    in.metadata["candidate_topk_blocks"] = std::to_string(out.slots);
    in.put_i32("candidate_blocks", {out.rows, out.slots}, poison_i32(out.rows * out.slots));
    out.blocks = run(in).i32("candidate_blocks", {out.rows, out.slots});
  }

  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    Safetensors in = request("candidate_topk");
    put_logits(in, logits);
    put_bounds(in, bounds);
    put_blocks(in, candidates);
    in.metadata["topk"] = std::to_string(out.k);
    in.put_i32("topk_indices", {out.rows, out.k}, poison_i32(out.rows * out.k));
    out.indices = run(in).i32("topk_indices", {out.rows, out.k});
  }

  void decode_logits(const DecodeProblem& problem, const Profile& profile, Logits& out) override {
    Safetensors in = request("decode_logits");
    put_decode(in, problem, profile);
    in.put_f32("logits", {out.rows, out.width}, poison_f32(out.rows * out.width));
    out.values = read_logits(run(in), "logits", out.rows, out.width);
  }

  void prefill_logits(const PrefillProblem& p, const Profile& profile, Logits& out) override {
    Safetensors in = request("prefill_logits");
    const Shape q_shape = {p.rows, p.heads, p.head_dim}, k_shape = {p.num_k, p.head_dim};
    if (p.element == ElementFormat::e4m3fn) {
      in.put_f8_e4m3("q", q_shape, p.q);
      in.put_f8_e4m3("k", k_shape, p.k);
    } else {
      in.put_u8("q", q_shape, p.q);
      in.put_u8("k", k_shape, p.k);
    }
    in.put_f32("k_scales", {p.num_k}, p.k_scales);
    in.put_f32("weights", {p.rows, p.heads}, p.weights);
    in.put_i32("ks", {p.rows}, p.ks);
    in.put_i32("ke", {p.rows}, p.ke);
    in.metadata["fp8"] = std::string(to_string(p.element));
    in.metadata["heads"] = std::to_string(p.heads);
    in.metadata["head_dim"] = std::to_string(p.head_dim);
    in.metadata["profile"] = profile.name;
    in.put_f32("logits", {out.rows, out.width}, poison_f32(out.rows * out.width));
    out.values = read_logits(run(in), "logits", out.rows, out.width);
  }

  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates, Logits& out) override {
    Safetensors in = request("compact_candidate_logits");
    put_decode(in, problem, profile);
    put_blocks(in, candidates);
    in.put_f32("compact_logits", {out.rows, out.width}, poison_f32(out.rows * out.width));
    out.values = read_logits(run(in), "compact_logits", out.rows, out.width);
  }

private:
  using Shape = dataset::Shape;

  static Safetensors request(const char* op) {
    Safetensors st;
    st.metadata["schema"] = kExchangeSchema;
    st.metadata["op"] = op;
    return st;
  }

  // F32, or BF16 widened by a shift (so that a bf16 poison stays recognisable).
  static std::vector<float> read_logits(const Safetensors& st, const std::string& name, int64_t rows, int64_t width) {
    if (st.contains(name) && st.at(name).dtype == Dtype::BF16) {
      const std::vector<uint16_t> bits = st.bf16(name, {rows, width});
      std::vector<float> out(bits.size());
      for (size_t i = 0; i < bits.size(); ++i) out[i] = bf16_to_float(bits[i]);
      return out;
    }
    return st.f32(name, {rows, width});
  }

  Safetensors run(const Safetensors& in) {
    const fs::path in_path = dir_ / "case.safetensors", out_path = dir_ / "out.safetensors", log = dir_ / "log.txt";
    std::error_code ec;
    fs::remove(out_path, ec);
    dataset::write_safetensors(in_path.string(), in);
    const std::string line = fmt::format("{} --in {} --out {} > {} 2>&1", command_, shell_quote(in_path.string()),
                                         shell_quote(out_path.string()), shell_quote(log.string()));
    const int status = std::system(line.c_str());
    if (status == -1 || !WIFEXITED(status))
      throw std::runtime_error(fmt::format("external command did not exit normally: {}", line));
    const int code = WEXITSTATUS(status);
    if (code == kExternalUnsupported)
      throw Unsupported(fmt::format("{} does not take {}", command_, in.metadata.at("op")));
    if (code != 0)
      throw std::runtime_error(fmt::format("external command exited with status {} for op {}: {}", code,
                                           in.metadata.at("op"), tail_of(log, 600)));
    if (!fs::exists(out_path))
      throw std::runtime_error(fmt::format("external command wrote no {} for op {}", out_path.string(),
                                           in.metadata.at("op")));
    return dataset::read_safetensors(out_path.string());
  }

  std::string command_;
  ExternalOptions options_;
  fs::path dir_;
  bool owns_dir_ = false;
};

}  // namespace

std::unique_ptr<IndexerOps> make_external_ops(const std::string& command, const ExternalOptions& options) {
  if (command.find_first_not_of(" \t") == std::string::npos)
    throw InvalidInput("impl", "external: needs a command, e.g. external:'python3 my_kernel.py'");
  return std::make_unique<ExternalOps>(command, options);
}

}  // namespace dsa::fuzz
