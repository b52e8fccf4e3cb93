// Reports of the comparators: a short table a person reads (worst rows first)
// and JSON a program reads, one versioned schema for every check
// ("dsa-oracle/report/1", described in docs/oracle.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsa/oracle/determinism_check.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/oracle/sparse_check.hpp"

namespace dsa::oracle {

inline constexpr std::string_view kReportSchema = "dsa-oracle/report/1";

// One line: "<check>: PASS|FAIL ..." with the counts that matter.
std::string summary_line(const LogitsVerdict& v);
std::string summary_line(const SelectionVerdict& v);
std::string summary_line(const DeterminismVerdict& v);
std::string summary_line(const WrittenVerdict& v);
std::string summary_line(const SparseBlocksVerdict& v);

// The summary line, then (on failure) a few lines of table, worst rows first.
std::string format_table(const LogitsVerdict& v);
std::string format_table(const SelectionVerdict& v);
std::string format_table(const DeterminismVerdict& v);
std::string format_table(const WrittenVerdict& v);
std::string format_table(const SparseBlocksVerdict& v);

// The "details" object of one check (schema in docs/oracle.md).
nlohmann::json to_json(const LogitsVerdict& v);
nlohmann::json to_json(const SelectionVerdict& v);
nlohmann::json to_json(const DeterminismVerdict& v);
nlohmann::json to_json(const WrittenVerdict& v);
nlohmann::json to_json(const SparseBlocksVerdict& v);

// A float as JSON: a number when finite, else "nan", "inf" or "-inf".
nlohmann::json float_json(float v);

// Several verdicts under labels (a golden case, a fuzz case, a step), with a
// verdict for the whole: passed only if every check passed.
class Report {
public:
  struct Entry {
    std::string label;  // e.g. "case_0003/topk"
    std::string check;  // "logits", "topk", "candidate_blocks", "determinism", "written", "sparse_blocks"
    bool passed = true;
    std::string summary;
    std::string table;
    nlohmann::json details;
  };

  explicit Report(std::string title = {}) : title_(std::move(title)) {}

  void add(std::string label, const LogitsVerdict& v);
  void add(std::string label, const SelectionVerdict& v);
  void add(std::string label, const DeterminismVerdict& v);
  void add(std::string label, const WrittenVerdict& v);
  void add(std::string label, const SparseBlocksVerdict& v);
  // A check of the caller's own (a manifest hash, a shape): `check` names it in the JSON.
  void add(Entry entry) { entries_.push_back(std::move(entry)); }
  // Merges another report's entries, their labels prefixed with `prefix`.
  void append(const Report& other, std::string_view prefix = {});

  bool passed() const;
  int64_t failed_count() const;
  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& title() const { return title_; }

  // Failed checks first with their tables, then one line per passed check,
  // then "N checks, M failed".
  std::string to_text() const;
  nlohmann::json to_json() const;

private:
  std::string title_;
  std::vector<Entry> entries_;
};

}  // namespace dsa::oracle
