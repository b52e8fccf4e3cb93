// Whole decode steps and prefills drawn from their descriptions: q, the paged
// K cache (block-flat, preshuffle, MXFP4), scales, weights and page tables.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "case_random.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/fuzz/cases.hpp"

namespace dsa::fuzz {
namespace {

using detail::bell;
using detail::stream;

double draw_real(CodeKind kind, Rng& rng) {
  switch (kind) {
    case CodeKind::few_levels: return 0.5 * double(rng.uniform_int(-1, 2));
    case CodeKind::constant: return 0.75;
    default: return bell(rng);
  }
}

bool quantized(CodeKind k) {
  return k == CodeKind::quantized_normal || k == CodeKind::few_levels || k == CodeKind::constant;
}

uint8_t raw_fp8_code(CodeKind kind, Fp8Format f, Rng& rng) {
  switch (kind) {
    case CodeKind::extreme_codes: {
      const uint8_t pool[] = {float_to_fp8(f, fp8_max(f)), float_to_fp8(f, -fp8_max(f)), 0x01, 0x81, 0x00, 0x08};
      return pool[rng.uniform_int(0, 5)];
    }
    case CodeKind::subnormal_codes: return uint8_t(rng.uniform_int(1, 7) | (rng.bernoulli(0.5) ? 0x80 : 0));
    default: {
      const uint8_t code = uint8_t(rng.next_u32());
      return fp8_is_nan(f, code) ? uint8_t(0) : code;
    }
  }
}

uint8_t raw_e2m1(CodeKind kind, Rng& rng) {
  switch (kind) {
    case CodeKind::extreme_codes: {
      const uint8_t pool[] = {0x7, 0xF, 0x1, 0x9, 0x0, 0x8};
      return pool[rng.uniform_int(0, 5)];
    }
    case CodeKind::subnormal_codes: return rng.bernoulli(0.5) ? 0x1 : 0x9;
    default: return uint8_t(rng.uniform_int(0, 15));
  }
}

ScaleKind resolve(ScaleKind kind, Rng& rng) {
  return kind == ScaleKind::mixed ? ScaleKind(rng.uniform_int(0, int64_t(ScaleKind::zero))) : kind;
}

// A per-entry fp32 K scale of the given kind (for raw codes, or overriding the quantizer's).
float draw_scale(ScaleKind kind, Rng& rng) {
  switch (resolve(kind, rng)) {
    case ScaleKind::ue8m0: return std::ldexp(1.0f, int(rng.uniform_int(-20, 4)));
    case ScaleKind::tiny: {
      const float pool[] = {1e-40f, std::numeric_limits<float>::denorm_min(), 1e-30f,
                            std::numeric_limits<float>::min()};
      return pool[rng.uniform_int(0, 3)];
    }
    case ScaleKind::huge: {
      const float pool[] = {1e30f, 1e36f, std::numeric_limits<float>::max(), 3e38f};
      return pool[rng.uniform_int(0, 3)];
    }
    case ScaleKind::zero:
      if (rng.bernoulli(0.5)) return 0.0f;
      [[fallthrough]];
    default: return std::ldexp(float(1.0 + rng.uniform01()), int(rng.uniform_int(-8, 0)));
  }
}

// A ue8m0 block scale byte of an MXFP4 vector (never 0xff, the NaN).
uint8_t draw_block_scale(ScaleKind kind, Rng& rng) {
  switch (resolve(kind, rng)) {
    case ScaleKind::tiny: return uint8_t(rng.uniform_int(0, 2));
    case ScaleKind::huge: return uint8_t(rng.uniform_int(250, 254));
    case ScaleKind::zero: return 0;
    default: return uint8_t(127 + rng.uniform_int(-4, 2));
  }
}

float draw_weight(WeightKind kind, int32_t heads, Rng& rng) {
  const double gain = 1.0 / std::sqrt(double(heads));
  switch (kind) {
    case WeightKind::extreme: {
      const float pool[] = {1e30f, -1e30f, 1e-30f, 0.0f, 65504.0f, -1e38f};
      return pool[rng.uniform_int(0, 5)];
    }
    case WeightKind::zero: return 0.0f;
    case WeightKind::positive: return float(std::fabs(bell(rng)) * gain);
    default: return float(bell(rng) * gain);
  }
}

// One vector of D elements of q (fp8 codes, or packed e2m1 with D/32 scales).
void fill_query_vector(ElementFormat e, CodeKind kind, ScaleKind scales, int32_t D, Rng& rng, uint8_t* codes,
                       uint8_t* block_scales) {
  if (is_fp8(e)) {
    const Fp8Format f = fp8_of(e);
    const float gain = fp8_max(f) / 8.0f;
    for (int32_t d = 0; d < D; ++d)
      codes[d] = quantized(kind) ? float_to_fp8(f, float(draw_real(kind, rng)) * gain) : raw_fp8_code(kind, f, rng);
    return;
  }
  if (quantized(kind)) {
    std::vector<float> x(static_cast<size_t>(D));
    for (auto& v : x) v = float(draw_real(kind, rng));
    quantize_mxfp4(x, std::span(codes, size_t(D / 2)), std::span(block_scales, size_t(D / 32)));
    return;
  }
  for (int32_t d = 0; d < D; d += 2) codes[d / 2] = e2m1_pack(raw_e2m1(kind, rng), raw_e2m1(kind, rng));
  for (int32_t i = 0; i < D / 32; ++i) block_scales[i] = draw_block_scale(scales, rng);
}

// One token of the K cache at (page, slot).
void fill_token(PagedKCache& cache, int32_t page, int32_t slot, CodeKind kind, ScaleKind scales, Rng& values,
                Rng& scale_rng) {
  const int32_t D = cache.head_dim;
  uint8_t* base = cache.bytes.data() + size_t(page) * cache.page_bytes();
  if (quantized(kind)) {
    std::vector<float> x(static_cast<size_t>(D));
    for (auto& v : x) v = float(draw_real(kind, values));
    quantize_token_into_cache(cache, page, slot, x, QuantizeOptions{scales == ScaleKind::ue8m0});
    if (is_fp8(cache.element) && scales != ScaleKind::quantizer && scales != ScaleKind::ue8m0) {
      const float s = draw_scale(scales, scale_rng);
      std::memcpy(base + cache.scale_offset(slot), &s, sizeof s);
    }
    return;
  }
  if (is_fp8(cache.element)) {
    const Fp8Format f = fp8_of(cache.element);
    for (int32_t d = 0; d < D; ++d) base[cache.value_offset(slot, d)] = raw_fp8_code(kind, f, values);
    const float s = draw_scale(scales, scale_rng);
    std::memcpy(base + cache.scale_offset(slot), &s, sizeof s);
    return;
  }
  for (int32_t d = 0; d < D; d += 2) base[cache.value_offset(slot, d)] = e2m1_pack(raw_e2m1(kind, values), raw_e2m1(kind, values));
  uint8_t record[4] = {0, 0, 0, 0};
  for (int32_t i = 0; i < D / 32; ++i) record[i] = draw_block_scale(scales, scale_rng);
  std::memcpy(base + cache.scale_offset(slot), record, sizeof record);
}

int64_t request_entries(const DecodeCase& c, const DecodeRequest& q) {
  if (!c.lens_2d) return q.tokens / c.compress_ratio;
  int64_t widest = 0;
  for (int32_t l : q.row_lens) widest = std::max<int64_t>(widest, l);
  return widest;
}

}  // namespace

const Profile& profile_of(const DecodeCase& c) { return find_profile(c.profile); }
const Profile& profile_of(const PrefillCase& c) { return find_profile(c.profile); }

DecodeProblem make_problem(const DecodeCase& c) {
  const int32_t B = int32_t(c.requests.size());
  if (B < 1) throw InvalidInput("requests", "a decode case needs at least one request");
  const Profile& profile = profile_of(c);
  DecodeProblem p;
  p.batch = B;
  p.next_n = c.next_n;
  p.heads = c.heads;
  p.head_dim = c.head_dim;
  p.element = c.element;
  p.compress_ratio = c.lens_2d ? 1 : c.compress_ratio;
  p.seq_lens_2d = c.lens_2d;
  for (const auto& q : c.requests) {
    if (c.lens_2d) {
      if (int32_t(q.row_lens.size()) != c.next_n) throw InvalidInput("row_lens", "2-D lengths need next_n per request");
      p.seq_lens.insert(p.seq_lens.end(), q.row_lens.begin(), q.row_lens.end());
    } else {
      p.seq_lens.push_back(q.tokens);
    }
    if (c.padded) p.decode_lens.push_back(q.decode_len);
  }

  // Pages: request b's logical page i, request 0's when shared, then physical ids.
  const int32_t bs = c.block_size;
  std::vector<int64_t> pages(static_cast<size_t>(B));
  int64_t max_pages = 0;
  for (int32_t b = 0; b < B; ++b) {
    pages[size_t(b)] = (request_entries(c, c.requests[size_t(b)]) + bs - 1) / bs;
    max_pages = std::max(max_pages, pages[size_t(b)]);
  }
  std::vector<std::vector<int64_t>> logical(static_cast<size_t>(B));  // index into `owners`
  std::vector<std::pair<int32_t, int64_t>> owners;         // (request, page) that fills each allocated page
  for (int32_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < pages[size_t(b)]; ++i) {
      // Only request 0's full pages are shared: every slot of them holds a written entry.
      const int64_t full_pages_0 = request_entries(c, c.requests[0]) / bs;
      if (c.page_table == PageTableKind::shared && b > 0 && i < full_pages_0) {
        logical[size_t(b)].push_back(logical[0][size_t(i)]);
        continue;
      }
      logical[size_t(b)].push_back(int64_t(owners.size()));
      owners.emplace_back(b, i);
    }
  }
  const int64_t used = int64_t(owners.size());
  const int64_t spare = std::max<int64_t>(c.spare_pages, used == 0 ? 1 : 0);
  std::vector<int32_t> physical(static_cast<size_t>(used));
  int64_t num_pages = used + spare;
  if (c.page_table == PageTableKind::non_contiguous) {
    num_pages = 2 * used + 1 + spare;
    for (int64_t i = 0; i < used; ++i) physical[size_t(i)] = int32_t(2 * i + 1);
  } else {
    std::vector<int32_t> order(static_cast<size_t>(num_pages));
    for (int64_t i = 0; i < num_pages; ++i) order[size_t(i)] = int32_t(i);
    if (c.page_table != PageTableKind::contiguous) {
      Rng rng = stream({c.seed, 0, detail::kPermutation});
      for (int64_t i = num_pages - 1; i > 0; --i) std::swap(order[size_t(i)], order[size_t(rng.uniform_int(0, i))]);
    }
    for (int64_t i = 0; i < used; ++i) physical[size_t(i)] = order[size_t(i)];
  }

