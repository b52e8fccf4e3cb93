// Subcommands of `dsa-oracle` register themselves here: each lives in its own
// file with a static Registrar, so adding one touches no other file.
//
// Exit codes, everywhere: exit_codes.hpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "exit_codes.hpp"

namespace dsa::cli {

struct Command {
  std::string name;
  int order;  // position in --help
  // Adds the subcommand to app; returns the function that runs it once parsed.
  std::function<std::function<int()>(CLI::App& app)> setup;
};

std::vector<Command>& commands();

struct Registrar {
  Registrar(std::string name, int order, std::function<std::function<int()>(CLI::App&)> setup) {
    commands().push_back({std::move(name), order, std::move(setup)});
  }
};

}  // namespace dsa::cli
