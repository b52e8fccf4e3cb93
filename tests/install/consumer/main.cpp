// Uses the installed reference and oracle: the top-k of two rows, judged by the oracle.
#include <cstdio>
#include <vector>

#include <dsa/oracle/report.hpp>
#include <dsa/oracle/selection_check.hpp>
#include <dsa/topk.hpp>

int main() {
  const dsa::Logits logits{2, 5, {1, 5, 3, 5, 2, 0, 4, 0, 9, 9}};
  const std::vector<int64_t> lens = {5, 3};
  const dsa::TopkIndices topk = dsa::topk_rows(logits, lens, 2);
  const dsa::oracle::SelectionVerdict verdict = dsa::oracle::check_topk(dsa::oracle::view(topk), logits, lens);
  std::printf("%s\n", dsa::oracle::summary_line(verdict).c_str());
  // Row 0: the two 5s (indices 1 and 3); row 1 sees [0, 3): 4 at index 1 first.
  const bool right = topk.row(0)[0] == 1 && topk.row(0)[1] == 3 && topk.row(1)[0] == 1;
  return verdict.passed && right ? 0 : 1;
}
