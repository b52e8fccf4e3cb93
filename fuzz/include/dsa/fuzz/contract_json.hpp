// A contract (dsa/contract.hpp) as JSON: what an external command declares in
// a contract file (`fuzz --contract FILE`) or in its answer to `describe`.
//
//   {"ops": ["topk", "candidate_topk"], "k_values": [2048], "row_starts": false,
//    "profile": "deepgemm_sm90", "cache_layouts": ["block_flat"], "page_sizes": [64],
//    "min_next_n": 1, "max_next_n": 2, "heads": [64], "head_dims": [128],
//    "lens_1d": true, "lens_2d": true, "rising_2d_lens": true}
//
// Keys are the Contract's fields; "ops" is required, every other key may be
// left out (it then takes anything); an unknown key is an error, so that a
// misspelt clause is not silently "anything".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dsa/contract.hpp"

namespace dsa::fuzz {

// Throws InvalidInput("contract", ...) naming `origin` and the key.
Contract contract_from_json(const nlohmann::json& json, const std::string& origin);
nlohmann::json contract_to_json(const Contract& contract);

}  // namespace dsa::fuzz
