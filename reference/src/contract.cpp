// The clauses of a Contract, each judged on a call's problem.
#include "dsa/contract.hpp"

#include <algorithm>

#include "dsa/error.hpp"
#include "dsa/profile.hpp"

namespace dsa {
namespace {

template <class T>
bool allows(const std::vector<T>& allowed, const T& value) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

std::string list(const std::vector<int32_t>& values) {
  std::string s;
  for (const int32_t v : values) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

std::string list(const std::vector<CacheLayout>& values) {
  std::string s;
  for (const CacheLayout v : values) s += (s.empty() ? "" : ", ") + std::string(to_string(v));
  return s;
}

std::string shape_refusal(const Contract& c, int32_t heads, int32_t head_dim) {
  if (!allows(c.heads, heads)) return "heads " + std::to_string(heads) + " (takes " + list(c.heads) + ")";
  if (!allows(c.head_dims, head_dim))
    return "head_dim " + std::to_string(head_dim) + " (takes " + list(c.head_dims) + ")";
  return {};
}

}  // namespace

bool Contract::claims_profile(const std::string& profile_name) const {
  if (profile.empty() || profile == profile_name) return true;
  const std::vector<std::string> known = profile_names();
  const auto registered = [&](const std::string& name) {
    return std::find(known.begin(), known.end(), name) != known.end();
  };
  return registered(profile) && registered(profile_name) &&
         same_arithmetic(find_profile(profile), find_profile(profile_name));
}

std::string Contract::refusal(const DecodeProblem& p) const {
  if (!allows(cache_layouts, p.cache.layout))
    return "cache layout " + std::string(to_string(p.cache.layout)) + " (takes " + list(cache_layouts) + ")";
  if (!allows(page_sizes, p.cache.block_size))
    return "page size " + std::to_string(p.cache.block_size) + " (takes " + list(page_sizes) + ")";
  if (p.next_n < min_next_n || p.next_n > max_next_n)
    return "next_n " + std::to_string(p.next_n) + " (takes " + std::to_string(min_next_n) + " to " +
           std::to_string(max_next_n) + ")";
  if (std::string s = shape_refusal(*this, p.heads, p.head_dim); !s.empty()) return s;
  if (!p.seq_lens_2d && !lens_1d) return "1-D seq_lens (takes 2-D lengths only)";
  if (p.seq_lens_2d && !lens_2d) return "2-D seq_lens (takes 1-D lengths only)";
  if (p.seq_lens_2d && rising_2d_lens)
    for (int64_t b = 0; b < p.batch; ++b)
      for (int32_t j = 1; j < p.next_n; ++j) {
        const size_t row = size_t(b * p.next_n + j);
        if (row < p.seq_lens.size() && p.seq_lens[row] < p.seq_lens[row - 1])
          return "2-D seq_lens that fall within request " + std::to_string(b) + " (row " + std::to_string(j) + " sees " +
                 std::to_string(p.seq_lens[row]) + " < " + std::to_string(p.seq_lens[row - 1]) +
                 "; takes lengths that rise)";
      }
  return {};
}

std::string Contract::refusal(const PrefillProblem& p) const {
  if (std::string s = shape_refusal(*this, p.heads, p.head_dim); !s.empty()) return s;
  if (!row_starts)
    for (size_t r = 0; r < p.ks.size(); ++r)
      if (p.ks[r] > 0) return "row " + std::to_string(r) + " starts at ks = " + std::to_string(p.ks[r]) + " (takes ks = 0)";
  return {};
}

std::string Contract::refusal_k(int32_t k) const {
  if (!allows(k_values, k)) return "k = " + std::to_string(k) + " (takes " + list(k_values) + ")";
  return {};
}

std::string Contract::refusal_candidate_block(int32_t block_size) const {
  if (!allows(candidate_block_sizes, block_size))
    return "candidate blocks of " + std::to_string(block_size) + " entries (takes " + list(candidate_block_sizes) + ")";
  return {};
}

std::string describe(const Contract& c) {
  std::vector<std::string> parts;
  std::string ops;
  for (const Op op : c.ops) ops += (ops.empty() ? "" : ", ") + std::string(to_string(op));
  parts.push_back("ops: " + (ops.empty() ? std::string("none") : ops));
  parts.push_back("profile: " + (c.profile.empty() ? std::string("any") : c.profile));
  if (!c.cache_layouts.empty()) parts.push_back("layouts: " + list(c.cache_layouts));
  if (!c.page_sizes.empty()) parts.push_back("page sizes: " + list(c.page_sizes));
  if (c.min_next_n > 1 || c.max_next_n < std::numeric_limits<int32_t>::max())
    parts.push_back("next_n: " + std::to_string(c.min_next_n) + " to " + std::to_string(c.max_next_n));
  if (!c.heads.empty()) parts.push_back("heads: " + list(c.heads));
  if (!c.head_dims.empty()) parts.push_back("head dims: " + list(c.head_dims));
  if (!c.k_values.empty()) parts.push_back("k: " + list(c.k_values));
  if (!c.candidate_block_sizes.empty()) parts.push_back("candidate blocks of: " + list(c.candidate_block_sizes));
  if (!c.row_starts) parts.push_back("ks = 0 only");
  if (!c.lens_1d) parts.push_back("2-D lengths only");
  if (!c.lens_2d) parts.push_back("1-D lengths only");
  if (c.rising_2d_lens) parts.push_back("2-D lengths rise within a request");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

namespace {

// The values both lists take (an empty list takes any); throws naming `clause` when they share none.
template <class T>
std::vector<T> common(const std::vector<T>& a, const std::vector<T>& b, const char* clause, const std::string& a_name,
                      const std::string& b_name) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  std::vector<T> out;
  for (const T& v : a)
    if (std::find(b.begin(), b.end(), v) != b.end()) out.push_back(v);
  if (out.empty())
    throw InvalidInput("contract", std::string("no case both ") + a_name + " and " + b_name + " take: no " + clause +
                                       " in common (" + a_name + " takes " + list(a) + ", " + b_name + " takes " +
                                       list(b) + ")");
  return out;
}

}  // namespace

Contract both(const Contract& a, const Contract& b, const std::string& a_name, const std::string& b_name) {
  Contract c;
  for (const Op op : a.ops)
    if (b.takes(op)) c.ops.insert(op);
  if (!a.profile.empty() && !b.profile.empty() && a.profile != b.profile)
    throw InvalidInput("contract", "no case both " + a_name + " and " + b_name + " take: " + a_name +
                                       " computes the arithmetic of profile " + a.profile + ", " + b_name + " that of " +
                                       b.profile);
  c.profile = a.profile.empty() ? b.profile : a.profile;
  c.cache_layouts = common(a.cache_layouts, b.cache_layouts, "cache layout", a_name, b_name);
  c.page_sizes = common(a.page_sizes, b.page_sizes, "page size", a_name, b_name);
  c.heads = common(a.heads, b.heads, "head count", a_name, b_name);
  c.head_dims = common(a.head_dims, b.head_dims, "head dim", a_name, b_name);
  c.k_values = common(a.k_values, b.k_values, "k", a_name, b_name);
  c.candidate_block_sizes = common(a.candidate_block_sizes, b.candidate_block_sizes, "candidate block size", a_name, b_name);
  c.min_next_n = std::max(a.min_next_n, b.min_next_n);
  c.max_next_n = std::min(a.max_next_n, b.max_next_n);
  if (c.min_next_n > c.max_next_n)
    throw InvalidInput("contract", "no case both " + a_name + " and " + b_name + " take: no next_n in common (" +
                                       std::to_string(a.min_next_n) + " to " + std::to_string(a.max_next_n) + ", " +
                                       std::to_string(b.min_next_n) + " to " + std::to_string(b.max_next_n) + ")");
  c.row_starts = a.row_starts && b.row_starts;
  c.lens_1d = a.lens_1d && b.lens_1d;
  c.lens_2d = a.lens_2d && b.lens_2d;
  if (!c.lens_1d && !c.lens_2d)
    throw InvalidInput("contract", "no case both " + a_name + " and " + b_name +
                                       " take: one takes only 1-D decode lengths, the other only 2-D");
  c.rising_2d_lens = a.rising_2d_lens || b.rising_2d_lens;
  return c;
}

}  // namespace dsa
