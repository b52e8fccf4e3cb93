// The second half of `dsa-oracle run`: every implementation of the table on
// run's decode steps. Each op of run's (decode_logits, topk) that an
// implementation takes is judged against the reference on every step its
// contract takes: its logits bit for bit against the reference's under the
// profile it claims (`exact` when it claims any), its top-k rows equal to the
// reference's or else by the selection rule on the reference's logits, both
// into poisoned buffers. An implementation that cannot run here (a GPU entry
// without its device) is listed as skipped, with why; one that takes neither
// op as not run.
#pragma once

#include <string>
#include <vector>

#include "dsa/problem.hpp"

namespace dsa::cli {

struct RunStep {
  std::string name;
  DecodeProblem problem;
  int k = 0;  // the top-k size
};

struct ImplementationRow {
  std::string impl, op;  // op "-" for a skipped or not-run implementation
  int steps = 0;         // steps run (the others its contract does not take)
  std::string verdict;   // "pass", "FAIL (...)", "skipped: ...", "not run: ..."
  bool failed = false;
  double seconds = 0, reference_seconds = 0;  // the op over the steps run, the implementation and the reference
};

std::vector<ImplementationRow> run_implementations(const std::vector<RunStep>& steps);

}  // namespace dsa::cli
