// Stopping a campaign cleanly on SIGINT/SIGTERM: the signal handler (cli/)
// calls request_stop, which records the signal and kills every registered
// child process group at once (async-signal-safe); the campaign sees
// stop_requested() between cases, external calls in flight end with
// Interrupted, and the campaign prints and writes what it has, while the
// destructors remove the temporary folders.
#pragma once

#include <sys/types.h>

#include <stdexcept>

namespace dsa::fuzz {

// Thrown by a call that a stop request cut short. Never a failure of the case.
class Interrupted : public std::runtime_error {
public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// Async-signal-safe: records `signal` (the first one wins) and SIGKILLs every registered process group.
void request_stop(int signal) noexcept;
bool stop_requested() noexcept;
int stop_signal() noexcept;  // 0 when none
void clear_stop() noexcept;  // tests

// Process groups of running external commands (at most a few at once).
void register_child_group(pid_t group) noexcept;
void unregister_child_group(pid_t group) noexcept;

}  // namespace dsa::fuzz
