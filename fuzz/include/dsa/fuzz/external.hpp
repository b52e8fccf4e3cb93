// An implementation under test that is any command (docs/fuzzing.md, "Fuzz
// your own kernel"). Each IndexerOps call is one golden case (exchange.hpp)
// handed to the command in one of two modes:
//
//   per call    `COMMAND --in IN --out OUT` through the shell for every call;
//               exit 0: OUT holds the outputs; exit 3: the command does not
//               take this call (counted apart, never a pass).
//   persistent  `COMMAND --persistent` started once; each request is written
//               to its standard input as an 8-byte little-endian length and
//               that many bytes of safetensors, and the command answers on its
//               standard output the same way. An answer whose metadata says
//               `status: unsupported` is exit 3; `status: error` (with
//               `message`) a failure; anything else the outputs.
//
// A request whose metadata `op` is `describe` (no tensors) asks for the
// command's contract: an answer with metadata `contract` (JSON text); exit 3
// or `status: unsupported` when it has none.
//
// Every call runs under a timeout (the base timeout plus a second per 16 MiB
// of request), in the command's own process group, which is killed whole
// when the call ends, however it ends (nothing the command started outlives
// the call). A crash, a kill, a non-zero exit, a hang past the timeout or a
// malformed answer is a failure of that call (std::runtime_error) with the exit
// status or signal and the last lines of the command's standard error; in
// persistent mode the command is then started again for the next call. A
// stop request (interrupt.hpp) kills the group at once and the call throws Interrupted.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dsa/dataset/safetensors.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

inline constexpr int kExternalUnsupported = 3;

struct ExternalOptions {
  std::string work_dir;      // where the exchange files and the stderr log go; empty: a fresh folder under $TMPDIR
  bool keep_files = false;   // leave that folder behind (to look at an exchange)
  double timeout_seconds = 10;  // per call, plus 1 s per 16 MiB of request
  bool persistent = false;
};

// How a command's calls went, per op (the golden op name) and in all.
struct ExternalStats {
  int64_t calls = 0, answered = 0, unsupported = 0, failed = 0;
  int64_t starts = 0;  // processes started (per call: one per call)
  // Per op: the outcome of its first call ("answered", "unsupported", or the failure),
  // and whether that call's command exited with a non-zero status.
  std::map<std::string, std::string> first_call;
  std::map<std::string, bool> first_call_failed;
};

class ExternalCommand {
public:
  // Throws InvalidInput("impl", ...) for an empty command or a work folder it cannot create.
  ExternalCommand(std::string command, ExternalOptions options);
  ~ExternalCommand();
  ExternalCommand(const ExternalCommand&) = delete;
  ExternalCommand& operator=(const ExternalCommand&) = delete;

  const std::string& command() const { return command_; }
  const ExternalOptions& options() const { return options_; }
  const std::string& folder() const { return dir_; }

  // One request. Throws Unsupported, Interrupted, or std::runtime_error for a failed call.
  dataset::Safetensors call(const dataset::Safetensors& request);
  // The contract the command declares (the JSON text), if it answers `describe`.
  std::optional<std::string> describe();
  // Why the last describe() declared nothing, when its call failed (a command that does not
  // know `describe` may exit non-zero on it; one that hangs on it cost the whole timeout).
  const std::string& describe_failure() const { return describe_failure_; }

  const ExternalStats& stats() const { return stats_; }
  // A setup error: on its first call of every op it was given, the command
  // exited with a non-zero status (a missing module, a wrong path, a file
  // that is not executable; a crash, a hang or a malformed answer is a
  // failure of the case instead). The message quotes the first failure, its stderr included.
  std::optional<std::string> setup_error() const;
  // Writes the request of the last failed call to `path`; false when no call failed.
  bool keep_last_failed(const std::string& path) const;

private:
  struct Server;
  dataset::Safetensors call_per_process(const std::vector<uint8_t>& request, const std::string& op, double timeout);
  dataset::Safetensors call_persistent(const std::vector<uint8_t>& request, const std::string& op, double timeout);
  std::string stderr_tail() const;

  std::string command_;
  ExternalOptions options_;
  std::string dir_;
  bool owns_dir_ = false;
  std::unique_ptr<Server> server_;
  ExternalStats stats_;
  std::string describe_failure_;
  std::vector<uint8_t> last_failed_;
};

// One command shared by every instance the campaign makes (a persistent
// process outlives the instances; per-call mode shares the folder).
std::unique_ptr<IndexerOps> make_external_ops(std::shared_ptr<ExternalCommand> command);
// An instance with a command of its own.
std::unique_ptr<IndexerOps> make_external_ops(const std::string& command, const ExternalOptions& options = {});

// The last lines of a text (at most `lines` lines and `bytes` bytes), each a
// bounded excerpt: what a report quotes of a command's standard error.
std::string last_lines(const std::string& text, int lines = 10, size_t bytes = 2000);

}  // namespace dsa::fuzz
