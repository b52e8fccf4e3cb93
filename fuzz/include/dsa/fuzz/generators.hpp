// RapidCheck generators of whole cases (cases.hpp). They draw descriptions,
// not arrays: a shrink step removes a row or request, shortens a length,
// moves a choice towards the first (simplest) option or a seed towards 0, and
// the arrays follow. Every choice shrinks; every case stays within the work
// limits so that one case runs in a fraction of a second.
#pragma once

#include <cstdint>

#include <rapidcheck.h>

#include "dsa/contract.hpp"
#include "dsa/fuzz/cases.hpp"

namespace dsa::fuzz {

struct GenLimits {
  int32_t max_rows = 64;              // rows of a top-k case; requests (batch) of the others
  int64_t logits_elements = 1 << 20;  // rows x width of a top-k or candidate case
  int64_t exact_products = 1 << 24;   // sum over rows of L_r * H * D under the `exact` profile
  int64_t model_products = 1 << 21;   // the same under a matrix-unit model (each product is emulated)
  // What the implementation under test takes (its contract, narrowed by the
  // campaign's --profile, --page-size, --layout, --next-n): every case is drawn
  // and shrunk inside it. Its ops are not read here (they decide which
  // properties apply); every other clause that is empty or at its default takes anything.
  Contract draw;
};

// Whether a case lies inside the contract's clauses (ops aside): k, next_n,
// 1-D/2-D lengths and their rise, row starts, layouts, page sizes, heads,
// head dims and the profile.
bool within(const Contract& contract, const FuzzCase& c);
// A fixed case (a property's probe) moved inside the contract: each clause it
// breaks replaced by the contract's first value. The result may still be
// outside it when nothing fits (check within()).
FuzzCase fitted(const Contract& contract, FuzzCase c);

rc::Gen<TopkCase> gen_topk_case(const GenLimits& limits = {});
rc::Gen<CandidateCase> gen_candidate_case(const GenLimits& limits = {});

struct DecodeGenOptions {
  bool padded_only = false;  // every case a padded step (1-D lengths, decode_lens)
  // The SM100 sparse form: MXFP4 under a profile writing bf16 logits, candidate
  // block sizes a multiple of 8 (the sparse block of 8 or 16 entries divides them).
  bool sparse_form = false;
};
rc::Gen<DecodeCase> gen_decode_case(const GenLimits& limits = {}, DecodeGenOptions options = {});
rc::Gen<PrefillCase> gen_prefill_case(const GenLimits& limits = {});

// Lengths that matter around k, a page, and the sizes where real kernels
// changed behaviour (2048, 16384 + 1, 2^17 and beyond), clamped to cap.
rc::Gen<int64_t> gen_length(int64_t k, int64_t page, int64_t cap);

// The work of a decode case (sum of L_r * H * D) and the limit it is held to.
int64_t decode_products(const DecodeCase& c);
int64_t decode_product_limit(const DecodeCase& c, const GenLimits& limits);

}  // namespace dsa::fuzz
