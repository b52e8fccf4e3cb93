// `dsa-oracle golden`: writes a preset's golden cases and their manifest.
#include <unistd.h>

#include <chrono>
#include <memory>

#include <fmt/core.h>

#include "command_registry.hpp"
#include "dsa/dataset/manifest.hpp"
#include "dsa/dataset/presets.hpp"

namespace dsa::cli {
namespace {

struct GoldenOptions {
  std::string preset;
  std::string out;
  uint64_t seed = 1;
  std::string profile;
  std::string size = "small";
  bool list = false;
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

int golden(const GoldenOptions& o) {
  if (o.list) return list_presets();
  if (o.preset.empty() || o.out.empty()) {
    fmt::print(stderr, "dsa-oracle golden: --preset and --out are required (--list shows the presets)\n");
    return kExitBadInput;
  }
  const dataset::PresetRequest request{o.preset, o.seed, o.profile, o.size};
  const auto t0 = std::chrono::steady_clock::now();
  const dataset::Manifest m = dataset::write_golden_set(o.out, request, show_progress);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{} cases of preset {} (profile {}, size {}, seed {}) written to {} in {:.1f} s, with {}\n", m.cases.size(),
             m.preset, m.profile, m.size, m.seed, o.out, seconds, dataset::kManifestFile);
  return kExitOk;
}

const Registrar registrar("golden", 40, [](CLI::App& app) {
  auto o = std::make_shared<GoldenOptions>();
  auto* sub = app.add_subcommand("golden", "Write a preset's golden cases (safetensors) and manifest.json");
  sub->add_option("--preset", o->preset, "Preset name (--list shows them)");
  sub->add_option("--out", o->out, "Output folder (created if needed)");
  sub->add_option("--seed", o->seed, "Random seed (the same seed gives the same bytes on every machine)");
  sub->add_option("--profile", o->profile, "Arithmetic profile (default: the preset's)");
  sub->add_option("--size", o->size, "small, medium, large (up to 128k context), N (context tokens) or BxN");
  sub->add_flag("--list", o->list, "List the presets and exit");
  return [o] { return golden(*o); };
});

}  // namespace
}  // namespace dsa::cli
