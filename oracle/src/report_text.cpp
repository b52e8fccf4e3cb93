// The human side of the reports: one summary line per check and, on failure,
// a few table lines, worst rows first.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/report.hpp"

namespace dsa::oracle {
namespace {

// "1 entry", "2 entries", "3 rows".
std::string plural(int64_t n, const char* word) {
  const std::string w = word;
  if (n == 1) return fmt::format("{} {}", n, w);
  if (w.size() > 1 && w.back() == 'y' && std::string("aeiou").find(w[w.size() - 2]) == std::string::npos)
    return fmt::format("{} {}ies", n, w.substr(0, w.size() - 1));
  return fmt::format("{} {}s", n, w);
}
std::string ulps_text(const std::optional<uint64_t>& u) { return u ? fmt::format("{}", *u) : "-"; }

// A short list: "3, 17, 42 ..." when more exist than are shown.
template <class T>
std::string short_list(const std::vector<T>& shown, int64_t total) {
  if (total == 0) return "";
  return fmt::format("{}{}", fmt::join(shown, ","), total > int64_t(shown.size()) ? ",..." : "");
}

}  // namespace

std::string summary_line(const LogitsVerdict& v) {
  const std::string mode = fmt::format("{}, {}", v.tolerance_mode ? "tolerance" : "bitwise",
                                       v.clean ? "clean: -inf beyond each row" : "visible windows");
  std::string nan;
  if (v.nan_matched + v.nan_vs_number + v.rows_with_nan_count > 0)
    nan = fmt::format("; NaN: {} matched, {} against a number, {} with NaN", v.nan_matched, v.nan_vs_number,
                      plural(v.rows_with_nan_count, "row"));
  if (v.passed)
    return fmt::format("logits: PASS  {} of {} identical ({}){}", plural(v.entries_compared, "entry"),
                       plural(v.rows, "row"), mode, nan);
  // Differences that are not distances are named, not folded into a huge ulp count.
  std::string kinds;
  if (v.never_written) kinds += fmt::format("; {} never written (the poison survived)", v.never_written);
  if (v.inf_vs_finite) kinds += fmt::format("; {} +-inf against a finite value", v.inf_vs_finite);
  const int64_t distances = v.mismatches - v.never_written - v.inf_vs_finite - v.nan_vs_number;
  const std::string distance =
      distances > 0 ? fmt::format("; max {} ulp, max |diff| {:.3g}", v.max_ulps, v.max_abs_diff) : std::string();
  return fmt::format("logits: FAIL  {} of {} entries differ in {} of {} rows ({}){}{}{}", v.mismatches,
                     v.entries_compared, v.rows_with_mismatch, v.rows, mode, distance, kinds, nan);
}

std::string summary_line(const SelectionVerdict& v) {
  const std::string mode = v.eps > 0 ? fmt::format("eps {:g}", v.eps) : std::string("exact");
  const std::string ties = fmt::format("ties at the cut {} ({} chosen, {} split)", v.ties_at_cut, v.ties_chosen,
                                       plural(v.rows_split_at_cut, "row"));
  const std::string nan = v.rows_with_nan_count ? fmt::format(", {} with NaN", plural(v.rows_with_nan_count, "row")) : "";
  if (v.passed)
    return fmt::format("{}: PASS  {} (k = {}, {}); {}{}", v.check, plural(v.rows, "row"), v.k, mode, ties, nan);
  return fmt::format("{}: FAIL  {} of {} rows (k = {}, {}): missing {}, extra {}, duplicates {}, out of range {}, "
                     "wrong -1 tail {}; {}{}",
                     v.check, v.rows_failed, v.rows, v.k, mode, v.missing, v.extra, v.duplicates, v.out_of_range,
                     v.wrong_tail, ties, nan);
}

std::string summary_line(const DeterminismVerdict& v) {
  if (v.passed) return fmt::format("determinism: PASS  {} choose the same sets (k = {})", plural(v.rows, "row"), v.k);
  return fmt::format("determinism: FAIL  {} of {} rows choose different sets (k = {})", v.rows_differing, v.rows, v.k);
}

std::string summary_line(const WrittenVerdict& v) {
  if (v.passed)
    return fmt::format("written({}): PASS  {} written (poison 0x{:08x})", v.buffer, plural(v.entries_checked, "entry"),
                       v.poison_bits);
  return fmt::format("written({}): FAIL  {} of {} entries never written, in {} of {} rows (poison 0x{:08x})", v.buffer,
                     v.survivors, v.entries_checked, v.rows_with_survivors, v.rows, v.poison_bits);
}

std::string format_table(const LogitsVerdict& v) {
  std::string out = summary_line(v) + "\n";
  if (v.passed) return out;
  out += fmt::format("  {:>7} {:>10} {:>10} {:>9} {:>5}\n", "row", "mismatches", "max ulp", "first col", "NaN?");
  for (const auto& r : v.worst_rows)
    out += fmt::format("  {:>7} {:>10} {:>10} {:>9} {:>5}\n", r.row, r.mismatches, r.max_ulps, r.first_col,
                       r.nan_vs_number ? "yes" : "");
  out += fmt::format("  first differing entries:\n  {:>7} {:>7} {:>15} {:>15} {:>10} {:>10} {:>10}  {}\n", "row",
                     "col", "actual", "expected", "act bits", "exp bits", "ulp", "what");
  for (const auto& m : v.first_mismatches)
    out += fmt::format("  {:>7} {:>7} {:>15.9g} {:>15.9g} 0x{:08x} 0x{:08x} {:>10}  {}{}\n", m.row, m.col, m.actual,
                       m.expected, float_bits(m.actual), float_bits(m.expected),
                       m.never_written || m.inf_vs_finite ? "-" : ulps_text(m.ulps), m.kind(),
                       m.outside_window ? " (beyond row)" : "");
  return out;
}

std::string format_table(const SelectionVerdict& v) {
  std::string out = summary_line(v) + "\n";
  if (v.passed) return out;
  out += fmt::format("  {:>7} {:>7} {:>6} {:>13} {:>6} {:>6} {:>7} {:>6} {:>4} {:>5} {:>4}  {}\n", "row", "n", "k'",
                     "cut", "ties", "chosen", "missing", "extra", "dup", "range", "tail", "missing | extra");
  for (const auto& r : v.failed_rows) {
    const std::string lists = r.missing_count + r.extra_count == 0
                                  ? std::string()
                                  : short_list(r.missing, r.missing_count) + " | " + short_list(r.extra, r.extra_count);
    out += fmt::format("  {:>7} {:>7} {:>6} {:>13} {:>6} {:>6} {:>7} {:>6} {:>4} {:>5} {:>4}  {}\n", r.row,
                       r.candidates, r.expected_valid,
                       r.expected_valid > 0 ? fmt::format("{:.7g}", r.cut) : std::string("-"), r.ties_at_cut,
                       r.ties_chosen, r.missing_count, r.extra_count, r.duplicate_count, r.out_of_range_count,
                       r.wrong_tail_count, lists);
  }
  return out;
}

std::string format_table(const DeterminismVerdict& v) {
  std::string out = summary_line(v) + "\n";
  if (v.passed) return out;
  out += fmt::format("  {:>7} {:>9}  {}\n", "row", "differing", "only in run 1 | only in run 2");
  for (const auto& r : v.differing_rows)
    out += fmt::format("  {:>7} {:>9}  {} | {}\n", r.row, r.differing, short_list(r.only_first, r.differing),
                       short_list(r.only_second, r.differing));
  return out;
}

std::string format_table(const WrittenVerdict& v) {
  std::string out = summary_line(v) + "\n";
  if (v.passed) return out;
  out += "  first unwritten (row, col):";
  for (const auto& s : v.first_survivors) out += fmt::format(" ({}, {})", s.row, s.col);
  return out + (v.survivors > int64_t(v.first_survivors.size()) ? " ...\n" : "\n");
}

}  // namespace dsa::oracle
