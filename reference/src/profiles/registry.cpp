// The registry of named profiles and the Profile checks.
#include <algorithm>
#include <sstream>
#include <string>

#include "catalog.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa {
namespace {

const std::vector<Profile>& registry() {
  static const std::vector<Profile> all = {profiles::exact(),          profiles::deepgemm_sm90(),
                                           profiles::deepgemm_sm100(), profiles::deepgemm_sm100_bf16(),
                                           profiles::aiter_gfx942_gluon(), profiles::dsa_gfx942(),
                                           profiles::vllm_triton_c4a(),    profiles::dsa_sm90(),
                                           profiles::dsa_sm90_accurate()};
  return all;
}

std::string joined_names() {
  std::string s;
  for (const Profile& p : registry()) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

}  // namespace

namespace profiles {
void require_heads_multiple(const char* profile, int heads, int multiple, const std::string& why) {
  if (heads > 0 && heads % multiple == 0) return;
  throw InvalidInput("heads", "profile " + std::string(profile) + " takes H a positive multiple of " +
                                  std::to_string(multiple) + ", got " + std::to_string(heads) +
                                  (why.empty() ? "" : " (" + why + ")"));
}
}  // namespace profiles

const Profile& find_profile(std::string_view name) {
  for (const Profile& p : registry())
    if (p.name == name) return p;
  throw InvalidInput("profile", "unknown profile '" + excerpt(name) + "' (known: " + joined_names() + ")");
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  for (const Profile& p : registry()) names.push_back(p.name);
  return names;
}

bool Profile::accepts(ElementFormat e) const { return std::find(elements.begin(), elements.end(), e) != elements.end(); }

void Profile::require(ElementFormat e) const {
  if (accepts(e)) return;
  std::string formats;
  for (ElementFormat f : elements) formats += (formats.empty() ? "" : ", ") + std::string(to_string(f));
  throw InvalidInput("profile", "profile " + name + " does not take " + std::string(to_string(e)) +
                                    " elements (it takes " + formats + ")");
}

void Profile::require_weights(std::span<const float> w, int heads) const {
  if (weights != Precision::bf16) return;
  for (size_t i = 0; i < w.size(); ++i) {
    if (round_to_bf16(w[i]) == w[i] || (w[i] != w[i])) continue;
    const std::string where = heads > 0 ? "weights[" + std::to_string(i / size_t(heads)) + "][" +
                                              std::to_string(i % size_t(heads)) + "]"
                                        : "weights[" + std::to_string(i) + "]";
    std::ostringstream value;
    value.precision(9);
    value << w[i];
    throw InvalidInput("weights", "profile " + name + " takes bf16 weights, but " + where + " = " + value.str() +
                                      " is not a bf16 value");
  }
}

}  // namespace dsa
