// `dsa-oracle reference`: the reference's expected outputs for a user's own
// inputs, under any profile (issue 7). It reads one case in the golden schema
// (docs/golden-format.md), validates every input before any work, runs the
// op, and writes the inputs untouched plus the expected outputs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "command_registry.hpp"
#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/dataset/temp_files.hpp"

namespace dsa::cli {
namespace {

struct ReferenceOptions {
  std::string op, profile, in, out;
  // Parameters that are not tensors: each fills a metadata key the file lacks
  // and must agree with the file where both say something.
  std::map<std::string, std::string> flags;
};

std::set<std::string> listed_outputs(const dataset::Safetensors& file) {
  std::set<std::string> names;
  const auto it = file.metadata.find("outputs");
  if (it == file.metadata.end()) return names;
  std::stringstream list(it->second);
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) names.insert(name);
  return names;
}

int reference(const ReferenceOptions& o) {
  // Before any work: where the result goes can take it; leftovers of killed runs there are removed.
  dataset::require_writable_file(o.out, "out");
  const auto folder = std::filesystem::path(o.out).parent_path();
  for (const auto& stale : dataset::remove_stale_temp_files(folder.empty() ? "." : folder.string()))
    fmt::print(stderr, "removed {}, the temporary file of a run that was killed\n", stale);
  dataset::Safetensors input = dataset::read_safetensors(o.in);
  // The op and the profile are the caller's choice: a file made for one
  // profile (its `profile` key) may be run under another.
  input.metadata["op"] = o.op;
  input.metadata["profile"] = o.profile;
  // Everything is validated here, before any work and before anything is written.
  dataset::GoldenCase golden = dataset::read_case_inputs(input, o.flags);
  const auto outputs = dataset::op_outputs(golden.settings.op, golden.logits_given());
  dataset::compute_expected(golden, outputs);

  // The inputs as the user wrote them (names, dtypes and bytes), without the
  // expected outputs an earlier run may have left in the file.
  dataset::Safetensors result;
  const auto stale = listed_outputs(input);
  for (const auto& [name, tensor] : input.tensors())
    if (!stale.count(name) || !std::count(outputs.begin(), outputs.end(), name))
      result.put(name, tensor.dtype, tensor.shape, tensor.bytes);
  result.metadata = input.metadata;
  for (const auto& [key, value] : dataset::case_metadata(golden)) result.metadata[key] = value;
  dataset::put_outputs(result, golden, golden.expected);
  dataset::write_safetensors(o.out, result);

  fmt::print("{}: op {}, profile {}, {} rows: wrote {} to {}\n", o.in, dataset::to_string(golden.settings.op),
             golden.settings.profile, golden.rows(), fmt::join(golden.expected.names(), ", "), o.out);
  return kExitOk;
}

const Registrar reference_registrar("reference", 30, [](CLI::App& app) {
  auto o = std::make_shared<ReferenceOptions>();
  auto* sub = app.add_subcommand(
      "reference", "Expected outputs for your own inputs (a safetensors file in the golden schema), under any profile");
  std::string ops;
  for (auto op : dataset::golden_ops()) ops += std::string(ops.empty() ? "" : ", ") + std::string(dataset::to_string(op));
  sub->add_option("--op", o->op, "The op: " + ops)->required();
  sub->add_option("--profile", o->profile, "Arithmetic profile (exact, deepgemm_sm90, ...)")->required();
  sub->add_option("--in", o->in, "Input case (.safetensors)")->required()->check(CLI::ExistingFile);
  sub->add_option("--out", o->out, "Output file: the inputs plus the expected outputs")->required();
  // Metadata keys that may come as flags; a flag that contradicts the file is an error.
  for (const char* key : {"topk", "next_n", "compress_ratio", "candidate_block_size", "candidate_topk_blocks",
                          "max_model_len", "page_size", "heads", "head_dim", "fp8", "layout"}) {
    std::string flag = std::string("--") + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    sub->add_option_function<std::string>(
        flag, [o, key](const std::string& value) { o->flags[key] = value; },
        std::string("Metadata key '") + key + "' when the file does not carry it");
  }
  return [o] {
    // No output file may be left behind by a failed run: the write is the
    // last step and atomic, and a stale file from an earlier run stays as it was.
    return reference(*o);
  };
});

}  // namespace
}  // namespace dsa::cli
