#include "dsa/oracle/poison.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dsa/error.hpp"
#include "dsa/oracle/float_bits.hpp"

namespace dsa::oracle {

void fill_poison(std::span<float> values, uint32_t bits) { std::fill(values.begin(), values.end(), float_from_bits(bits)); }
void fill_poison(std::span<int32_t> values, int32_t poison) { std::fill(values.begin(), values.end(), poison); }

namespace {

// Scans row r's columns [begin, end) for `is_poison`.
template <class IsPoison>
void scan_row(WrittenVerdict& v, int64_t r, int64_t begin, int64_t end, size_t listed, IsPoison&& is_poison) {
  int64_t found = 0;
  for (int64_t c = begin; c < end; ++c) {
    if (!is_poison(c)) continue;
    ++found;
    if (v.first_survivors.size() < listed) v.first_survivors.push_back({r, c});
  }
  v.entries_checked += end - begin;
  v.survivors += found;
  v.rows_with_survivors += found > 0;
}

}  // namespace

WrittenVerdict check_written(const IndexMatrix& out, std::string buffer, int32_t poison, int max_listed) {
  validate(out, buffer.c_str());
  WrittenVerdict v;
  v.buffer = std::move(buffer);
  v.poison_bits = uint32_t(poison);
  v.rows = out.rows;
  const size_t listed = size_t(std::max(max_listed, 0));
  for (int64_t r = 0; r < out.rows; ++r) {
    const int32_t* row = out.row(r);
    scan_row(v, r, 0, out.cols, listed, [&](int64_t c) { return row[c] == poison; });
  }
  v.passed = v.survivors == 0;
  return v;
}

WrittenVerdict check_written(const Logits& out, std::span<const RowWindow> windows, std::string buffer,
                             uint32_t poison_bits, int max_listed) {
  if (out.rows < 0 || out.width < 0 || int64_t(out.values.size()) != out.rows * out.width)
    throw InvalidInput(buffer, fmt::format("{} values for shape [{}][{}]", out.values.size(), out.rows, out.width));
  if (!windows.empty() && int64_t(windows.size()) != out.rows)
    throw InvalidInput("windows", fmt::format("{} windows for {} rows", windows.size(), out.rows));
  WrittenVerdict v;
  v.buffer = std::move(buffer);
  v.poison_bits = poison_bits;
  v.rows = out.rows;
  const size_t listed = size_t(std::max(max_listed, 0));
  for (int64_t r = 0; r < out.rows; ++r) {
    const RowWindow w = windows.empty() ? RowWindow{0, out.width} : windows[size_t(r)];
    if (w.begin < 0 || w.end < w.begin || w.end > out.width)
      throw InvalidInput("windows", fmt::format("row {} window [{}, {}) outside [0, {}]", r, w.begin, w.end, out.width));
    const float* row = out.row(r);
    scan_row(v, r, w.begin, w.end, listed, [&](int64_t c) { return float_bits(row[c]) == poison_bits; });
  }
  v.passed = v.survivors == 0;
  return v;
}

}  // namespace dsa::oracle
