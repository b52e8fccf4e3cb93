// Issue 11 §2: a bad kernel never takes a campaign down. A command that
// crashes, hangs, writes garbage or cannot start at all ends the campaign
// with the right report and exit code within its timeout, with no process and
// no temporary folder left behind; SIGINT and SIGTERM stop a campaign cleanly.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cli_test_support.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/external.hpp"
#include "dsa/fuzz/properties.hpp"
#include "test_support.hpp"

namespace dsa::fuzz {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string script(const std::string& name) { return shell_quote(test::source_dir() + "/tests/external/" + name); }

// A folder per test for TMPDIR, the kept inputs and the PID lists; removed afterwards.
class RunScratch {
public:
  RunScratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("dsa_robust_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "tmp");
  }
  ~RunScratch() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  fs::path tmp() const { return root_ / "tmp"; }
  fs::path kept() const { return root_ / "kept"; }
  fs::path pids() const { return root_ / "pids"; }
  fs::path path(const std::string& name) const { return root_ / name; }
  // The environment of a run: its own TMPDIR, and where the test scripts list their PIDs.
  std::string env() const { return "TMPDIR=" + tmp().string() + " DSA_TEST_PIDS=" + pids().string(); }
  bool tmp_is_empty() const { return fs::is_empty(tmp()); }

private:
  fs::path root_;
};

bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';  // a zombie is gone
}

