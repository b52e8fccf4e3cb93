#include "dsa/fuzz/interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace dsa::fuzz {
namespace {

std::atomic<int> stop{0};
constexpr int kGroups = 64;
std::atomic<pid_t> groups[kGroups];

}  // namespace

void request_stop(int signal) noexcept {
  int none = 0;
  stop.compare_exchange_strong(none, signal > 0 ? signal : SIGTERM);
  for (auto& g : groups)
    if (const pid_t pid = g.load(); pid > 0) ::kill(-pid, SIGKILL);
}

bool stop_requested() noexcept { return stop.load() != 0; }
int stop_signal() noexcept { return stop.load(); }
void clear_stop() noexcept { stop.store(0); }

void register_child_group(pid_t group) noexcept {
  for (auto& g : groups) {
    pid_t free = 0;
    if (g.compare_exchange_strong(free, group)) return;
  }
}

void unregister_child_group(pid_t group) noexcept {
  for (auto& g : groups) {
    pid_t same = group;
    if (g.compare_exchange_strong(same, 0)) return;
  }
}

}  // namespace dsa::fuzz
