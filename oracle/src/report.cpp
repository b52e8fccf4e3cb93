#include "dsa/oracle/report.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace dsa::oracle {
namespace {

template <class Verdict>
Report::Entry make_entry(std::string label, std::string check, const Verdict& v) {
  return {std::move(label), std::move(check), v.passed, summary_line(v), format_table(v), to_json(v)};
}

}  // namespace

void Report::add(std::string label, const LogitsVerdict& v) {
  entries_.push_back(make_entry(std::move(label), "logits", v));
}
void Report::add(std::string label, const SelectionVerdict& v) {
  entries_.push_back(make_entry(std::move(label), v.check, v));
}
void Report::add(std::string label, const DeterminismVerdict& v) {
  entries_.push_back(make_entry(std::move(label), "determinism", v));
}
void Report::add(std::string label, const WrittenVerdict& v) {
  entries_.push_back(make_entry(std::move(label), "written", v));
}
void Report::add(std::string label, const SparseBlocksVerdict& v) {
  entries_.push_back(make_entry(std::move(label), "sparse_blocks", v));
}

void Report::append(const Report& other, std::string_view prefix) {
  for (Entry e : other.entries_) {
    e.label = std::string(prefix) + e.label;
    entries_.push_back(std::move(e));
  }
}

bool Report::passed() const { return failed_count() == 0; }

int64_t Report::failed_count() const {
  return std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.passed; });
}

std::string Report::to_text() const {
  std::string out = title_.empty() ? "" : title_ + "\n";
  for (const auto& e : entries_)
    if (!e.passed) out += fmt::format("[{}] {}", e.label, e.table.empty() ? e.summary + "\n" : e.table);
  for (const auto& e : entries_)
    if (e.passed) out += fmt::format("[{}] {}\n", e.label, e.summary);
  out += fmt::format("{} checks, {} failed: {}\n", entries_.size(), failed_count(), passed() ? "PASS" : "FAIL");
  return out;
}

nlohmann::json Report::to_json() const {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& e : entries_)
    checks.push_back(
        {{"label", e.label}, {"check", e.check}, {"passed", e.passed}, {"summary", e.summary}, {"details", e.details}});
  return {{"schema", kReportSchema},
          {"title", title_},
          {"passed", passed()},
          {"checks_total", entries_.size()},
          {"checks_failed", failed_count()},
          {"checks", std::move(checks)}};
}

}  // namespace dsa::oracle
