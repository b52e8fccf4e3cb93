// External commands (external.hpp): each call in the command's own process
// group, under a deadline, the whole group killed when the call ends.
#include "dsa/fuzz/external.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "dsa/dataset/golden_case.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/exchange.hpp"
#include "dsa/fuzz/interrupt.hpp"

namespace dsa::fuzz {

// A child in its own process group; stdin/stdout either pipes or /dev/null and the log. Outside the
// anonymous namespace because ExternalCommand::Server (external linkage) holds one.
namespace external_process {
struct Child {
  pid_t pid = -1;
  int to_child = -1;    // its standard input (persistent mode)
  int from_child = -1;  // its standard output (persistent mode)
};
}  // namespace external_process

namespace {

using external_process::Child;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

std::string signal_text(int sig) {
  const char* name = strsignal(sig);
  return fmt::format("signal {} ({})", sig, name ? name : "unknown");
}

Child spawn(const std::string& line, const std::string& log, bool pipes) {
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
  if (pipes && (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0))
    throw std::runtime_error(std::string("external: cannot make a pipe: ") + std::strerror(errno));
  // Everything the child needs exists before fork: between fork and exec only async-signal-safe calls.
  const char* argv[] = {"/bin/sh", "-c", line.c_str(), nullptr};
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("external: cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int null = open("/dev/null", O_RDWR);
    if (err < 0 || null < 0) _exit(126);
    dup2(pipes ? in_pipe[0] : null, 0);
    dup2(pipes ? out_pipe[1] : err, 1);
    dup2(err, 2);
    // Default dispositions: the campaign ignores SIGPIPE, the command must not inherit that.
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execv("/bin/sh", const_cast<char* const*>(argv));
    _exit(127);
  }
  setpgid(pid, pid);  // also here: whichever runs first, the group exists before any kill
  register_child_group(pid);
  Child c;
  c.pid = pid;
  if (pipes) {
    close(in_pipe[0]);
    close(out_pipe[1]);
    c.to_child = in_pipe[1];
    c.from_child = out_pipe[0];
    fcntl(c.to_child, F_SETFL, O_NONBLOCK);
  }
  return c;
}

// How a child ended.
struct Ending {
  bool exited = false;
  int code = 0;  // exit status, or the signal
  bool timed_out = false;
  std::string text() const {
    if (timed_out) return "did not finish in time: killed with its process group";
    return exited ? fmt::format("exited with status {}", code) : "was killed by " + signal_text(code);
  }
};

// Kills the whole group while the leader is still a zombie (so its id cannot
// be reused meanwhile), then reaps the leader.
Ending finish(Child& c, bool timed_out) {
  Ending e;
  e.timed_out = timed_out;
  if (c.pid <= 0) return e;
  kill(-c.pid, SIGKILL);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  unregister_child_group(c.pid);
  if (WIFEXITED(status)) e.exited = true, e.code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) e.code = WTERMSIG(status);
  // The command runs under `sh -c`, which reports a child killed by signal n as status 128 + n.
  if (e.exited && e.code > 128 && e.code < 128 + 32) e.exited = false, e.code -= 128;
  if (c.to_child >= 0) close(c.to_child);
  if (c.from_child >= 0) close(c.from_child);
  c = Child{};
  return e;
}

// Waits for the leader to exit (without reaping it) or for the deadline or a stop request.
Ending wait_for(Child& c, Clock::time_point deadline) {
  auto pause = std::chrono::microseconds(200);
  while (true) {
    siginfo_t info{};
    const int r = waitid(P_PID, id_t(c.pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == c.pid) return finish(c, false);
    if (r < 0 && errno != EINTR) return finish(c, false);
    if (stop_requested()) {
      finish(c, true);
      throw Interrupted();
    }
    if (Clock::now() >= deadline) return finish(c, true);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The last `max` bytes of a file.
std::string file_tail(const std::string& path, size_t max) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > std::streamoff(max) ? size - std::streamoff(max) : 0;
  in.seekg(from);
  std::string text(size_t(size - from), '\0');
  in.read(text.data(), std::streamsize(text.size()));
  return text;
}

// A call whose command exited with a non-zero status (not a signal, a timeout
// or a malformed answer): what a command that cannot start at all does.
class ExitedWithStatus : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

const std::string& op_of(const dataset::Safetensors& request) {
  static const std::string none = "?";
  const auto it = request.metadata.find("op");
  return it == request.metadata.end() ? none : it->second;
}

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

}  // namespace

std::string last_lines(const std::string& text, int lines, size_t bytes) {
  std::vector<std::string> kept;
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  size_t used = 0;
  while (end > 0 && int(kept.size()) < lines && used < bytes) {
    const size_t nl = text.rfind('\n', end - 1);
    const size_t begin = nl == std::string::npos ? 0 : nl + 1;
    kept.push_back(excerpt(std::string_view(text).substr(begin, end - begin), 200));
    used += kept.back().size();
    end = nl == std::string::npos ? 0 : nl;
  }
  std::string out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) out += "  | " + *it + "\n";
  return out;
}

// The persistent process and the pipes to it.
struct ExternalCommand::Server {
  Child child;
};

ExternalCommand::ExternalCommand(std::string command, ExternalOptions options)
    : command_(std::move(command)), options_(std::move(options)), server_(std::make_unique<Server>()) {
  if (command_.find_first_not_of(" \t") == std::string::npos)
    throw InvalidInput("impl", "external: needs a command, e.g. external:'python3 my_kernel.py'");
  if (!(options_.timeout_seconds > 0)) throw InvalidInput("timeout", "must be positive");
  if (options_.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / "dsa-external-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw InvalidInput("impl", "external: cannot create a folder under " + pattern);
    dir_ = pattern;
    owns_dir_ = !options_.keep_files;
  } else {
    dir_ = options_.work_dir;
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (!fs::is_directory(dir_)) throw InvalidInput("impl", "external: cannot create the folder " + dir_);
  }
  // A command that dies while we write to it must be a failure of that call, not the end of the campaign.
  struct sigaction current{};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
}

ExternalCommand::~ExternalCommand() {
  finish(server_->child, false);
  std::error_code ec;
  if (owns_dir_) fs::remove_all(dir_, ec);
}

std::string ExternalCommand::stderr_tail() const {
  const std::string tail = last_lines(file_tail((fs::path(dir_) / "stderr.txt").string(), 16384));
  return tail.empty() ? "  (its standard error is empty)\n" : "  last lines of its standard error:\n" + tail;
}

dataset::Safetensors ExternalCommand::call(const dataset::Safetensors& request) {
  if (stop_requested()) throw Interrupted();
  const std::string op = op_of(request);
  const std::vector<uint8_t> bytes = dataset::serialize_safetensors(request);
  const double timeout = options_.timeout_seconds + double(bytes.size()) / double(16 << 20);
  ++stats_.calls;
  const bool first = !stats_.first_call.count(op);
  try {
    dataset::Safetensors answer =
        options_.persistent ? call_persistent(bytes, op, timeout) : call_per_process(bytes, op, timeout);
    ++stats_.answered;
    if (first) stats_.first_call[op] = "answered", stats_.first_call_failed[op] = false;
    return answer;
  } catch (const Unsupported&) {
    ++stats_.unsupported;
    if (first) stats_.first_call[op] = "unsupported", stats_.first_call_failed[op] = false;
    throw;
  } catch (const Interrupted&) {
    throw;
  } catch (const ExitedWithStatus& e) {
    ++stats_.failed;
    last_failed_ = bytes;
    if (first) stats_.first_call[op] = e.what(), stats_.first_call_failed[op] = true;
    throw;
  } catch (const std::exception& e) {
    ++stats_.failed;
    last_failed_ = bytes;
    if (first) stats_.first_call[op] = e.what(), stats_.first_call_failed[op] = false;
    throw;
  }
}

dataset::Safetensors ExternalCommand::call_per_process(const std::vector<uint8_t>& request, const std::string& op,
                                                      double timeout) {
  const fs::path in = fs::path(dir_) / "case.safetensors", out = fs::path(dir_) / "out.safetensors",
                 log = fs::path(dir_) / "stderr.txt";
  std::error_code ec;
  fs::remove(out, ec);
  fs::remove(log, ec);
  dataset::write_file_atomically(in.string(), request);
  const std::string line =
      fmt::format("{} --in {} --out {}", command_, shell_quote(in.string()), shell_quote(out.string()));
  ++stats_.starts;
  Child child = spawn(line, log.string(), false);
  const Ending end = wait_for(child, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(timeout)));
  if (end.exited && end.code == kExternalUnsupported) throw Unsupported(fmt::format("{} does not take {}", command_, op));
  const std::string what =
      fmt::format("external command {} on op {} ({:.1f} s allowed)\n{}", end.text(), op, timeout, stderr_tail());
  if (end.exited && end.code != 0) throw ExitedWithStatus(what);
  if (!end.exited) throw std::runtime_error(what);
  if (!fs::is_regular_file(out))
    throw std::runtime_error(fmt::format("external command exited 0 on op {} but wrote no {}\n{}", op, out.string(),
                                         stderr_tail()));
  try {
    return dataset::parse_safetensors(read_file(out), "the answer");
  } catch (const InvalidInput& e) {
    throw std::runtime_error(fmt::format("external command wrote a malformed answer to op {}: {}\n{}", op, e.what(),
                                         stderr_tail()));
  }
}

