// An implementation under test that is any command: each call writes its
// inputs to a safetensors file, runs `COMMAND --in IN --out OUT` through the
// shell, and reads the outputs back (docs/fuzzing.md, "Fuzz your own kernel").
//
// The exchange uses the golden files' container and tensor names
// (docs/golden-format.md): metadata `op` names the call (topk,
// candidate_select, candidate_topk, decode_logits, prefill_logits,
// compact_candidate_logits); inputs `logits`, `ks`/`ke` (row bounds),
// `candidate_blocks`, `q`, `kv_cache`, `weights`, `seq_lens`, `block_table`,
// `decode_lens`, `k`, `k_scales`; outputs `topk_indices`, `candidate_blocks`,
// `logits`, `compact_logits`. The input file also carries the output tensor
// filled with the oracle's poison: a harness that writes into it, as a kernel
// writes into a preallocated buffer, lets the oracle see entries never written.
//
// Exit status 0: outputs written; kExternalUnsupported (3): the command does
// not take this call (counted apart, never a pass); anything else: an error,
// reported as a failure with the end of the command's stderr.
#pragma once

#include <memory>
#include <string>

#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

inline constexpr int kExternalUnsupported = 3;

struct ExternalOptions {
  std::string work_dir;    // where the exchange files go; empty: a fresh folder under $TMPDIR
  bool keep_files = false; // leave the folder behind (to look at a failing exchange)
};

// Throws InvalidInput("impl", ...) for an empty command.
std::unique_ptr<IndexerOps> make_external_ops(const std::string& command, const ExternalOptions& options = {});

}  // namespace dsa::fuzz