  p.cache = make_kcache(c.layout, c.element, int32_t(num_pages), bs, c.head_dim);
  {
    Rng junk = stream({c.seed, 0, detail::kJunk});
    for (size_t i = 0; i < p.cache.bytes.size(); i += 8) {
      const uint64_t word = junk.next_u64();
      std::memcpy(p.cache.bytes.data() + i, &word, std::min<size_t>(8, p.cache.bytes.size() - i));
    }
  }
  for (int64_t a = 0; a < used; ++a) {
    const auto [b, i] = owners[size_t(a)];
    const DecodeRequest& q = c.requests[size_t(b)];
    const int64_t entries = request_entries(c, q);
    for (int32_t slot = 0; slot < bs && i * bs + slot < entries; ++slot) {
      const uint64_t n = uint64_t(i * bs + slot);
      Rng values = stream({c.seed, q.seed, detail::kKeys, n});
      Rng scales = stream({c.seed, q.seed, detail::kScales, n});
      fill_token(p.cache, physical[size_t(a)], slot, c.k_codes, c.k_scales, values, scales);
    }
  }

  p.max_pages = int32_t(std::max<int64_t>(1, max_pages + c.extra_table_pages));
  p.block_table.assign(size_t(B) * size_t(p.max_pages), 0);
  Rng table_junk = stream({c.seed, 1, detail::kJunk});
  for (int32_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < p.max_pages; ++i)
      p.block_table[size_t(b) * size_t(p.max_pages) + size_t(i)] =
          i < pages[size_t(b)] ? physical[size_t(logical[size_t(b)][size_t(i)])]
                               : int32_t(table_junk.uniform_int(0, num_pages - 1));

