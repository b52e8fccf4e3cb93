#include "dsa/dataset/manifest.hpp"

#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <set>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/dataset/json_input.hpp"
#include "dsa/error.hpp"
#include "dsa/input_file.hpp"

namespace dsa::dataset {
namespace {

using Json = nlohmann::json;

const Json& field(const Json& j, const char* key, Json::value_t type, const std::string& origin, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) throw InvalidInput(origin, where + " has no \"" + key + "\"");
  const bool ok = type == Json::value_t::number_unsigned ? it->is_number_unsigned() : it->type() == type;
  if (!ok) throw InvalidInput(origin, where + " \"" + key + "\" has the wrong type (" + it->type_name() + ")");
  return *it;
}

std::string text(const Json& j, const char* key, const std::string& origin, const std::string& where) {
  return field(j, key, Json::value_t::string, origin, where).get<std::string>();
}

struct DigestDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

class Sha256 {
public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("sha256: EVP init failed");
  }
  void update(const void* data, size_t size) {
    if (EVP_DigestUpdate(ctx_.get(), data, size) != 1) throw std::runtime_error("sha256: EVP update failed");
  }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), digest, &size) != 1) throw std::runtime_error("sha256: EVP final failed");
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (unsigned int i = 0; i < size; ++i) {
      s += digits[digest[i] >> 4];
      s += digits[digest[i] & 15];
    }
    return s;
  }

private:
  std::unique_ptr<EVP_MD_CTX, DigestDeleter> ctx_;
};

}  // namespace

std::string sha256_hex(std::span<const uint8_t> bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

std::string sha256_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw InvalidInput(path, "is a folder, not a file");
  if (std::filesystem::exists(path) && !std::filesystem::is_regular_file(path))
    throw InvalidInput(path, "is not a regular file (a device, a pipe or a socket)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(path, "cannot be read");
  Sha256 h;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), std::streamsize(buffer.size()));
    h.update(buffer.data(), size_t(in.gcount()));
  }
  if (in.bad()) throw InvalidInput(path, "read error");
  return h.hex();
}

Json to_json(const Manifest& m) {
  Json cases = Json::array();
  for (const auto& c : m.cases) {
    Json shapes = Json::object();
    for (const auto& [name, shape] : c.shapes) shapes[name] = shape;
    cases.push_back({{"file", c.file}, {"sha256", c.sha256}, {"op", c.op}, {"profile", c.profile},
                     {"outputs", c.outputs}, {"shapes", shapes}});
  }
  return {{"schema", kManifestSchema}, {"preset", m.preset}, {"profile", m.profile}, {"size", m.size},
          {"seed", m.seed}, {"generator", m.generator}, {"cases", cases}};
}

std::vector<uint8_t> manifest_bytes(const Manifest& m) {
  const std::string s = to_json(m).dump(2) + "\n";
  return {s.begin(), s.end()};
}

