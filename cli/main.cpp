// dsa-oracle: the test oracle for the DeepSeek sparse-attention indexer.
#include <algorithm>

#include "command_registry.hpp"

namespace dsa::cli {
std::vector<Command>& commands() {
  static std::vector<Command> registry;
  return registry;
}
}  // namespace dsa::cli

int main(int argc, char** argv) {
  using namespace dsa::cli;
  CLI::App app{"dsa-oracle: bit-exact reference, comparators and fuzzer for the DeepSeek sparse-attention indexer"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dsa-oracle 0.1.0");
  auto& registry = commands();
  std::sort(registry.begin(), registry.end(), [](const Command& a, const Command& b) { return a.order < b.order; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& command : registry) {
    std::size_t before = app.get_subcommands({}).size();
    auto run = command.setup(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) runners.emplace_back(subs.back(), std::move(run));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  for (auto& [sub, run] : runners)
    if (sub->parsed()) return run_reporting_errors(run);
  return kExitBadInput;
}
