#include "dsa/fuzz/contract_json.hpp"

#include <fmt/format.h>

#include "dsa/dataset/json_input.hpp"
#include "dsa/error.hpp"
#include "dsa/profile.hpp"

namespace dsa::fuzz {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& origin, const std::string& key, const std::string& why) {
  throw InvalidInput("contract", origin + ": \"" + key + "\" " + why);
}

int32_t positive_int(const json& v, const std::string& origin, const std::string& key) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > std::numeric_limits<int32_t>::max())
    refuse(origin, key, "holds " + dataset::json_excerpt(v) + ", not a positive 32-bit integer");
  return v.get<int32_t>();
}

std::vector<int32_t> int_list(const json& v, const std::string& origin, const std::string& key) {
  if (!v.is_array()) refuse(origin, key, "is not a list");
  std::vector<int32_t> out;
  for (const json& x : v) out.push_back(positive_int(x, origin, key));
  return out;
}

bool flag(const json& v, const std::string& origin, const std::string& key) {
  if (!v.is_boolean()) refuse(origin, key, "is not true or false");
  return v.get<bool>();
}

std::vector<std::string> names(const json& v, const std::string& origin, const std::string& key) {
  if (!v.is_array()) refuse(origin, key, "is not a list");
  std::vector<std::string> out;
  for (const json& x : v) {
    if (!x.is_string()) refuse(origin, key, "holds " + dataset::json_excerpt(x) + ", not a name");
    out.push_back(x.get<std::string>());
  }
  return out;
}

}  // namespace

Contract contract_from_json(const json& j, const std::string& origin) {
  if (!j.is_object()) throw InvalidInput("contract", origin + ": a contract is a JSON object");
  if (!j.contains("ops")) throw InvalidInput("contract", origin + ": \"ops\" is missing (the ops the command takes)");
  Contract c;
  for (const auto& [key, v] : j.items()) {
    try {
      if (key == "ops") {
        for (const std::string& op : names(v, origin, key)) c.ops.insert(parse_op(op));
      } else if (key == "profile") {
        if (!v.is_string()) refuse(origin, key, "is not a profile name");
        c.profile = v.get<std::string>();
        if (!c.profile.empty()) find_profile(c.profile);
      } else if (key == "cache_layouts") {
        for (const std::string& layout : names(v, origin, key)) c.cache_layouts.push_back(parse_cache_layout(layout));
      } else if (key == "page_sizes") {
        c.page_sizes = int_list(v, origin, key);
      } else if (key == "min_next_n") {
        c.min_next_n = positive_int(v, origin, key);
      } else if (key == "max_next_n") {
        c.max_next_n = positive_int(v, origin, key);
      } else if (key == "heads") {
        c.heads = int_list(v, origin, key);
      } else if (key == "head_dims") {
        c.head_dims = int_list(v, origin, key);
      } else if (key == "k_values") {
        c.k_values = int_list(v, origin, key);
      } else if (key == "candidate_block_sizes") {
        c.candidate_block_sizes = int_list(v, origin, key);
      } else if (key == "row_starts") {
        c.row_starts = flag(v, origin, key);
      } else if (key == "lens_1d") {
        c.lens_1d = flag(v, origin, key);
      } else if (key == "lens_2d") {
        c.lens_2d = flag(v, origin, key);
      } else if (key == "rising_2d_lens") {
        c.rising_2d_lens = flag(v, origin, key);
      } else {
        refuse(origin, excerpt(key), "is not a clause of a contract (ops, profile, cache_layouts, page_sizes, min_next_n, "
                                     "max_next_n, heads, head_dims, k_values, candidate_block_sizes, row_starts, lens_1d, "
                                     "lens_2d, rising_2d_lens)");
      }
    } catch (const InvalidInput& e) {
      if (e.argument() == "contract") throw;
      throw InvalidInput("contract", origin + ": \"" + key + "\": " + e.what());
    }
  }
  if (c.min_next_n > c.max_next_n)
    throw InvalidInput("contract", fmt::format("{}: min_next_n {} is above max_next_n {}", origin, c.min_next_n, c.max_next_n));
  if (!c.lens_1d && !c.lens_2d) throw InvalidInput("contract", origin + ": neither lens_1d nor lens_2d: no decode length can be given");
  return c;
}

json contract_to_json(const Contract& c) {
  json ops = json::array();
  for (Op op : c.ops) ops.push_back(std::string(to_string(op)));
  json layouts = json::array();
  for (CacheLayout l : c.cache_layouts) layouts.push_back(std::string(to_string(l)));
  return {{"ops", ops},           {"profile", c.profile},       {"cache_layouts", layouts},
          {"page_sizes", c.page_sizes}, {"min_next_n", c.min_next_n}, {"max_next_n", c.max_next_n},
          {"heads", c.heads},     {"head_dims", c.head_dims},   {"k_values", c.k_values},
          {"candidate_block_sizes", c.candidate_block_sizes},
          {"row_starts", c.row_starts}, {"lens_1d", c.lens_1d},  {"lens_2d", c.lens_2d},
          {"rising_2d_lens", c.rising_2d_lens}};
}

}  // namespace dsa::fuzz
