#include "dsa/oracle/rows.hpp"

#include <fmt/format.h>

#include "dsa/error.hpp"

namespace dsa::oracle {

std::vector<RowWindow> decode_windows(std::span<const int64_t> visible_lens) {
  std::vector<RowWindow> windows;
  windows.reserve(visible_lens.size());
  for (size_t r = 0; r < visible_lens.size(); ++r) {
    if (visible_lens[r] < 0)
      throw InvalidInput("visible_lens", fmt::format("row {} has negative length {}", r, visible_lens[r]));
    windows.push_back({0, visible_lens[r]});
  }
  return windows;
}

std::vector<RowWindow> prefill_windows(std::span<const int32_t> ks, std::span<const int32_t> ke) {
  if (ks.size() != ke.size())
    throw InvalidInput("ke", fmt::format("{} entries for {} rows of ks", ke.size(), ks.size()));
  std::vector<RowWindow> windows;
  windows.reserve(ks.size());
  for (size_t r = 0; r < ks.size(); ++r) {
    if (ks[r] < 0 || ke[r] < ks[r])
      throw InvalidInput("ks", fmt::format("row {} has ks = {}, ke = {}", r, ks[r], ke[r]));
    windows.push_back({ks[r], ke[r]});
  }
  return windows;
}

void validate(const IndexMatrix& m, const char* name) {
  if (m.rows < 0 || m.cols <= 0)
    throw InvalidInput(name, fmt::format("shape [{}][{}] needs rows >= 0 and cols > 0", m.rows, m.cols));
  if (int64_t(m.values.size()) != m.rows * m.cols)
    throw InvalidInput(name, fmt::format("{} values for shape [{}][{}]", m.values.size(), m.rows, m.cols));
}

}  // namespace dsa::oracle