Manifest parse_manifest(const Json& j, const std::string& origin) {
  if (!j.is_object()) throw InvalidInput(origin, "the manifest is not a JSON object");
  const std::string schema = text(j, "schema", origin, "the manifest");
  if (schema != kManifestSchema)
    throw InvalidInput(origin, "schema '" + excerpt(schema) + "', this reader takes '" + std::string(kManifestSchema) + "'");
  Manifest m;
  m.preset = text(j, "preset", origin, "the manifest");
  m.profile = text(j, "profile", origin, "the manifest");
  m.size = text(j, "size", origin, "the manifest");
  m.generator = text(j, "generator", origin, "the manifest");
  m.seed = field(j, "seed", Json::value_t::number_unsigned, origin, "the manifest").get<uint64_t>();
  const Json& cases = field(j, "cases", Json::value_t::array, origin, "the manifest");
  std::set<std::string> files;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Json& c = cases[i];
    const std::string where = "case " + std::to_string(i);
    if (!c.is_object()) throw InvalidInput(origin, where + " is not an object");
    ManifestCase mc;
    mc.file = text(c, "file", origin, where);
    if (mc.file.empty() || mc.file.find('/') != std::string::npos || mc.file.find('\\') != std::string::npos ||
        mc.file[0] == '.')
      throw InvalidInput(origin, where + " file '" + excerpt(mc.file) + "' is not a plain file name in the set's folder");
    if (!files.insert(mc.file).second)
      throw InvalidInput(origin, where + " file '" + excerpt(mc.file) + "' is listed twice");
    mc.sha256 = text(c, "sha256", origin, where);
    if (mc.sha256.size() != 64 || mc.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw InvalidInput(origin, where + " sha256 '" + excerpt(mc.sha256) + "' is not 64 lower-case hex digits");
    mc.op = text(c, "op", origin, where);
    mc.profile = text(c, "profile", origin, where);
    for (const auto& o : field(c, "outputs", Json::value_t::array, origin, where)) {
      if (!o.is_string()) throw InvalidInput(origin, where + " outputs hold a non-string");
      mc.outputs.push_back(o.get<std::string>());
    }
    for (const auto& [name, shape] : field(c, "shapes", Json::value_t::object, origin, where).items()) {
      if (!shape.is_array()) throw InvalidInput(origin, where + " shape of '" + excerpt(name) + "' is not an array");
      Shape s;
      for (const auto& e : shape) {
        if (!e.is_number_unsigned() || e.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
          throw InvalidInput(origin, where + " shape of '" + excerpt(name) + "' holds a non-extent");
        s.push_back(e.get<int64_t>());
      }
      mc.shapes[name] = s;
    }
    m.cases.push_back(std::move(mc));
  }
  return m;
}

Manifest read_manifest(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw InvalidInput(path, "is a folder, not a manifest file");
  if (!std::filesystem::exists(path))
    throw InvalidInput(path, "cannot be read (no golden set here? `dsa-oracle golden` writes manifest.json)");
  const std::string content = read_input_text(path, path);
  return parse_manifest(parse_json(content, path, /*reject_duplicates=*/true), path);
}

ManifestCase manifest_case(const std::string& file, const Safetensors& content, std::span<const uint8_t> bytes) {
  ManifestCase c;
  c.file = file;
  c.sha256 = sha256_hex(bytes);
  c.op = content.meta("op");
  c.profile = content.meta("profile");
  const std::string& outputs = content.meta("outputs");
  for (size_t begin = 0; begin < outputs.size();) {
    const size_t comma = std::min(outputs.find(',', begin), outputs.size());
    c.outputs.push_back(outputs.substr(begin, comma - begin));
    begin = comma + 1;
  }
  for (const auto& [name, tensor] : content.tensors()) c.shapes[name] = tensor.shape;
  return c;
}

Manifest write_golden_set(const std::string& dir, const PresetRequest& request, const Progress& progress) {
  const auto plan = plan_preset(request);  // validates the request before anything is written
  Manifest m;
  m.preset = request.preset;
  m.profile = request.profile.empty() ? find_preset(request.preset).default_profile : request.profile;
  m.size = request.size;
  m.seed = request.seed;
  m.generator = generator_string(request);

  namespace fs = std::filesystem;
  const fs::path folder(dir);
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec || !fs::is_directory(folder)) throw InvalidInput("out", "cannot create folder '" + dir + "'");
  const fs::path manifest_path = folder / std::string(kManifestFile);
  if (fs::exists(manifest_path)) {
    const Manifest old = read_manifest(manifest_path.string());
    if (old.preset != m.preset || old.profile != m.profile || old.size != m.size || old.seed != m.seed)
      throw InvalidInput("out", "'" + dir + "' holds another golden set (preset " + old.preset + ", profile " +
                                    old.profile + ", size " + old.size + ", seed " + std::to_string(old.seed) +
                                    "): choose another folder");
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    if (progress) progress(i, plan.size(), plan[i].file);
    const Safetensors content = to_safetensors(plan[i].build());
    const std::vector<uint8_t> bytes = serialize_safetensors(content);
    write_file_atomically((folder / plan[i].file).string(), bytes);
    m.cases.push_back(manifest_case(plan[i].file, content, bytes));
  }
  write_file_atomically(manifest_path.string(), manifest_bytes(m));
  if (progress) progress(plan.size(), plan.size(), "");
  return m;
}

}  // namespace dsa::dataset
