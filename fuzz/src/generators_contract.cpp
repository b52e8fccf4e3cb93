// Cases inside a contract (generators.hpp, within / fitted): what the polish
// may try, and the properties' probes moved inside it.
#include <algorithm>

#include "dsa/fuzz/generators.hpp"

namespace dsa::fuzz {
namespace {

template <class T>
bool allows(const std::vector<T>& list, const T& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

template <class T>
bool rising(const std::vector<T>& lens) {
  return std::is_sorted(lens.begin(), lens.end());
}

bool next_n_inside(const Contract& c, int32_t next_n) { return next_n >= c.min_next_n && next_n <= c.max_next_n; }

bool within_case(const Contract& k, const TopkCase& c) {
  if (!allows(k.k_values, c.k)) return false;
  if (!k.row_starts)
    for (const auto& r : c.rows)
      if (r.start > 0) return false;
  return true;
}

bool within_case(const Contract& k, const CandidateCase& c) {
  if (!allows(k.k_values, c.k) || !next_n_inside(k, c.next_n)) return false;
  if (!allows(k.candidate_block_sizes, c.block_size)) return false;
  if (c.lens_2d ? !k.lens_2d : !k.lens_1d) return false;
  if (c.lens_2d && k.rising_2d_lens)
    for (const auto& q : c.requests)
      if (!rising(q.row_lens)) return false;
  return true;
}

bool within_case(const Contract& k, const DecodeCase& c) {
  if (!next_n_inside(k, c.next_n) || (c.lens_2d ? !k.lens_2d : !k.lens_1d) || !allows(k.k_values, c.topk)) return false;
  if (!allows(k.cache_layouts, c.layout) || !allows(k.page_sizes, c.block_size)) return false;
  if (!allows(k.heads, c.heads) || !allows(k.head_dims, c.head_dim)) return false;
  if (!allows(k.candidate_block_sizes, c.candidate_block_size)) return false;
  if (!k.profile.empty() && c.profile != k.profile) return false;
  if (c.lens_2d && k.rising_2d_lens)
    for (const auto& q : c.requests)
      if (!rising(q.row_lens)) return false;
  return true;
}

bool within_case(const Contract& k, const PrefillCase& c) {
  if (!allows(k.heads, c.heads) || !allows(k.head_dims, c.head_dim)) return false;
  if (!allows(k.candidate_block_sizes, c.candidate_block_size)) return false;
  if (!k.profile.empty() && c.profile != k.profile) return false;
  if (!k.row_starts)
    for (const auto& r : c.rows)
      if (r.ks > 0) return false;
  return true;
}

template <class T>
T first_or(const std::vector<T>& list, T value) {
  return allows(list, value) ? value : list.front();
}

void fit_case(const Contract& k, TopkCase& c) {
  c.k = first_or(k.k_values, c.k);
  if (!k.row_starts)
    for (auto& r : c.rows) r.start = 0;
}

void fit_case(const Contract& k, CandidateCase& c) {
  c.k = first_or(k.k_values, c.k);
  c.block_size = first_or(k.candidate_block_sizes, c.block_size);
  if (!next_n_inside(k, c.next_n)) c.next_n = std::max(k.min_next_n, 1);
  if (c.lens_2d ? !k.lens_2d : !k.lens_1d) c.lens_2d = !c.lens_2d;
  for (auto& q : c.requests) {
    if (c.lens_2d) q.row_lens.resize(size_t(c.next_n), q.len);
    if (k.rising_2d_lens) std::sort(q.row_lens.begin(), q.row_lens.end());
  }
}

void fit_case(const Contract& k, DecodeCase& c) {
  if (!k.profile.empty()) c.profile = k.profile;
  if (!allows(k.cache_layouts, c.layout)) c.layout = k.cache_layouts.front();
  // The layout fixes the element (and preshuffle D = 128 and pages of a multiple of 16).
  if (c.layout == CacheLayout::mxfp4) c.element = ElementFormat::mxfp4;
  if (c.layout == CacheLayout::preshuffle) c.element = ElementFormat::e4m3fnuz, c.head_dim = 128, c.block_size = 16;
  if (c.layout == CacheLayout::block_flat && c.element == ElementFormat::mxfp4) c.element = ElementFormat::e4m3fn;
  if (c.layout == CacheLayout::block_flat && !find_profile(c.profile).accepts(c.element))
    c.element = c.element == ElementFormat::e4m3fn ? ElementFormat::e4m3fnuz : ElementFormat::e4m3fn;
  c.block_size = first_or(k.page_sizes, c.block_size);
  c.heads = first_or(k.heads, c.heads);
  c.head_dim = first_or(k.head_dims, c.head_dim);
  c.topk = first_or(k.k_values, c.topk);
  c.candidate_block_size = first_or(k.candidate_block_sizes, c.candidate_block_size);
  if (!next_n_inside(k, c.next_n)) c.next_n = std::max(k.min_next_n, c.padded ? 2 : 1);
  if (c.padded && !k.lens_1d) c.padded = false;
  if (c.lens_2d ? !k.lens_2d : !k.lens_1d) c.lens_2d = !c.lens_2d;
  for (auto& q : c.requests) {
    if (c.lens_2d) q.row_lens.resize(size_t(c.next_n), q.tokens / std::max(c.compress_ratio, 1));
    if (k.rising_2d_lens) std::sort(q.row_lens.begin(), q.row_lens.end());
    if (c.padded) q.decode_len = std::clamp(q.decode_len, 1, c.next_n);
  }
}

void fit_case(const Contract& k, PrefillCase& c) {
  if (!k.profile.empty()) c.profile = k.profile;
  if (!find_profile(c.profile).accepts(c.element))
    c.element = c.element == ElementFormat::e4m3fn ? ElementFormat::e4m3fnuz : ElementFormat::e4m3fn;
  c.heads = first_or(k.heads, c.heads);
  c.head_dim = first_or(k.head_dims, c.head_dim);
  c.candidate_block_size = first_or(k.candidate_block_sizes, c.candidate_block_size);
  if (!k.row_starts)
    for (auto& r : c.rows) r.ks = 0;
  int64_t num_k = c.num_k;
  for (const auto& r : c.rows) num_k = std::max(num_k, r.ks + r.len);
  c.num_k = num_k;
}

}  // namespace

bool within(const Contract& contract, const FuzzCase& c) {
  return std::visit([&](const auto& x) { return within_case(contract, x); }, c);
}

FuzzCase fitted(const Contract& contract, FuzzCase c) {
  std::visit([&](auto& x) { fit_case(contract, x); }, c);
  return c;
}

}  // namespace dsa::fuzz
