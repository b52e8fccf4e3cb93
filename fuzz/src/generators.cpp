// RapidCheck generators of the top-k and candidate cases, and the lengths
// they draw (generator_draws.hpp has the building blocks). Choices are drawn
// with `pick` (an index that shrinks towards the first, simplest option)
// rather than gen::element, whose choices never shrink.
#include "dsa/fuzz/generators.hpp"

#include <algorithm>
#include <vector>

#include "generator_draws.hpp"

namespace dsa::fuzz {
namespace detail {

rc::Gen<LengthDraw> gen_length_draw() {
  using L = LengthDraw;
  auto fixed = [](L::Class cls) { return rc::gen::just(L{cls, 0}); };
  auto with = [](L::Class cls, rc::Gen<int64_t> value) {
    return rc::gen::map(std::move(value), [cls](int64_t v) { return L{cls, v}; });
  };
  auto draw = pick_gen<L>({
      {2, fixed(L::zero)},
      {2, fixed(L::one)},
      {3, fixed(L::k_minus_1)},
      {3, fixed(L::k)},
      {3, fixed(L::k_plus_1)},
      {2, with(L::pages, rc::gen::inRange<int64_t>(1, 5))},
      {2, with(L::pages_plus_1, rc::gen::inRange<int64_t>(1, 5))},
      {1, with(L::pages_minus_1, rc::gen::inRange<int64_t>(1, 5))},
      {5, with(L::around_k, rc::gen::inRange<int64_t>(0, 1001))},
      {2, with(L::landmark, pick<int64_t>({2048, 2049, 4096, 16384, 16385, 32768, 65536, 131072, 131073, 262144}))},
      {2, with(L::any, rc::gen::inRange<int64_t>(0, (1 << 20) + 1))},
  });
  // A landmark (2049, 16385, ...) shrinks on to any smaller exact length: the
  // bug it found may need far fewer columns.
  return rc::gen::shrink(std::move(draw), [](const L& d) {
    if (d.cls != L::landmark) return rc::Seq<L>();
    return rc::seq::map(rc::shrink::towards<int64_t>(d.value, 0), [](int64_t v) { return L{L::exact, v}; });
  });
}

}  // namespace detail

using namespace detail;

rc::Gen<int64_t> gen_length(int64_t k, int64_t page, int64_t cap) {
  return rc::gen::map(gen_length_draw(), [=](const LengthDraw& d) { return d.resolve(k, page, cap); });
}

rc::Gen<TopkCase> gen_topk_case(const GenLimits& limits) {
  struct RowDraw {
    LengthDraw len;
    ValueKind values;
    uint32_t seed;
    int64_t start;
  };
  auto row = rc::gen::build<RowDraw>(rc::gen::set(&RowDraw::len, gen_length_draw()),
                                     rc::gen::set(&RowDraw::values, gen_value_kind()),
                                     rc::gen::set(&RowDraw::seed, gen_seed()),
                                     rc::gen::set(&RowDraw::start, gen_start(limits.draw)));
  return polished<TopkCase>(rc::gen::exec([limits, row] {
    const std::vector<RowDraw> rows = *gen_list(row, limits.max_rows);
    TopkCase c;
    c.k = *gen_k(limits.draw);
    c.tail = *gen_tail();
    c.seed = *gen_seed();
    c.width_pad = *pick<int64_t>({0, 1, 7, 64, 300});
    for (const RowDraw& d : rows)
      c.rows.push_back({d.start, d.len.resolve(c.k, 2048, limits.logits_elements), d.values, d.seed});
    int64_t width = 0;
    for (const auto& r : c.rows) width = std::max(width, r.start + r.len);
    const int64_t elements = int64_t(c.rows.size()) * (width + c.width_pad);
    if (elements > limits.logits_elements) {
      const double f = double(limits.logits_elements) / double(elements);
      for (auto& r : c.rows) r.start = scaled(r.start, f), r.len = scaled(r.len, f);
    }
    return c;
  }), limits.draw);
}

rc::Gen<CandidateCase> gen_candidate_case(const GenLimits& limits) {
  static constexpr int kMaxNextN = 8;
  struct RequestDraw {
    bool against_capacity;  // lengths around S * C (the columns the candidates hold) rather than k
    LengthDraw len;
    std::vector<LengthDraw> row_lens;  // kMaxNextN; the first next_n are used
    ValueKind values;
    uint32_t seed;
  };
  auto request = rc::gen::build<RequestDraw>(
      rc::gen::set(&RequestDraw::against_capacity, pick<bool>({{3, false}, {2, true}})),
      rc::gen::set(&RequestDraw::len, gen_length_draw()),
      rc::gen::set(&RequestDraw::row_lens, rc::gen::container<std::vector<LengthDraw>>(kMaxNextN, gen_length_draw())),
      rc::gen::set(&RequestDraw::values, gen_value_kind()), rc::gen::set(&RequestDraw::seed, gen_seed()));
  return polished<CandidateCase>(rc::gen::exec([limits, request] {
    const Contract& contract = limits.draw;
    const std::vector<RequestDraw> requests = *gen_list(request, limits.max_rows);
    CandidateCase c;
    c.next_n = std::min<int32_t>(
        *pick<int32_t>(next_n_within({{4, 1}, {3, 2}, {1, 3}, {1, 4}, {1, kMaxNextN}}, contract)), kMaxNextN);
    c.lens_2d = !contract.lens_1d || (contract.lens_2d && *pick<bool>({false, true}));
    c.block_size =
        *pick(allowed<int32_t>({{4, 8}, {2, 1}, {1, 2}, {2, 4}, {2, 16}, {1, 3}}, contract.candidate_block_sizes));
    c.slots = *pick<int32_t>({{3, 4}, {2, 1}, {2, 2}, {2, 8}, {2, 16}, {1, 64}, {1, 2048}});
    c.k = contract.k_values.empty()
              ? *pick_gen<int32_t>({{5, pick<int32_t>({4, 1, 2, 8, 16, 64, 512})}, {1, rc::gen::inRange<int32_t>(1, 600)}})
              : *pick(allowed<int32_t>({}, contract.k_values));
    c.tail = *gen_tail();
    c.source = *pick<CandidateSource>({{2, CandidateSource::selected}, {1, CandidateSource::drawn}});
    c.seed = *gen_seed();
    c.width_pad = *pick<int64_t>({0, 1, 8, 100});
    const int64_t capacity = int64_t(c.block_size) * c.slots;
    const int64_t cap = limits.logits_elements;
    for (size_t b = 0; b < requests.size() && int64_t(b) * c.next_n < limits.max_rows; ++b) {
      const RequestDraw& d = requests[b];
      const int64_t around = d.against_capacity ? capacity : c.k;
      CandidateRequest q;
      if (c.lens_2d) {
        for (int32_t j = 0; j < c.next_n; ++j) q.row_lens.push_back(d.row_lens[size_t(j)].resolve(around, c.block_size, cap));
        rise(q.row_lens, contract);
      } else
        q.len = d.len.resolve(around, c.block_size, cap);
      q.values = d.values;
      q.seed = d.seed;
      c.requests.push_back(std::move(q));
    }
    int64_t width = 0;
    for (const auto& q : c.requests) {
      width = std::max(width, q.len);
      for (int64_t l : q.row_lens) width = std::max(width, l);
    }
    const int64_t elements = int64_t(c.requests.size()) * c.next_n * (width + c.width_pad);
    if (elements > limits.logits_elements) {
      const double f = double(limits.logits_elements) / double(elements);
      for (auto& q : c.requests) {
        q.len = scaled(q.len, f);
        for (auto& l : q.row_lens) l = scaled(l, f);
      }
    }
    return c;
  }), limits.draw);
}

}  // namespace dsa::fuzz
