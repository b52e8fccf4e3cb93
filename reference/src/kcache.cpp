// The paged K cache: geometry, the quantizer that fills it, the readers that
// gather a request's tokens through its page table (see kcache.hpp).
#include "dsa/kcache.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "dsa/error.hpp"

namespace dsa {
namespace {

static_assert(std::endian::native == std::endian::little, "the cache's fp32 scales are little-endian bytes");

// The gfx942 preshuffle tile: 16 tokens x 16 bytes, tiles of one token group
// laid out along D (SPEC 3).
constexpr int32_t kTileTokens = 16;
constexpr int32_t kTileBytes = 16;

std::string str(int64_t v) { return std::to_string(v); }

void check_page_slot(const PagedKCache& cache, int32_t page, int32_t slot) {
  if (page < 0 || page >= cache.num_pages) {
    throw InvalidInput("page", "page " + str(page) + " is outside [0, " + str(cache.num_pages) + ")");
  }
  if (slot < 0 || slot >= cache.block_size) {
    throw InvalidInput("slot", "slot " + str(slot) + " is outside [0, " + str(cache.block_size) + ")");
  }
}

// Copies `count` tokens starting at `slot` of one page into dense rows.
void copy_run(const PagedKCache& cache, const uint8_t* page, int32_t slot, int32_t count, uint8_t* codes,
              float* scales, uint8_t* block_scales) {
  const size_t row = cache.value_bytes_per_token();
  const int32_t D = cache.head_dim;
  switch (cache.layout) {
    case CacheLayout::block_flat:
      std::memcpy(codes, page + size_t(slot) * row, size_t(count) * row);
      std::memcpy(scales, page + cache.scale_offset(slot), size_t(count) * sizeof(float));
      return;
    case CacheLayout::preshuffle:
      for (int32_t t = slot; t < slot + count; ++t) {
        const uint8_t* token = page + size_t(t / kTileTokens) * kTileTokens * D + size_t(t % kTileTokens) * kTileBytes;
        uint8_t* out = codes + size_t(t - slot) * D;
        for (int32_t d = 0; d < D; d += kTileBytes) {
          std::memcpy(out + d, token + size_t(d / kTileBytes) * kTileTokens * kTileBytes, kTileBytes);
        }
      }
      std::memcpy(scales, page + cache.scale_offset(slot), size_t(count) * sizeof(float));
      return;
    case CacheLayout::mxfp4: {
      std::memcpy(codes, page + size_t(slot) * row, size_t(count) * row);
      const int32_t per_token = D / 32;
      for (int32_t t = 0; t < count; ++t) {
        std::memcpy(block_scales + size_t(t) * per_token, page + cache.scale_offset(slot + t), size_t(per_token));
      }
      return;
    }
  }
}

}  // namespace

std::string_view to_string(CacheLayout l) {
  switch (l) {
    case CacheLayout::block_flat: return "block_flat";
    case CacheLayout::preshuffle: return "preshuffle";
    case CacheLayout::mxfp4: return "mxfp4";
  }
  return "?";
}

CacheLayout parse_cache_layout(std::string_view name) {
  if (name == "block_flat") return CacheLayout::block_flat;
  if (name == "preshuffle") return CacheLayout::preshuffle;
  if (name == "mxfp4") return CacheLayout::mxfp4;
  throw InvalidInput("layout", "unknown cache layout '" + excerpt(name) +
                                   "' (expected block_flat, preshuffle or mxfp4)");
}

std::string_view to_string(ElementFormat e) {
  switch (e) {
    case ElementFormat::e4m3fn: return "e4m3fn";
    case ElementFormat::e4m3fnuz: return "e4m3fnuz";
    case ElementFormat::mxfp4: return "mxfp4";
  }
  return "?";
}

ElementFormat parse_element_format(std::string_view name) {
  if (name == "e4m3fn") return ElementFormat::e4m3fn;
  if (name == "e4m3fnuz") return ElementFormat::e4m3fnuz;
  if (name == "mxfp4") return ElementFormat::mxfp4;
  throw InvalidInput("fp8", "unknown element format '" + excerpt(name) + "' (expected e4m3fn, e4m3fnuz or mxfp4)");
}

Fp8Format fp8_of(ElementFormat e) {
  if (e == ElementFormat::e4m3fn) return Fp8Format::e4m3fn;
  if (e == ElementFormat::e4m3fnuz) return Fp8Format::e4m3fnuz;
  throw InvalidInput("fp8", "mxfp4 elements are not an fp8 format");
}

size_t PagedKCache::value_bytes_per_token() const {
  return layout == CacheLayout::mxfp4 ? size_t(head_dim) / 2 : size_t(head_dim);
}

size_t PagedKCache::page_bytes() const { return size_t(block_size) * (value_bytes_per_token() + 4); }

size_t PagedKCache::value_offset(int32_t slot, int32_t d) const {
  switch (layout) {
    case CacheLayout::block_flat: return size_t(slot) * head_dim + d;
    case CacheLayout::preshuffle:
      return size_t(slot / kTileTokens) * kTileTokens * head_dim + size_t(d / kTileBytes) * kTileTokens * kTileBytes +
             size_t(slot % kTileTokens) * kTileBytes + d % kTileBytes;
    case CacheLayout::mxfp4: return size_t(slot) * (head_dim / 2) + d / 2;
  }
  return 0;
}

size_t PagedKCache::scale_offset(int32_t slot) const {
  return size_t(block_size) * value_bytes_per_token() + size_t(slot) * 4;
}

void PagedKCache::validate() const {
  if (num_pages < 0) throw InvalidInput("num_pages", "negative page count " + str(num_pages));
  if (block_size <= 0) throw InvalidInput("block_size", "block_size must be positive, got " + str(block_size));
  if (head_dim <= 0) throw InvalidInput("head_dim", "head_dim must be positive, got " + str(head_dim));
  if ((layout == CacheLayout::mxfp4) != (element == ElementFormat::mxfp4)) {
    throw InvalidInput("layout", "layout " + std::string(to_string(layout)) + " cannot hold " +
                                     std::string(to_string(element)) + " elements (mxfp4 goes with mxfp4 only)");
  }
  if (layout == CacheLayout::preshuffle) {
    if (block_size % kTileTokens != 0) {
      throw InvalidInput("block_size", "preshuffle needs a multiple of 16 tokens per page, got " + str(block_size));
    }
    if (head_dim != 128) throw InvalidInput("head_dim", "preshuffle needs head_dim 128, got " + str(head_dim));
  }
  if (layout == CacheLayout::mxfp4 && head_dim != 64 && head_dim != 128) {
    throw InvalidInput("head_dim", "mxfp4 needs head_dim 64 or 128, got " + str(head_dim));
  }
  if (bytes.size() != size_t(num_pages) * page_bytes()) {
    throw InvalidInput("kv_cache", "holds " + str(int64_t(bytes.size())) + " bytes, its geometry needs " +
                                       str(int64_t(size_t(num_pages) * page_bytes())));
  }
}

PagedKCache make_kcache(CacheLayout layout, ElementFormat element, int32_t num_pages, int32_t block_size,
                        int32_t head_dim) {
  PagedKCache cache;
  cache.layout = layout;
  cache.element = element;
  cache.num_pages = num_pages;
  cache.block_size = block_size;
  cache.head_dim = head_dim;
  if (num_pages >= 0 && block_size > 0 && head_dim > 0) cache.bytes.assign(size_t(num_pages) * cache.page_bytes(), 0);
  cache.validate();
  return cache;
}

GatheredK gather_tokens(const PagedKCache& cache, std::span<const int32_t> page_table_row, int64_t begin,
                        int64_t end) {
  if (begin < 0) throw InvalidInput("begin", "negative first token " + str(begin));
  if (end < begin) throw InvalidInput("end", "token range [" + str(begin) + ", " + str(end) + ") is reversed");
  const int64_t bs = cache.block_size;
  if (end > begin && (end - 1) / bs >= int64_t(page_table_row.size())) {
    throw InvalidInput("block_table", "tokens up to " + str(end) + " need " + str((end - 1) / bs + 1) +
                                          " pages, the row has " + str(int64_t(page_table_row.size())));
  }
  GatheredK out;
  out.element = cache.element;
  out.num_tokens = end - begin;
  out.head_dim = cache.head_dim;
  const size_t row = cache.value_bytes_per_token();
  out.codes.resize(size_t(out.num_tokens) * row);
  if (cache.layout == CacheLayout::mxfp4) {
    out.block_scales.resize(size_t(out.num_tokens) * (cache.head_dim / 32));
  } else {
    out.scales.resize(size_t(out.num_tokens));
  }
  const size_t page_bytes = cache.page_bytes();
  for (int64_t n = begin; n < end;) {
    const int64_t logical_page = n / bs;
    const int32_t page = page_table_row[size_t(logical_page)];
    if (page < 0 || page >= cache.num_pages) {
      throw InvalidInput("block_table", "page id " + str(page) + " at position " + str(logical_page) +
                                            " is outside the cache [0, " + str(cache.num_pages) + ")");
    }
    const int32_t slot = int32_t(n % bs);
    const int32_t count = int32_t(std::min<int64_t>(bs - slot, end - n));
    const size_t t = size_t(n - begin);
    copy_run(cache, cache.bytes.data() + size_t(page) * page_bytes, slot, count, out.codes.data() + t * row,
             out.scales.empty() ? nullptr : out.scales.data() + t,
             out.block_scales.empty() ? nullptr : out.block_scales.data() + t * (cache.head_dim / 32));
    n += count;
  }
  return out;
}

void quantize_token_into_cache(PagedKCache& cache, int32_t page, int32_t slot, std::span<const float> k,
                               QuantizeOptions options) {
  check_page_slot(cache, page, slot);
  const int32_t D = cache.head_dim;
  if (int64_t(k.size()) != D) throw InvalidInput("k", "token has " + str(int64_t(k.size())) + " values, D is " + str(D));
  float amax = 0.0f;
  for (int32_t d = 0; d < D; ++d) {
    if (!std::isfinite(k[d])) throw InvalidInput("k", "non-finite value " + std::to_string(k[d]) + " at d = " + str(d));
    amax = std::max(amax, std::fabs(k[d]));
  }
  uint8_t* base = cache.bytes.data() + size_t(page) * cache.page_bytes();
  if (cache.layout == CacheLayout::mxfp4) {
    uint8_t scale_bytes[4] = {0, 0, 0, 0};
    quantize_mxfp4(k, std::span<uint8_t>(base + cache.value_offset(slot, 0), size_t(D) / 2),
                   std::span<uint8_t>(scale_bytes, size_t(D) / 32));
    std::memcpy(base + cache.scale_offset(slot), scale_bytes, 4);
    return;
  }
  const Fp8Format fp8 = fp8_of(cache.element);
  const float divisor = fp8 == Fp8Format::e4m3fn ? 448.0f : 224.0f;
  float scale = std::max(amax, 1e-4f) / divisor;
  if (options.ue8m0_scale) scale = ue8m0_to_float(float_to_ue8m0_ceil(scale));
  for (int32_t d = 0; d < D; ++d) base[cache.value_offset(slot, d)] = float_to_fp8(fp8, k[d] / scale, Overflow::saturate);
  std::memcpy(base + cache.scale_offset(slot), &scale, sizeof(float));
}

float dequantize_cache_element(const PagedKCache& cache, int32_t page, int32_t slot, int32_t d) {
  check_page_slot(cache, page, slot);
  if (d < 0 || d >= cache.head_dim) throw InvalidInput("d", "element " + str(d) + " is outside [0, " + str(cache.head_dim) + ")");
  const uint8_t* base = cache.bytes.data() + size_t(page) * cache.page_bytes();
  const uint8_t code = base[cache.value_offset(slot, d)];
  if (cache.layout == CacheLayout::mxfp4) {
    const uint8_t scale = base[cache.scale_offset(slot) + size_t(d / 32)];
    return mxfp4_element(std::span<const uint8_t>(&code, 1), std::span<const uint8_t>(&scale, 1), d % 2);
  }
  float scale = 0.0f;
  std::memcpy(&scale, base + cache.scale_offset(slot), sizeof(float));
  return fp8_to_float(fp8_of(cache.element), code) * scale;
}

PagedKCache relayout(const PagedKCache& cache, CacheLayout target) {
  cache.validate();
  if (cache.layout == CacheLayout::mxfp4 || target == CacheLayout::mxfp4) {
    throw InvalidInput("layout", "relayout converts block_flat <-> preshuffle only, not " +
                                     std::string(to_string(cache.layout)) + " -> " + std::string(to_string(target)));
  }
  if (target == cache.layout) return cache;
  PagedKCache out = make_kcache(target, cache.element, cache.num_pages, cache.block_size, cache.head_dim);
  const size_t page_bytes = cache.page_bytes();
  const size_t values = size_t(cache.block_size) * cache.head_dim;
  for (int32_t p = 0; p < cache.num_pages; ++p) {
    const uint8_t* src = cache.bytes.data() + size_t(p) * page_bytes;
    uint8_t* dst = out.bytes.data() + size_t(p) * page_bytes;
    for (int32_t t = 0; t < cache.block_size; ++t) {
      for (int32_t d = 0; d < cache.head_dim; d += kTileBytes) {
        std::memcpy(dst + out.value_offset(t, d), src + cache.value_offset(t, d), kTileBytes);
      }
    }
    std::memcpy(dst + values, src + values, page_bytes - values);
  }
  return out;
}

}  // namespace dsa