namespace {

// Writes all of `bytes` before the deadline; false when the child stopped reading or went away.
bool write_all(int fd, const uint8_t* bytes, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    const ssize_t n = write(fd, bytes, size);
    if (n > 0) {
      bytes += n, size -= size_t(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (stop_requested()) throw Interrupted();
    pollfd p{fd, POLLOUT, 0};
    const double left = seconds_left(deadline);
    if (left <= 0) return false;
    poll(&p, 1, int(std::min(left * 1000 + 1, 100.0)));
  }
  return true;
}

enum class ReadEnd { ok, closed, timed_out };
ReadEnd read_all(int fd, uint8_t* bytes, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    if (stop_requested()) throw Interrupted();
    pollfd p{fd, POLLIN, 0};
    const double left = seconds_left(deadline);
    if (left <= 0) return ReadEnd::timed_out;
    if (poll(&p, 1, int(std::min(left * 1000 + 1, 100.0))) <= 0) continue;
    const ssize_t n = read(fd, bytes, size);
    if (n == 0) return ReadEnd::closed;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ReadEnd::closed;
    }
    bytes += n, size -= size_t(n);
  }
  return ReadEnd::ok;
}

}  // namespace

dataset::Safetensors ExternalCommand::call_persistent(const std::vector<uint8_t>& request, const std::string& op,
                                                     double timeout) {
  const std::string log = (fs::path(dir_) / "stderr.txt").string();
  Child& child = server_->child;
  if (child.pid <= 0) {
    std::error_code ec;
    fs::remove(log, ec);
    ++stats_.starts;
    child = spawn(command_ + " --persistent", log, true);
  } else {
    // Only this call's lines in the report.
    if (FILE* f = std::fopen(log.c_str(), "w")) std::fclose(f);
  }
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
  const auto failed = [&](const std::string& what) {
    // The process is gone or out of step: end it (a fresh one takes the next call).
    // A command that closed its output is usually exiting: give it a moment to say how.
    bool alive = true;
    for (int i = 0; i < 50 && alive; ++i) {
      siginfo_t info{};
      alive = waitid(P_PID, id_t(child.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
      if (alive && Clock::now() < deadline && i < 49) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (Clock::now() >= deadline) break;
    }
    const Ending end = finish(child, alive);
    const std::string how = alive ? "was still running: killed with its process group" : end.text();
    const std::string message = fmt::format("persistent external command {} on op {} ({:.1f} s allowed); it {}\n{}",
                                            what, op, timeout, how, stderr_tail());
    if (!alive && end.exited && end.code != 0) throw ExitedWithStatus(message);
    throw std::runtime_error(message);
  };
  std::vector<uint8_t> frame;
  put_u64(frame, request.size());
  frame.insert(frame.end(), request.begin(), request.end());
  if (!write_all(child.to_child, frame.data(), frame.size(), deadline)) failed("stopped reading its input");
  uint8_t header[8];
  ReadEnd r = read_all(child.from_child, header, 8, deadline);
  if (r != ReadEnd::ok) failed(r == ReadEnd::timed_out ? "did not answer in time" : "closed its output");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = length << 8 | header[i];
  // An answer holds the outputs, which the request carried as buffers: it cannot be much larger.
  const uint64_t bound = 4 * uint64_t(request.size()) + (1 << 20);
  if (length > bound) failed(fmt::format("announced an answer of {} bytes (at most {} expected)", length, bound));
  std::vector<uint8_t> answer(size_t(length), 0);
  r = read_all(child.from_child, answer.data(), answer.size(), deadline);
  if (r != ReadEnd::ok) failed(r == ReadEnd::timed_out ? "did not finish its answer in time" : "closed its output");
  dataset::Safetensors reply;
  try {
    reply = dataset::parse_safetensors(answer, "the answer");
  } catch (const InvalidInput& e) {
    failed(std::string("wrote a malformed answer: ") + e.what());
  }
  const auto status = reply.metadata.find("status");
  if (status != reply.metadata.end() && status->second == "unsupported")
    throw Unsupported(fmt::format("{} does not take {}", command_, op));
  if (status != reply.metadata.end() && status->second != "ok") {
    const auto message = reply.metadata.find("message");
    throw std::runtime_error(fmt::format("persistent external command answered status '{}' on op {}: {}\n{}",
                                         excerpt(status->second), op,
                                         message == reply.metadata.end() ? "" : excerpt(message->second, 2000),
                                         stderr_tail()));
  }
  return reply;
}

std::optional<std::string> ExternalCommand::describe() {
  dataset::Safetensors request;
  request.metadata = {{"schema", std::string(dataset::kGoldenSchema)}, {"op", "describe"}};
  try {
    const dataset::Safetensors answer = call(request);
    const auto it = answer.metadata.find("contract");
    if (it != answer.metadata.end()) return it->second;
  } catch (const Unsupported&) {
  } catch (const Interrupted&) {
    throw;
  } catch (const std::runtime_error& e) {
    // A command that does not know `describe` may fail on it: it declares nothing, and its
    // first real calls say whether it runs at all (setup_error).
    const std::string what = e.what();
    describe_failure_ = what.substr(0, what.find('\n'));
  }
  return std::nullopt;
}

std::optional<std::string> ExternalCommand::setup_error() const {
  if (stats_.first_call.empty() || stats_.answered > 0) return std::nullopt;
  for (const auto& [op, bad] : stats_.first_call_failed)
    if (!bad) return std::nullopt;
  const auto& [op, what] = *stats_.first_call.begin();
  return fmt::format("external command '{}' failed on its first call of every op it was given ({} op{}); is it "
                     "installed and runnable? Its first call, op {}:\n{}",
                     command_, stats_.first_call.size(), stats_.first_call.size() == 1 ? "" : "s", op, what);
}

bool ExternalCommand::keep_last_failed(const std::string& path) const {
  if (last_failed_.empty()) return false;
  dataset::write_file_atomically(path, last_failed_);
  return true;
}

std::unique_ptr<IndexerOps> make_external_ops(std::shared_ptr<ExternalCommand> command) {
  if (!command) throw InvalidInput("impl", "no external command");
  const std::string name = "external:" + command->command();
  return make_exchange_ops(name, [command = std::move(command)](const dataset::Safetensors& r) { return command->call(r); });
}

std::unique_ptr<IndexerOps> make_external_ops(const std::string& command, const ExternalOptions& options) {
  return make_external_ops(std::make_shared<ExternalCommand>(command, options));
}

}  // namespace dsa::fuzz
