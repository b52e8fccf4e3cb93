// `dsa-oracle golden`: writes a preset's golden cases and their manifest, or
// (--record) a baseline set: an implementation's outputs on a set of cases.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "command_registry.hpp"
#include "dsa/dataset/baseline.hpp"
#include "dsa/dataset/manifest.hpp"
#include "dsa/dataset/presets.hpp"
#include "dsa/dataset/temp_files.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/implementations.hpp"

namespace dsa::cli {
namespace {

struct GoldenOptions {
  std::string preset;
  std::string out;
  uint64_t seed = 1;
  std::string profile;
  std::string size = "small";
  bool list = false;
  // --record
  bool record = false;
  std::string impl;
  std::string in;
  std::string outputs;
  std::string name;
  std::string version;
};

// A bar redrawn in place on a terminal, one line per case otherwise (CI logs).
void show_progress(size_t done, size_t total, const std::string& file) {
  static const bool terminal = isatty(STDERR_FILENO) != 0;
  constexpr size_t kWidth = 30;
  const size_t filled = total ? done * kWidth / total : kWidth;
  const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
  if (terminal) {
    fmt::print(stderr, "\r[{}] {}/{} {:<48}", bar, done, total, file.empty() ? "done" : file);
    if (done == total) fmt::print(stderr, "\n");
  } else if (done < total) {
    fmt::print(stderr, "[{}] {}/{} {}\n", bar, done + 1, total, file);
  }
}

int list_presets() {
  for (const auto& p : dataset::golden_presets())
    fmt::print("{:<12} (default profile {})\n  {}\n", p.name, p.default_profile, p.description);
  return kExitOk;
}

// `git describe` of the current folder, when it is a git checkout: the commit a kernel was built from.
std::string current_commit() {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen("git describe --always --dirty 2>/dev/null", "r"), pclose);
  if (!pipe) return {};
  std::array<char, 256> buf{};
  std::string out;
  while (fgets(buf.data(), int(buf.size()), pipe.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.empty() ? std::string() : "git " + out;
}

int record(const GoldenOptions& o) {
  if (o.in.empty() || o.out.empty())
    throw InvalidInput("in", "--record needs --in DIR (a golden set or a folder of cases) and --out DIR");
  if (o.impl.empty() == o.outputs.empty())
    throw InvalidInput("impl", "--record takes exactly one of --impl NAME (run it) and --outputs DIR (outputs made elsewhere)");
  if (!o.outputs.empty() && o.name.empty())
    throw InvalidInput("name", "--outputs needs --name NAME: what made those outputs, for the baseline's metadata");
  std::string version = o.version.empty() ? current_commit() : o.version;
  if (version.empty()) version = "unknown (give --version)";
  const dataset::BaselineInfo info = dataset::describe_baseline(o.impl.empty() ? o.name : o.impl, version, o.in);
  const auto t0 = std::chrono::steady_clock::now();
  dataset::Recording rec;
  if (o.impl.empty()) {
    rec = dataset::record_baseline_outputs(o.in, o.outputs, o.out, info, show_progress);
  } else {
    const std::unique_ptr<IndexerOps> impl = fuzz::make_implementation(o.impl);  // refuses one that cannot run here
    rec = dataset::record_baseline(o.in, *impl, fuzz::implementation_contract(o.impl), o.out, info, show_progress);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& c : rec.cases) {
    if (c.status == "recorded") {
      fmt::print("{:<48} {:<26} recorded: {}{}\n", c.file, c.op, fmt::join(c.outputs, ", "),
                 c.from_golden.empty() ? "" : fmt::format(" (kept from the source: {})", fmt::join(c.from_golden, ", ")));
    } else {
      fmt::print("{:<48} {:<26} {}\n    {}\n", c.file, c.op, c.status, c.error);
    }
  }
  fmt::print("\nbaseline of {} ({}) on {}, {}: {} of {} cases recorded to {} in {:.1f} s ({} not run, {} failed, {} bad "
             "input)\n",
             info.impl, info.version, info.machine, info.date, rec.count("recorded"), rec.cases.size(), o.out, seconds,
             rec.count("not run"), rec.count("failed"), rec.count("bad input"));
  if (rec.count("recorded") == 0) fmt::print("nothing was recorded: that is not a baseline (exit 1)\n");
  return rec.exit_code();
}

int golden(const GoldenOptions& o) {
  if (o.list) return list_presets();
  if (o.record) return record(o);
  if (o.preset.empty() || o.out.empty()) {
    fmt::print(stderr, "dsa-oracle golden: --preset and --out are required (--list shows the presets)\n");
    return kExitBadInput;
  }
  const dataset::PresetRequest request{o.preset, o.seed, o.profile, o.size};
  dataset::plan_preset(request);  // the request is valid (and fits in memory) before anything is created
  dataset::require_writable_folder(o.out, "out");
  for (const auto& stale : dataset::remove_stale_temp_files(o.out))
    fmt::print(stderr, "removed {}, the temporary file of a run that was killed\n", stale);
  const auto t0 = std::chrono::steady_clock::now();
  const dataset::Manifest m = dataset::write_golden_set(o.out, request, show_progress);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{} cases of preset {} (profile {}, size {}, seed {}) written to {} in {:.1f} s, with {}\n", m.cases.size(),
             m.preset, m.profile, m.size, m.seed, o.out, seconds, dataset::kManifestFile);
  return kExitOk;
}

const Registrar golden_registrar("golden", 40, [](CLI::App& app) {
  auto o = std::make_shared<GoldenOptions>();
  auto* sub = app.add_subcommand("golden", "Write a preset's golden cases (safetensors) and manifest.json");
  sub->add_option("--preset", o->preset, "Preset name (--list shows them)");
  sub->add_option("--out", o->out, "Output folder (created if needed)");
  sub->add_option("--seed", o->seed, "Random seed (the same seed gives the same bytes on every machine)");
  sub->add_option("--profile", o->profile, "Arithmetic profile (default: the preset's)");
  sub->add_option("--size", o->size, "small, medium, large (up to 128k context), N (context tokens) or BxN");
  sub->add_flag("--list", o->list, "List the presets and exit");
  sub->add_flag("--record", o->record,
                "Record a baseline set instead: the outputs of --impl (or of --outputs) on the cases of --in, into --out");
  sub->add_option("--impl", o->impl, "--record: an implementation of the table or external:COMMAND, run on every case");
  sub->add_option("--in", o->in, "--record: a golden set, or a folder of cases in the case schema");
  sub->add_option("--outputs", o->outputs,
                  "--record: outputs made elsewhere instead of --impl, one file per case with the case's name");
  sub->add_option("--name", o->name, "--record --outputs: the name of what made the outputs");
  sub->add_option("--version", o->version,
                  "--record: the implementation's version string or commit (default: `git describe` of this folder)");
  return [o] { return golden(*o); };
});

}  // namespace
}  // namespace dsa::cli
