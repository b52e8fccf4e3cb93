#include "golden_case_metadata.hpp"

#include <charconv>

#include "dsa/error.hpp"

namespace dsa::dataset::detail {

std::optional<int64_t> parse_integer(const std::string& text) {
  int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (text.empty() || text[0] == '+') return std::nullopt;
  const auto [end, error] = std::from_chars(first, last, value);
  if (error != std::errc() || end != last) return std::nullopt;
  return value;
}

std::optional<std::string> MetadataReader::text(const std::string& key) const {
  const auto flag = flags_.find(key);
  const auto meta = metadata_.find(key);
  if (flag == flags_.end()) return meta == metadata_.end() ? std::nullopt : std::optional(meta->second);
  if (meta != metadata_.end() && meta->second != flag->second) {
    const auto a = parse_integer(meta->second), b = parse_integer(flag->second);
    if (!a || !b || *a != *b)
      throw InvalidInput(key, "the flag says '" + excerpt(flag->second) + "' but the file's metadata says '" +
                                  excerpt(meta->second) + "'");
  }
  return flag->second;
}

std::string MetadataReader::required_text(const std::string& key, const std::string& hint) const {
  auto value = text(key);
  if (!value) throw InvalidInput(key, "missing metadata key (and no flag gives it)" + (hint.empty() ? "" : ": " + hint));
  return *value;
}

std::optional<int64_t> MetadataReader::integer(const std::string& key, int64_t lo, int64_t hi) const {
  const auto value = text(key);
  if (!value) return std::nullopt;
  const auto parsed = parse_integer(*value);
  if (!parsed) throw InvalidInput(key, "'" + excerpt(*value) + "' is not a decimal integer");
  if (*parsed < lo || *parsed > hi)
    throw InvalidInput(key, std::to_string(*parsed) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return parsed;
}

int64_t MetadataReader::required_integer(const std::string& key, int64_t lo, int64_t hi, const std::string& hint) const {
  const auto value = integer(key, lo, hi);
  if (!value) throw InvalidInput(key, "missing metadata key (and no flag gives it)" + (hint.empty() ? "" : ": " + hint));
  return *value;
}

void MetadataReader::agrees(const std::string& key, int64_t derived, const std::string& from) const {
  const auto value = text(key);
  if (!value) return;
  const auto parsed = parse_integer(*value);
  if (!parsed) throw InvalidInput(key, "'" + excerpt(*value) + "' is not a decimal integer");
  if (*parsed != derived)
    throw InvalidInput(key, "says " + std::to_string(*parsed) + " but " + from + " gives " + std::to_string(derived));
}

}  // namespace dsa::dataset::detail
