// JSON from outside (safetensors headers, manifests, replay descriptions,
// fuzz result lines, contract files) parsed with bounds: nesting is checked
// on the raw text before any parse (so that no recursive walk, dump or
// destructor ever meets a value nested hundreds of thousands deep), and values
// quoted in messages are excerpts, never whole dumps.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dsa::dataset {

// Deeper than any file of ours nests (a safetensors header: 3 levels).
inline constexpr int kMaxJsonDepth = 64;

// Throws InvalidInput(origin, ...) when arrays and objects in `text` nest
// deeper than max_depth. Linear, allocates nothing; strings are skipped.
void check_json_depth(std::string_view text, const std::string& origin, int max_depth = kMaxJsonDepth);

// Parses `text` (depth checked first). Throws InvalidInput(origin, ...) for
// text that is not JSON and, when reject_duplicates, for a key given twice in
// one object (nlohmann would silently keep the last).
nlohmann::json parse_json(std::string_view text, const std::string& origin, bool reject_duplicates = false,
                          int max_depth = kMaxJsonDepth);

// A value as a message quotes it: at most max_bytes of its JSON text.
std::string json_excerpt(const nlohmann::json& value, size_t max_bytes = 80);

}  // namespace dsa::dataset
