// Where a baseline's cases come from: a golden set (its manifest, every file
// hash-checked) or a plain folder of case files in the case schema.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/manifest.hpp"

namespace dsa::dataset::detail {

struct Source {
  std::string dir;
  std::optional<Manifest> manifest;
  std::vector<std::string> files;  // the manifest's order, or by name
};

// Throws InvalidInput("in") for a folder that is not one or holds no case file.
Source open_source(const std::string& dir);
// Case i: inputs, and the expected outputs when the file lists them (metadata
// `outputs`). Throws InvalidInput naming the file (a hash mismatch included).
GoldenCase read_source_case(const Source& source, size_t i);
// A case of a set with a manifest, its hash verified first.
GoldenCase read_verified_case(const std::string& dir, const ManifestCase& entry);

}  // namespace dsa::dataset::detail
