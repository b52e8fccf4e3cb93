// The "details" objects of schema dsa-oracle/report/1 (docs/oracle.md).
#include <cmath>

#include <fmt/format.h>

#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/report.hpp"

namespace dsa::oracle {

using nlohmann::json;

json float_json(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

namespace {
std::string hex_bits(float v) { return fmt::format("0x{:08x}", float_bits(v)); }
json optional_json(const std::optional<uint64_t>& x) { return x ? json(*x) : json(nullptr); }
}  // namespace

json to_json(const LogitsVerdict& v) {
  json mismatches = json::array();
  for (const auto& m : v.first_mismatches)
    mismatches.push_back({{"row", m.row},
                          {"col", m.col},
                          {"actual", float_json(m.actual)},
                          {"expected", float_json(m.expected)},
                          {"actual_bits", hex_bits(m.actual)},
                          {"expected_bits", hex_bits(m.expected)},
                          {"ulps", m.never_written || m.inf_vs_finite ? nlohmann::json() : optional_json(m.ulps)},
                          {"what", m.kind()},
                          {"bf16_ulps", optional_json(m.bf16_ulps)},
                          {"outside_window", m.outside_window}});
  json worst = json::array();
  for (const auto& r : v.worst_rows)
    worst.push_back({{"row", r.row},
                     {"mismatches", r.mismatches},
                     {"max_ulps", r.max_ulps},
                     {"nan_vs_number", r.nan_vs_number},
                     {"first_col", r.first_col}});
  return {{"mode", v.tolerance_mode ? "tolerance" : "bitwise"},
          {"clean", v.clean},
          {"rows", v.rows},
          {"entries_compared", v.entries_compared},
          {"mismatches", v.mismatches},
          {"rows_with_mismatch", v.rows_with_mismatch},
          {"max_ulps", v.max_ulps},
          {"max_abs_diff", v.max_abs_diff},
          {"nan_vs_number", v.nan_vs_number},
          {"inf_vs_finite", v.inf_vs_finite},
          {"never_written", v.never_written},
          {"nan_matched", v.nan_matched},
          {"rows_with_nan_count", v.rows_with_nan_count},
          {"rows_with_nan", v.rows_with_nan},
          {"first_mismatches", std::move(mismatches)},
          {"worst_rows", std::move(worst)}};
}

json to_json(const SelectionVerdict& v) {
  json rows = json::array();
  for (const auto& r : v.failed_rows)
    rows.push_back({{"row", r.row},
                    {"candidates", r.candidates},
                    {"expected_valid", r.expected_valid},
                    {"cut", r.expected_valid > 0 ? float_json(r.cut) : json(nullptr)},
                    {"ties_at_cut", r.ties_at_cut},
                    {"ties_chosen", r.ties_chosen},
                    {"has_nan", r.has_nan},
                    {"missing_count", r.missing_count},
                    {"extra_count", r.extra_count},
                    {"duplicate_count", r.duplicate_count},
                    {"out_of_range_count", r.out_of_range_count},
                    {"wrong_tail_count", r.wrong_tail_count},
                    {"missing", r.missing},
                    {"extra", r.extra},
                    {"duplicate_slots", r.duplicate_slots},
                    {"out_of_range_slots", r.out_of_range_slots},
                    {"wrong_tail_slots", r.wrong_tail_slots}});
  return {{"eps", v.eps},
          {"rows", v.rows},
          {"k", v.k},
          {"rows_failed", v.rows_failed},
          {"missing", v.missing},
          {"extra", v.extra},
          {"duplicates", v.duplicates},
          {"out_of_range", v.out_of_range},
          {"wrong_tail", v.wrong_tail},
          {"ties_at_cut", v.ties_at_cut},
          {"ties_chosen", v.ties_chosen},
          {"rows_split_at_cut", v.rows_split_at_cut},
          {"rows_with_nan_count", v.rows_with_nan_count},
          {"rows_with_nan", v.rows_with_nan},
          {"failed_rows", std::move(rows)}};
}

json to_json(const DeterminismVerdict& v) {
  json rows = json::array();
  for (const auto& r : v.differing_rows)
    rows.push_back({{"row", r.row}, {"differing", r.differing}, {"only_first", r.only_first},
                    {"only_second", r.only_second}});
  return {{"rows", v.rows}, {"k", v.k}, {"rows_differing", v.rows_differing}, {"differing_rows", std::move(rows)}};
}

json to_json(const WrittenVerdict& v) {
  json sites = json::array();
  for (const auto& s : v.first_survivors) sites.push_back({{"row", s.row}, {"col", s.col}});
  return {{"buffer", v.buffer},
          {"poison_bits", fmt::format("0x{:08x}", v.poison_bits)},
          {"rows", v.rows},
          {"entries_checked", v.entries_checked},
          {"survivors", v.survivors},
          {"rows_with_survivors", v.rows_with_survivors},
          {"first_survivors", std::move(sites)}};
}

}  // namespace dsa::oracle
