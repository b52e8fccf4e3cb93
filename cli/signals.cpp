#include "signals.hpp"

#include <signal.h>

#include <atomic>

#include "dsa/dataset/temp_files.hpp"
#include "dsa/fuzz/interrupt.hpp"

namespace dsa::cli {
namespace {

std::atomic<int> cooperative{0};

void on_signal(int sig) {
  dataset::remove_registered_temp_files();
  const bool again = fuzz::stop_requested();
  fuzz::request_stop(sig);
  if (cooperative.load() > 0 && !again) return;
  signal(sig, SIG_DFL);
  raise(sig);
}

// Installed before main, for every subcommand.
const bool installed = [] {
  struct sigaction action{};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old{};
    // A signal the parent made us ignore (nohup, a background job) stays ignored.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &action, nullptr);
  }
  return true;
}();

}  // namespace

CooperativeStop::CooperativeStop() { cooperative.fetch_add(1); }
CooperativeStop::~CooperativeStop() { cooperative.fetch_sub(1); }

}  // namespace dsa::cli
