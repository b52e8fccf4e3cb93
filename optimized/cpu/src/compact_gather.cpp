#include "compact_gather.hpp"

#include <cstring>
#include <unordered_map>

namespace dsa::optimized::detail {
namespace {

// Where element d of slot t lies in a page, and its token's scale record
// (kcache.hpp: block_flat, the gfx942 preshuffle tiles of 16 x 16 bytes, mxfp4).
struct PageLayout {
  CacheLayout layout;
  int32_t page_size, head_dim;
  size_t value_bytes() const { return layout == CacheLayout::mxfp4 ? size_t(head_dim) / 2 : size_t(head_dim); }
  size_t value_at(int32_t t, int32_t d) const {
    if (layout == CacheLayout::preshuffle)
      return size_t(t / 16) * 16 * head_dim + size_t(d / 16) * 256 + (t % 16) * 16 + d % 16;
    return size_t(t) * value_bytes() + size_t(layout == CacheLayout::mxfp4 ? d / 2 : d);
  }
  size_t scale_at(int32_t t) const { return size_t(page_size) * value_bytes() + size_t(t) * 4; }
};

}  // namespace

GatheredColumns gather_columns(const DecodeProblem& problem, int64_t row, const std::vector<int64_t>& positions,
                               int32_t candidate_block_size, const CompactCandidatesDefects& defects) {
  const PagedKCache& cache = problem.cache;
  const PageLayout layout{cache.layout, cache.block_size, cache.head_dim};
  const size_t page_bytes = cache.page_bytes();
  const int32_t* table = problem.block_table.data() + size_t(row / problem.next_n) * problem.max_pages;

  // Stage every page the columns touch, once, in the order of first use.
  std::unordered_map<int64_t, size_t> staged_at;
  std::vector<uint8_t> staged;
  for (const int64_t n : positions) {
    const int64_t logical = n / cache.block_size;
    if (staged_at.count(logical)) continue;
    staged_at.emplace(logical, staged.size());
    const uint8_t* page = cache.bytes.data() + size_t(table[logical]) * page_bytes;
    staged.insert(staged.end(), page, page + page_bytes);
  }

  GatheredColumns g;
  g.count = int64_t(positions.size());
  const bool fp4 = cache.layout == CacheLayout::mxfp4;
  const int32_t D = cache.head_dim, value_bytes = int32_t(layout.value_bytes());
  g.codes.resize(size_t(g.count) * size_t(value_bytes));
  if (fp4) {
    g.block_scales.resize(size_t(g.count) * size_t(D / 32));
  } else {
    g.scales.resize(size_t(g.count));
  }
  for (int64_t i = 0; i < g.count; ++i) {
    const int64_t n = positions[size_t(i)];
    int32_t slot = int32_t(n % cache.block_size);
    if (defects.slot_modulo_candidate_block) slot = int32_t(n % candidate_block_size % cache.block_size);
    const uint8_t* page = staged.data() + staged_at.at(n / cache.block_size);
    uint8_t* codes = g.codes.data() + size_t(i) * size_t(value_bytes);
    // Element pairs share a byte in mxfp4: step over bytes, not elements.
    for (int32_t d = 0; d < D; d += fp4 ? 2 : 1) *codes++ = page[layout.value_at(slot, d)];
    const int32_t scale_slot = defects.scale_of_first_slot ? 0 : slot;
    if (fp4) {
      std::memcpy(g.block_scales.data() + size_t(i) * size_t(D / 32), page + layout.scale_at(scale_slot),
                  size_t(D / 32));
    } else {
      std::memcpy(&g.scales[size_t(i)], page + layout.scale_at(scale_slot), sizeof(float));
    }
  }
  return g;
}

}  // namespace dsa::optimized::detail