  // q and weights per row; padded rows carry vLLM's pad and zero weights.
  const int32_t H = c.heads, D = c.head_dim;
  const size_t q_row = size_t(H) * size_t(is_fp8(c.element) ? D : D / 2);
  const size_t s_row = is_fp8(c.element) ? 0 : size_t(H) * size_t(D / 32);
  p.q.assign(size_t(p.rows()) * q_row, 0);
  p.q_block_scales.assign(size_t(p.rows()) * s_row, 0);
  p.weights.assign(size_t(p.rows()) * size_t(H), 0.0f);
  for (int64_t r = 0; r < p.rows(); ++r) {
    const DecodeRequest& q = c.requests[size_t(r / c.next_n)];
    const uint64_t j = uint64_t(r % c.next_n);
    if (p.is_padded_row(r)) {
      std::fill_n(p.q.begin() + r * int64_t(q_row), q_row, is_fp8(c.element) ? fp8_pad_code(fp8_of(c.element)) : 0);
      continue;
    }
    Rng qr = stream({c.seed, q.seed, detail::kQuery, j});
    for (int32_t h = 0; h < H; ++h)
      fill_query_vector(c.element, c.q_codes, c.k_scales, D, qr,
                        p.q.data() + size_t(r) * q_row + size_t(h) * (q_row / size_t(H)),
                        s_row ? p.q_block_scales.data() + size_t(r) * s_row + size_t(h) * size_t(D / 32) : nullptr);
    Rng wr = stream({c.seed, q.seed, detail::kWeights, j});
    for (int32_t h = 0; h < H; ++h) {
      float w = draw_weight(c.weights, H, wr);
      if (profile.weights == Precision::bf16) w = round_to_bf16(w);
      p.weights[size_t(r) * size_t(H) + size_t(h)] = w;
    }
  }

