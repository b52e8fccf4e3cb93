// An implementation under test reached through files: each IndexerOps call
// becomes one case of the golden schema (docs/golden-format.md, schema
// dsa-oracle/golden/1), written with the golden-case code of dataset/, and the
// answer is read back with the same code. So every request an implementation
// gets is a file `dsa-oracle reference` and `dsa-oracle check` take as it is.
//
//   IndexerOps call           golden op                 form
//   topk                      prefill_topk              given logits, ks, ke (row r selects in [ks, ke))
//   candidate_select          candidate_select          given logits, 2-D seq_lens [rows, 1] = E_r
//   candidate_topk            candidate_topk            given logits, 2-D seq_lens = L_r, candidate_blocks
//   decode_logits             decode_logits             the whole decode problem
//   prefill_logits            prefill_logits            the whole prefill problem
//   compact_candidate_logits  compact_candidate_logits  the decode problem and candidate_blocks
//   candidate_logits_top_k    compact_candidate_logits  the same with `topk`: compact logits and their top-k
//   candidate_mask (full)     candidate_mask            given logits (in place), 2-D seq_lens = E_r, candidate_blocks
//
// The other ops (the strided mask, prefill compact logits, padding, the SM100
// sparse steps one by one) have no form in the golden schema: Unsupported.
// The request also holds the caller's output buffers (poisoned by the
// harness) under the output names, listed in the `outputs` key: a kernel that
// writes into them as into preallocated buffers lets "every entry written"
// see what it never wrote, and `dsa-oracle reference` replaces them with the
// expected outputs. The answer holds the op's primary output (extra tensors
// are ignored), each checked for dtype and shape (dataset::read_outputs).
//
// How the request travels is the transport's business: a process per call, a
// persistent process (external.hpp), or a function in the same process. A
// transport throws dsa::Unsupported for a call the implementation does not
// take; any other exception is a failure of that call.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

using ExchangeTransport = std::function<dataset::Safetensors(const dataset::Safetensors& request)>;

// Written into every request's metadata (`generator`, never interpreted).
inline constexpr const char* kExchangeGenerator = "dsa-oracle fuzz";

std::unique_ptr<IndexerOps> make_exchange_ops(std::string name, ExchangeTransport transport);

// A transport that answers as `dsa-oracle reference` would: it reads the
// request with dataset::read_case_inputs, computes the expected outputs and
// returns them (for tests, and as the model of a correct external kernel).
dataset::Safetensors answer_with_reference(const dataset::Safetensors& request);

}  // namespace dsa::fuzz
