#include "dsa/dataset/json_input.hpp"

#include <set>
#include <vector>

#include "dsa/error.hpp"

namespace dsa::dataset {

void check_json_depth(std::string_view text, const std::string& origin, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw InvalidInput(origin, "JSON nested deeper than " + std::to_string(max_depth) + " levels (at byte " +
                                       std::to_string(i) + ")");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

nlohmann::json parse_json(std::string_view text, const std::string& origin, bool reject_duplicates, int max_depth) {
  using json = nlohmann::json;
  check_json_depth(text, origin, max_depth);
  // The callback sees every key as it is parsed, with one key set per open object.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  const json::parser_callback_t callback = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty()) {
      const std::string key = parsed.get<std::string>();
      if (!open_objects.back().insert(key).second && duplicate.empty()) duplicate = key;
    }
    return true;
  };
  json value;
  try {
    value = reject_duplicates ? json::parse(text.begin(), text.end(), callback) : json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw InvalidInput(origin, std::string("not valid JSON: ") + excerpt(e.what(), 200));
  }
  if (!duplicate.empty()) throw InvalidInput(origin, "duplicate key '" + excerpt(duplicate) + "'");
  return value;
}

std::string json_excerpt(const nlohmann::json& value, size_t max_bytes) {
  if (value.is_string()) return "\"" + excerpt(value.get_ref<const std::string&>(), max_bytes) + "\"";
  if (value.is_array() && value.size() > max_bytes) return "an array of " + std::to_string(value.size()) + " items";
  if (value.is_object() && value.size() > max_bytes) return "an object of " + std::to_string(value.size()) + " keys";
  return excerpt(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_bytes);
}

}  // namespace dsa::dataset
