// Exit codes of the command line: bad input is 2, any other exception 4
// ("internal error"), never 3 (the external exchange's "unsupported").
#include <gtest/gtest.h>

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include "cli/exit_codes.hpp"
#include "dsa/error.hpp"

namespace dsa::cli {
namespace {

// The exit code and what went to stderr.
std::pair<int, std::string> run(const std::function<int()>& f) {
  std::FILE* err = std::tmpfile();
  const int code = run_reporting_errors(f, err);
  std::rewind(err);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), err));
  std::fclose(err);
  return {code, text};
}

TEST(CliExitCodes, ReturnsWhatTheCommandReturns) {
  EXPECT_EQ(run([] { return kExitOk; }).first, 0);
  EXPECT_EQ(run([] { return kExitCheckFailed; }).first, 1);
  EXPECT_TRUE(run([] { return 0; }).second.empty());
}

TEST(CliExitCodes, InvalidInputIsBadInput) {
  const auto [code, text] = run([]() -> int { throw InvalidInput("page_size", "must be at least 1, got 0"); });
  EXPECT_EQ(code, kExitBadInput);
  EXPECT_EQ(text, "dsa-oracle: error: page_size: must be at least 1, got 0\n");
}

TEST(CliExitCodes, AnythingElseIsAnInternalError) {
  const auto [code, text] = run([]() -> int { throw std::runtime_error("sha256: EVP init failed"); });
  EXPECT_EQ(code, kExitInternalError);
  EXPECT_EQ(text, "dsa-oracle: internal error: sha256: EVP init failed\n");
  EXPECT_EQ(run([]() -> int { throw std::bad_alloc(); }).first, kExitInternalError);
  // An Unsupported that reaches the top was not handled by a harness: not bad input, not a pass.
  EXPECT_EQ(run([]() -> int { throw Unsupported("x: top-k is not implemented"); }).first, kExitInternalError);
  const auto [other, other_text] = run([]() -> int { throw 7; });
  EXPECT_EQ(other, kExitInternalError);
  EXPECT_NE(other_text.find("internal error"), std::string::npos);
}

}  // namespace
}  // namespace dsa::cli
