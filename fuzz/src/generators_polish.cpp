// The last polish of a shrink (generator_draws.hpp): the case itself made
// smaller, one row, request, length or row position at a time (and a top-k
// row's values drawn again from a smaller seed).
#include <algorithm>

#include "generator_draws.hpp"

namespace dsa::fuzz::detail {
namespace {

constexpr uint32_t kReseeds = 32;  // seeds a top-k row may be drawn again from (polish(TopkCase))

template <class T>
std::vector<T> towards(T value, T target) {
  std::vector<T> out;
  rc::Seq<T> seq = rc::shrink::towards(value, target);
  while (auto v = seq.next()) out.push_back(*v);
  return out;
}

template <class Case, class Item>
void drop_each(const Case& c, std::vector<Item> Case::*items, std::vector<Case>& out) {
  if ((c.*items).size() < 2) return;
  for (size_t i = 0; i < (c.*items).size(); ++i) {
    Case d = c;
    (d.*items).erase((d.*items).begin() + int64_t(i));
    out.push_back(std::move(d));
  }
}

}  // namespace

std::vector<TopkCase> polish(const TopkCase& c) {
  std::vector<TopkCase> out;
  drop_each(c, &TopkCase::rows, out);
  for (size_t i = 0; i < c.rows.size(); ++i)
    for (int64_t len : towards<int64_t>(c.rows[i].len, 0)) {
      TopkCase d = c;
      d.rows[i].len = len;
      out.push_back(std::move(d));
    }
  for (int32_t k : towards<int32_t>(c.k, 1)) {
    TopkCase d = c;
    d.k = k;
    out.push_back(std::move(d));
  }
  // A row's values come from its seed: the value that breaks a kernel (a NaN among extremes, one
  // entry in 64) sits where that seed put it, and no shorter row of the same seed keeps it. So a row
  // may also be drawn again from one of a few small seeds at half its length: the length still falls
  // with every accepted step (the shrink ends), and a seed that puts such a value early lets it go on.
  for (size_t i = 0; i < c.rows.size(); ++i)
    for (uint32_t seed = 0; seed < kReseeds && c.rows[i].len > 1; ++seed) {
      if (seed == c.rows[i].seed) continue;
      TopkCase d = c;
      d.rows[i].seed = seed;
      d.rows[i].len = c.rows[i].len / 2;
      out.push_back(std::move(d));
    }
  return out;
}

std::vector<CandidateCase> polish(const CandidateCase& c) {
  std::vector<CandidateCase> out;
  drop_each(c, &CandidateCase::requests, out);
  for (size_t i = 0; i < c.requests.size(); ++i) {
    for (int64_t len : towards<int64_t>(c.requests[i].len, 0)) {
      CandidateCase d = c;
      d.requests[i].len = len;
      out.push_back(std::move(d));
    }
    for (size_t j = 0; j < c.requests[i].row_lens.size(); ++j)
      for (int64_t len : towards<int64_t>(c.requests[i].row_lens[j], 0)) {
        CandidateCase d = c;
        d.requests[i].row_lens[j] = len;
        out.push_back(std::move(d));
      }
  }
  for (int32_t k : towards<int32_t>(c.k, 1)) {
    CandidateCase d = c;
    d.k = k;
    out.push_back(std::move(d));
  }
  // Fewer rows per request: 2-D lengths lose one row position in every request.
  for (int32_t j = 0; j < c.next_n && c.next_n > 1; ++j) {
    CandidateCase d = c;
    d.next_n = c.next_n - 1;
    if (c.lens_2d)
      for (auto& q : d.requests) q.row_lens.erase(q.row_lens.begin() + j);
    out.push_back(std::move(d));
    if (!c.lens_2d) break;
  }
  return out;
}

std::vector<DecodeCase> polish(const DecodeCase& c) {
  std::vector<DecodeCase> out;
  drop_each(c, &DecodeCase::requests, out);
  for (size_t i = 0; i < c.requests.size(); ++i) {
    for (int32_t tokens : towards<int32_t>(c.requests[i].tokens, 0)) {
      DecodeCase d = c;
      d.requests[i].tokens = tokens;
      out.push_back(std::move(d));
    }
    for (size_t j = 0; j < c.requests[i].row_lens.size(); ++j)
      for (int32_t len : towards<int32_t>(c.requests[i].row_lens[j], 0)) {
        DecodeCase d = c;
        d.requests[i].row_lens[j] = len;
        out.push_back(std::move(d));
      }
  }
  for (int32_t j = 0; j < c.next_n && c.next_n > (c.padded ? 2 : 1); ++j) {
    DecodeCase d = c;
    d.next_n = c.next_n - 1;
    for (auto& q : d.requests) {
      if (c.lens_2d) q.row_lens.erase(q.row_lens.begin() + j);
      q.decode_len = std::min(q.decode_len, d.next_n);
    }
    out.push_back(std::move(d));
    if (!c.lens_2d) break;
  }
  return out;
}

std::vector<PrefillCase> polish(const PrefillCase& c) {
  std::vector<PrefillCase> out;
  drop_each(c, &PrefillCase::rows, out);
  for (size_t i = 0; i < c.rows.size(); ++i)
    for (int64_t len : towards<int64_t>(c.rows[i].len, 0)) {
      PrefillCase d = c;
      d.rows[i].len = len;
      out.push_back(std::move(d));
    }
  return out;
}

}  // namespace dsa::fuzz::detail
