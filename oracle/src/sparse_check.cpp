#include "dsa/oracle/sparse_check.hpp"

#include <fmt/format.h>

#include "dsa/error.hpp"
#include "dsa/oracle/report.hpp"

namespace dsa::oracle {
namespace {

void check_shape(const SparseBlocks& s, const char* which) {
  if (s.rows < 0 || s.num_sparse < 0 || int64_t(s.ids.size()) != s.rows * s.num_sparse ||
      int64_t(s.end.size()) != s.rows)
    throw InvalidInput("sparse_blocks", fmt::format("{}: {} ids and {} ends for [{}][{}]", which, s.ids.size(),
                                                    s.end.size(), s.rows, s.num_sparse));
}

}  // namespace

SparseBlocksVerdict check_sparse_blocks(const SparseBlocks& actual, const SparseBlocks& expected, int max_listed) {
  check_shape(expected, "expected");
  check_shape(actual, "actual");
  if (actual.rows != expected.rows || actual.num_sparse != expected.num_sparse ||
      actual.sparse_block_kv != expected.sparse_block_kv)
    throw InvalidInput("sparse_blocks", fmt::format("[{}][{}] with SBK {} against the expected [{}][{}] with SBK {}",
                                                    actual.rows, actual.num_sparse, actual.sparse_block_kv,
                                                    expected.rows, expected.num_sparse, expected.sparse_block_kv));
  SparseBlocksVerdict v;
  v.rows = expected.rows;
  v.num_sparse = expected.num_sparse;
  for (int64_t r = 0; r < expected.rows; ++r) {
    SparseRowDiff d{.row = r, .actual_end = actual.end[size_t(r)], .expected_end = expected.end[size_t(r)]};
    for (int64_t s = 0; s < expected.num_sparse; ++s) {
      if (actual.row(r)[s] == expected.row(r)[s]) continue;
      if (d.slots_differing++ == 0)
        d.first_slot = s, d.actual_id = actual.row(r)[s], d.expected_id = expected.row(r)[s];
    }
    const bool end_differs = d.actual_end != d.expected_end;
    if (d.slots_differing == 0 && !end_differs) continue;
    ++v.rows_differing;
    v.ids_differing += d.slots_differing;
    v.ends_differing += end_differs;
    if (int64_t(v.first_rows.size()) < max_listed) v.first_rows.push_back(d);
  }
  v.passed = v.rows_differing == 0;
  return v;
}

std::string summary_line(const SparseBlocksVerdict& v) {
  if (v.passed)
    return fmt::format("sparse_blocks: PASS  {} rows of ids and ends equal ({} sparse blocks per row)", v.rows,
                       v.num_sparse);
  return fmt::format("sparse_blocks: FAIL  {} of {} rows differ in sparse_block_ids or sparse_end ({} ids, {} ends)",
                     v.rows_differing, v.rows, v.ids_differing, v.ends_differing);
}

std::string format_table(const SparseBlocksVerdict& v) {
  std::string out = summary_line(v) + "\n";
  if (v.passed) return out;
  out +=
      fmt::format("  {:>7} {:>11} {:>9} {:>9} {:>7} {:>7}\n", "row", "ids differ", "first at", "id", "end", "expected");
  for (const auto& d : v.first_rows) {
    const std::string id = d.first_slot < 0 ? "-" : fmt::format("{} ({})", d.actual_id, d.expected_id);
    out += fmt::format("  {:>7} {:>11} {:>9} {:>9} {:>7} {:>7}\n", d.row, d.slots_differing,
                       d.first_slot < 0 ? std::string("-") : std::to_string(d.first_slot), id, d.actual_end,
                       d.expected_end);
  }
  return out;
}

nlohmann::json to_json(const SparseBlocksVerdict& v) {
  nlohmann::json rows = nlohmann::json::array();
  std::vector<int64_t> first;
  for (const auto& d : v.first_rows) {
    first.push_back(d.row);
    rows.push_back({{"row", d.row},
                    {"slots_differing", d.slots_differing},
                    {"first_slot", d.first_slot},
                    {"actual_id", d.actual_id},
                    {"expected_id", d.expected_id},
                    {"actual_end", d.actual_end},
                    {"expected_end", d.expected_end}});
  }
  return {{"rows", v.rows},
          {"num_sparse", v.num_sparse},
          {"rows_differing", v.rows_differing},
          {"ids_differing", v.ids_differing},
          {"ends_differing", v.ends_differing},
          {"first_rows", first},
          {"differing_rows", std::move(rows)}};
}

}  // namespace dsa::oracle
