// Running the dsa-oracle program from a test: its exit code and its output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "build_paths.hpp"

namespace dsa::test {

struct CliRun {
  int exit_code = -1;   // -1: killed by a signal
  std::string output;   // stdout and stderr together
};

// `dsa-oracle ARGS` through the shell (ARGS is shell text: quote what needs it).
inline CliRun run_cli(const std::string& args, const std::string& env = "") {
  static std::atomic<int> counter{0};
  const auto log = std::filesystem::temp_directory_path() /
                   ("dsa_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".log");
  const std::string command = env + (env.empty() ? "" : " ") + "'" + std::string(DSA_CLI_PATH) + "' " + args + " > " +
                              log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

}  // namespace dsa::test
