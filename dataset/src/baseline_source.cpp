#include "baseline_source.hpp"

#include <algorithm>
#include <filesystem>

#include "dsa/error.hpp"

namespace dsa::dataset::detail {
namespace {

namespace fs = std::filesystem;

GoldenCase read_case_file(const std::string& path) {
  const Safetensors file = read_safetensors(path);
  return file.metadata.count("outputs") ? read_golden_case(file) : read_case_inputs(file);
}

}  // namespace

Source open_source(const std::string& dir) {
  if (!fs::is_directory(dir)) throw InvalidInput("in", "'" + dir + "' is not a folder");
  Source s;
  s.dir = dir;
  const fs::path manifest = fs::path(dir) / std::string(kManifestFile);
  if (fs::exists(manifest)) {
    s.manifest = read_manifest(manifest.string());
    for (const auto& c : s.manifest->cases) s.files.push_back(c.file);
  } else {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name.ends_with(".safetensors") && !name.starts_with(".")) s.files.push_back(name);
    }
    std::sort(s.files.begin(), s.files.end());
  }
  if (s.files.empty())
    throw InvalidInput("in", "'" + dir + "' holds no case: give a golden set or a folder of .safetensors cases");
  return s;
}

GoldenCase read_verified_case(const std::string& dir, const ManifestCase& entry) {
  const std::string path = (fs::path(dir) / entry.file).string();
  const std::string actual = sha256_file(path);
  if (actual != entry.sha256)
    throw InvalidInput(path, "does not match its manifest hash (manifest sha256 " + entry.sha256 + ", file " + actual +
                                 "): the file was modified or corrupted; record or generate the set again, or restore it");
  return read_case_file(path);
}

GoldenCase read_source_case(const Source& s, size_t i) {
  if (s.manifest) return read_verified_case(s.dir, s.manifest->cases[i]);
  return read_case_file((fs::path(s.dir) / s.files[i]).string());
}

}  // namespace dsa::dataset::detail