  int64_t widest = 0;
  p.logits_width = std::numeric_limits<int32_t>::max();  // visible_len reads no width
  for (int64_t r = 0; r < p.rows(); ++r) widest = std::max({widest, visible_len(p, r), candidate_row_end(p, r)});
  p.logits_width = std::max<int64_t>(1, widest + c.width_pad);
  p.validate();
  profile.require(p.element);
  return p;
}

CandidateBlocks make_candidates(const DecodeCase& c, const DecodeProblem& problem) {
  return detail::draw_candidates(
      problem.rows(), c.candidate_slots, c.candidate_block_size, problem.logits_width,
      [&](int64_t r) {
        return stream({c.seed, c.requests[size_t(r / c.next_n)].seed, detail::kCandidates, uint64_t(r % c.next_n)});
      },
      [&](int64_t r) { return candidate_row_end(problem, r); });
}

CandidateBlocks make_candidates(const PrefillCase& c, const PrefillProblem& problem) {
  return detail::draw_candidates(
      problem.rows, c.candidate_slots, c.candidate_block_size, problem.num_k,
      [&](int64_t r) { return stream({c.seed, c.rows[size_t(r)].seed, detail::kCandidates, 0}); },
      [&](int64_t r) { return int64_t(problem.ke[size_t(r)]) - problem.ks[size_t(r)]; });
}

PrefillProblem make_problem(const PrefillCase& c) {
  const Profile& profile = profile_of(c);
  PrefillProblem p;
  p.rows = int32_t(c.rows.size());
  p.heads = c.heads;
  p.head_dim = c.head_dim;
  p.element = c.element;
  p.num_k = c.num_k;
  const Fp8Format f = fp8_of(c.element);
  const int32_t H = c.heads, D = c.head_dim;
  p.q.resize(size_t(p.rows) * size_t(H) * size_t(D));
  p.weights.resize(size_t(p.rows) * size_t(H));
  for (int32_t r = 0; r < p.rows; ++r) {
    const PrefillRow& row = c.rows[size_t(r)];
    Rng qr = stream({c.seed, row.seed, detail::kQuery});
    for (int32_t h = 0; h < H; ++h)
      fill_query_vector(c.element, c.q_codes, c.k_scales, D, qr, p.q.data() + (size_t(r) * H + size_t(h)) * size_t(D),
                        nullptr);
    Rng wr = stream({c.seed, row.seed, detail::kWeights});
    for (int32_t h = 0; h < H; ++h) {
      float w = draw_weight(c.weights, H, wr);
      if (profile.weights == Precision::bf16) w = round_to_bf16(w);
      p.weights[size_t(r) * size_t(H) + size_t(h)] = w;
    }
    p.ks.push_back(int32_t(row.ks));
    p.ke.push_back(int32_t(row.ks + row.len));
  }
  p.k.resize(size_t(c.num_k) * size_t(D));
  p.k_scales.resize(size_t(c.num_k));
  std::vector<float> x(static_cast<size_t>(D));
  for (int64_t n = 0; n < c.num_k; ++n) {
    Rng values = stream({c.seed, 0, detail::kKeys, uint64_t(n)});
    Rng scales = stream({c.seed, 0, detail::kScales, uint64_t(n)});
    uint8_t* codes = p.k.data() + size_t(n) * size_t(D);
    if (quantized(c.k_codes)) {
      float amax = 0;
      for (auto& v : x) amax = std::max(amax, std::fabs(v = float(draw_real(c.k_codes, values))));
      float scale = std::max(amax, 1e-4f) / (f == Fp8Format::e4m3fn ? 448.0f : 224.0f);
      if (c.k_scales == ScaleKind::ue8m0) scale = ue8m0_to_float(float_to_ue8m0_ceil(scale));
      for (int32_t d = 0; d < D; ++d) codes[d] = float_to_fp8(f, x[size_t(d)] / scale);
      p.k_scales[size_t(n)] =
          c.k_scales == ScaleKind::quantizer || c.k_scales == ScaleKind::ue8m0 ? scale : draw_scale(c.k_scales, scales);
    } else {
      for (int32_t d = 0; d < D; ++d) codes[d] = raw_fp8_code(c.k_codes, f, values);
      p.k_scales[size_t(n)] = draw_scale(c.k_scales, scales);
    }
  }
  p.validate();
  profile.require(p.element);
  return p;
}

}  // namespace dsa::fuzz
