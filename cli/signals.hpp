// SIGINT and SIGTERM, for every subcommand: the temporary file of a write in
// progress is removed and running external commands are killed with their
// process groups; then the program ends as the signal says (exit 130/143
// from a shell). While a CooperativeStop lives (a fuzz campaign), the first
// signal only asks the campaign to stop (fuzz/interrupt.hpp): it prints and
// writes what it has and exits 128 + the signal; a second one ends it at once.
#pragma once

namespace dsa::cli {

class CooperativeStop {
public:
  CooperativeStop();
  ~CooperativeStop();
  CooperativeStop(const CooperativeStop&) = delete;
  CooperativeStop& operator=(const CooperativeStop&) = delete;
};

}  // namespace dsa::cli