// Every PID the scripts listed has ended (reparented grandchildren included); waits a moment for init to reap them.
void expect_no_process_left(const fs::path& pids) {
  std::ifstream in(pids);
  std::vector<pid_t> listed;
  for (pid_t p; in >> p;) listed.push_back(p);
  for (pid_t pid : listed) {
    const auto until = Clock::now() + std::chrono::seconds(3);
    while (!gone(pid) && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(gone(pid)) << "process " << pid << " outlived its call";
  }
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(FuzzExternalRobustness, ACrashIsAFailureWithItsSignalStderrAndKeptInput) {
  const RunScratch s;
  const test::CliRun r = test::run_cli("fuzz --impl " + shell_quote("external:sh " + script("crash.sh")) +
                                           " --property topk_agrees --cases 3 --quiet --keep " + s.kept().string(),
                                       s.env());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("was killed by signal 11"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("crash.sh: about to fault on"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input kept: " + s.kept().string()), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(s.kept()));
  for (const auto& kept : fs::directory_iterator(s.kept())) {
    // The kept input is the golden case the kernel was given: the reference takes it as it is.
    const dataset::Safetensors in = dataset::read_safetensors(kept.path().string());
    EXPECT_EQ(in.meta("op"), "prefill_topk");
    const test::CliRun ref = test::run_cli("reference --op prefill_topk --profile exact --in " + kept.path().string() +
                                           " --out " + s.path("expected.safetensors").string());
    EXPECT_EQ(ref.exit_code, 0) << ref.output;
  }
  EXPECT_TRUE(s.tmp_is_empty());
  expect_no_process_left(s.pids());
}

TEST(FuzzExternalRobustness, AHangIsKilledWithItsProcessGroupAtTheTimeout) {
  const RunScratch s;
  const auto t0 = Clock::now();
  // The contract file spares the `describe` call (which would hang as well).
  const std::string contract = s.path("contract.json").string();
  std::ofstream(contract) << R"({"ops": ["topk"]})";
  const test::CliRun r = test::run_cli("fuzz --impl " + shell_quote("external:sh " + script("hang.sh")) +
                                           " --contract " + contract +
                                           " --property topk_agrees --cases 1 --timeout 0.15 --seconds 1"
                                           " --shrink-seconds 0.2 --quiet --keep ''",
                                       s.env());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("did not finish in time: killed with its process group"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hang.sh: waiting forever"), std::string::npos) << r.output;
  // The probe, the case, a shrink bounded by --shrink-seconds and the replay, at 0.15 s a call.
  EXPECT_LT(seconds_since(t0), 5.0);
  EXPECT_TRUE(s.tmp_is_empty());
  expect_no_process_left(s.pids());
}

TEST(FuzzExternalRobustness, ACommandThatCannotStartIsASetupError) {
  const RunScratch s;
  // Debian's python3 by its path: a python3 on PATH may be a pyenv shim, half a second a start, and the
  // campaign starts the command 27 times before it gives up (11 s of a CI run on such a machine).
  for (const std::string& command : {std::string("/usr/bin/python3 /nonexistent/kernel.py"),
                                     std::string("/nonexistent/kernel"),
                                     std::string("sh -c 'echo No module named torch >&2; exit 1'")}) {
    // The last one runs without --quiet: its failed `describe` call is noted.
    const bool noted = command.find("torch") != std::string::npos;
    const test::CliRun r = test::run_cli(
        "fuzz --impl " + shell_quote("external:" + command) + " --cases 3" + (noted ? "" : " --quiet"), s.env());
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
    if (noted) {
      EXPECT_NE(r.output.find("note: no contract declared (its `describe` call: "), std::string::npos) << r.output;
    }
    EXPECT_NE(r.output.find("failed on its first call of every op"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("exited with status"), std::string::npos) << r.output;
    EXPECT_TRUE(s.tmp_is_empty()) << command;
    // Its stderr comes with the statement.
    if (noted) {
      EXPECT_NE(r.output.find("No module named torch"), std::string::npos) << r.output;
    }
  }
}

TEST(FuzzExternalRobustness, AMalformedAnswerIsAFailureOfTheCase) {
  const RunScratch s;
  const test::CliRun r = test::run_cli("fuzz --impl " + shell_quote("external:sh " + script("malformed.sh")) +
                                           " --property topk_agrees --cases 2 --quiet --keep ''",
                                       s.env());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("wrote a malformed answer"), std::string::npos) << r.output;
  EXPECT_TRUE(s.tmp_is_empty());
}

TEST(FuzzExternalRobustness, UnsupportedToEverythingChecksNothingAndIsNoPass) {
  const RunScratch s;
  const std::string impl = shell_quote("external:sh -c 'exit 3'");
  test::CliRun r = test::run_cli("fuzz --impl " + impl + " --cases 2 --quiet --out " + s.path("r.jsonl").string(), s.env());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("NOTHING WAS CHECKED"), std::string::npos) << r.output;
  std::ifstream lines(s.path("r.jsonl"));
  std::string line, last;
  while (std::getline(lines, line)) last = line;
  EXPECT_NE(last.find("\"checked_nothing\":true"), std::string::npos) << last;
  r = test::run_cli("fuzz --impl " + impl + " --cases 2 --quiet --allow-empty", s.env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("NOTHING WAS CHECKED"), std::string::npos) << r.output;
}

// Persistent mode: a command that dies in the middle of a call is a failure of
// that case, and it is started again for the next one.
TEST(FuzzExternalRobustness, APersistentCommandThatDiesIsAFailureAndIsRestarted) {
  const RunScratch s;
  ExternalOptions eo;
  eo.persistent = true;
  eo.timeout_seconds = 5;
  auto command = std::make_shared<ExternalCommand>("/usr/bin/python3 " + script("persistent_crash.py"), eo);
  auto ops = make_external_ops(command);
  TopkCase c;
  c.k = 2;
  c.rows = {{0, 5, ValueKind::normal, 1}};
  const Property& p = find_property(property::kTopkAgrees);
  EXPECT_EQ(check_case(p, *ops, c).verdict, Verdict::unsupported);  // its first answer
  const Outcome died = check_case(p, *ops, c);                      // the second request kills it
  EXPECT_EQ(died.verdict, Verdict::fail);
  EXPECT_NE(died.message.find("was killed by signal 9"), std::string::npos) << died.message;
  EXPECT_NE(died.message.find("giving up on request 2"), std::string::npos) << died.message;
  EXPECT_EQ(check_case(p, *ops, c).verdict, Verdict::unsupported);  // a fresh process answers again
  EXPECT_EQ(command->stats().starts, 2);
  EXPECT_EQ(command->stats().failed, 1);
  const std::string folder = command->folder();
  ops.reset();
  command.reset();
  EXPECT_FALSE(fs::exists(folder));  // the persistent process ended, its folder removed
}

// SIGTERM and SIGINT: children killed, the summary so far printed and written,
// temporary folders gone. Each signal comes once the hanging command has
// started (it lists its PIDs): under SIGTERM while the command is asked for
// its contract (`describe`), under SIGINT (a contract file given) in a probe call.
TEST(FuzzExternalRobustness, SignalsStopACampaignCleanly) {
  for (const auto& [signal_name, code] : {std::pair<std::string, int>{"TERM", 143}, {"INT", 130}}) {
    const RunScratch s;
    const auto t0 = Clock::now();
    std::string contract;
    if (signal_name == "INT") {
      std::ofstream(s.path("contract.json")) << R"({"ops": ["topk"]})";
      contract = " --contract " + s.path("contract.json").string();
    }
    const std::string log = s.path("log").string();
    // `exec`: the signal goes to the campaign itself, started with this process's signal dispositions
    // (a shell's background job would start with SIGINT ignored, which the program keeps).
    const std::string line = "exec env " + s.env() + " " + std::string(DSA_CLI_PATH) + " fuzz --impl " +
                             shell_quote("external:sh " + script("hang.sh")) + contract +
                             " --property topk_agrees --cases 100 --timeout 60 --quiet --out " +
                             s.path("r.jsonl").string() + " > " + log + " 2>&1";
    const pid_t child = ::fork();
    if (child == 0) {
      ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ASSERT_GT(child, 0);
    // Once the command has started (it lists its PIDs), the campaign is inside a call.
    const auto until = Clock::now() + std::chrono::seconds(10);
    while ((!fs::exists(s.pids()) || fs::file_size(s.pids()) == 0) && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::kill(child, signal_name == "TERM" ? SIGTERM : SIGINT);
    int status = 0;
    ::waitpid(child, &status, 0);
    std::ifstream log_in(log);
    std::stringstream output;
    output << log_in.rdbuf();
    ASSERT_TRUE(WIFEXITED(status)) << output.str();
    EXPECT_EQ(WEXITSTATUS(status), code) << output.str();
    EXPECT_LT(seconds_since(t0), 10.0);
    EXPECT_NE(output.str().find("stopped early by signal"), std::string::npos) << output.str();
    std::ifstream lines(s.path("r.jsonl"));
    std::stringstream text;
    text << lines.rdbuf();
    EXPECT_NE(text.str().find("\"interrupted_by_signal\":" + std::to_string(code - 128)), std::string::npos) << text.str();
    EXPECT_TRUE(s.tmp_is_empty());
    expect_no_process_left(s.pids());
  }
}

}  // namespace
}  // namespace dsa::fuzz
