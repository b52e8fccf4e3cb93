// Metadata values of a golden file merged with the flags that stand for them:
// a flag fills a key the file lacks and must agree with the file otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dsa/dataset/golden_case.hpp"

namespace dsa::dataset::detail {

class MetadataReader {
public:
  MetadataReader(const std::map<std::string, std::string>& metadata, const MetadataFlags& flags)
      : metadata_(metadata), flags_(flags) {}

  // The value from the flag or the file; InvalidInput(key) when they disagree
  // (integers compare by value).
  std::optional<std::string> text(const std::string& key) const;
  std::string required_text(const std::string& key, const std::string& hint = {}) const;
  // A decimal integer in [lo, hi]; InvalidInput(key) for anything else.
  std::optional<int64_t> integer(const std::string& key, int64_t lo, int64_t hi) const;
  int64_t required_integer(const std::string& key, int64_t lo, int64_t hi, const std::string& hint = {}) const;
  // A value the tensors already fix: the key may be absent, else it must say `derived`.
  void agrees(const std::string& key, int64_t derived, const std::string& from) const;

private:
  const std::map<std::string, std::string>& metadata_;
  const MetadataFlags& flags_;
};

// Strict decimal integer (optional '-', digits only); none when it is not one.
std::optional<int64_t> parse_integer(const std::string& text);

}  // namespace dsa::dataset::detail
