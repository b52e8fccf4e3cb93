// `dsa-oracle check`'s options and its two halves: the golden check
// (check.cpp) and the baseline check (check_baseline.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dsa/dataset/check.hpp"

namespace dsa::cli {

struct CheckCliOptions {
  std::string golden;
  std::string baseline;
  std::string outputs;
  std::string impl;
  std::optional<double> tolerance;
  std::vector<std::string> ops;  // golden ops to judge (check --ops); empty: every op
  std::string json;
  bool quiet = false;
  std::string numerics = "differing";
  std::string numerics_json;
  std::string svg;
};

// One case's verdict and its checks, as a table.
void print_case(const dataset::CaseCheck& c, bool quiet);
int check_baseline_command(const CheckCliOptions& options);

}  // namespace dsa::cli
