// The manifest of a golden set (manifest.json next to its case files): what
// was generated (preset, seed, size, profile) and, per case, the file, its
// SHA-256, op, outputs and tensor shapes. `dsa-oracle check` verifies the
// hashes before it trusts a golden file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsa/dataset/presets.hpp"
#include "dsa/dataset/safetensors.hpp"

namespace dsa::dataset {

inline constexpr std::string_view kManifestSchema = "dsa-oracle/golden-manifest/1";
inline constexpr std::string_view kManifestFile = "manifest.json";

// Lower-case hex SHA-256 (OpenSSL libcrypto, EVP interface).
std::string sha256_hex(std::span<const uint8_t> bytes);
// Of a whole file; throws InvalidInput(path, ...) when it cannot be read.
std::string sha256_file(const std::string& path);

struct ManifestCase {
  std::string file;
  std::string sha256;
  std::string op;
  std::string profile;
  std::vector<std::string> outputs;
  std::map<std::string, Shape> shapes;  // every tensor of the file
};

struct Manifest {
  std::string preset;
  std::string profile;
  std::string size;
  uint64_t seed = 0;
  std::string generator;
  std::vector<ManifestCase> cases;  // in generation order
};

// Keys sorted (nlohmann's object), cases in order; the bytes end with a newline.
nlohmann::json to_json(const Manifest& manifest);
std::vector<uint8_t> manifest_bytes(const Manifest& manifest);
// Throws InvalidInput(origin, ...) naming the missing or mistyped field.
Manifest parse_manifest(const nlohmann::json& json, const std::string& origin);
Manifest read_manifest(const std::string& path);

ManifestCase manifest_case(const std::string& file, const Safetensors& content, std::span<const uint8_t> bytes);

// Generates a preset into `dir` (created if needed): every case file written
// under a temporary name and renamed, then manifest.json the same way, last,
// so a directory with a manifest is whole. Refuses (InvalidInput("out", ...))
// a directory whose manifest describes another preset, profile, size or seed.
// progress(done, total, file) is called before each case and once at the end.
using Progress = std::function<void(size_t done, size_t total, const std::string& file)>;
Manifest write_golden_set(const std::string& dir, const PresetRequest& request, const Progress& progress = {});

}  // namespace dsa::dataset
