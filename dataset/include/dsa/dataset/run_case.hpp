// An implementation under test run in process on a golden case: every op the
// case's op needs, through IndexerOps, into buffers sized and poisoned as a
// harness does (oracle/poison.hpp), so that check_case judges what the
// implementation wrote, "every entry written" included. `dsa-oracle check
// --impl`, the Python module and the regression checks share it.
//
// The stages of each golden op, in order (an op in brackets only when the
// case needs it):
//   decode_logits / prefill_logits  the logits op
//   decode_topk / prefill_topk      [logits], topk over [0, L_r) or [ks, ke)
//   candidate_select                [logits], candidate_select over [0, E_r), [topk]
//   candidate_mask                  [logits], candidate_mask (full) over [0, E_r), topk of the masked rows
//   candidate_topk, consumer_step   [logits], candidate_topk over [0, L_r)
//   compact_candidate_logits        candidate_logits_top_k when the case has a top-k and the
//                                   implementation takes it, else compact_candidate_logits
//   sparse_sm100                    expand_candidate_blocks, sparse_logits, sparse_topk
// A stage runs through the implementation when its contract takes the op,
// claims the case's profile (for the ops that compute logits) and takes the
// call's shapes, and the call does not throw Unsupported. Otherwise the stage
// is skipped: when the golden file holds its output (the logits before a
// top-k) the next stage reads that instead, and it is not judged (check_case
// then judges a top-k on the reference's values). The next stage reads the
// implementation's own logits inside each row's window and -inf outside (the
// reference's values there: a kernel may leave those entries unwritten).
#pragma once

#include <string>
#include <vector>

#include "dsa/contract.hpp"
#include "dsa/dataset/golden_case.hpp"
#include "dsa/indexer_ops.hpp"
#include "dsa/oracle/report.hpp"

namespace dsa::dataset {

struct CaseRun {
  GoldenOutputs outputs;                 // what the implementation wrote
  std::vector<std::string> ops_run;      // the IndexerOps calls made, in order
  std::vector<std::string> from_golden;  // stage outputs read from the golden file instead
  std::vector<std::string> skipped;      // per skipped stage: "<op>: why"
  // Non-empty: the implementation threw on a valid case (InvalidInput or an
  // internal error): a failure of the case, with the message.
  std::string failure;
  bool ran() const { return !outputs.names().empty(); }
};

CaseRun run_case(IndexerOps& impl, const Contract& contract, const GoldenCase& golden);

// The report entry of a run that threw on a valid case (`run.failure` non-empty), under the case's file.
oracle::Report::Entry run_failure_entry(const std::string& file, const CaseRun& run);

// Why a case did not run: each skipped stage's reason, "; " between them.
std::string skipped_reasons(const CaseRun& run);

}  // namespace dsa::dataset
