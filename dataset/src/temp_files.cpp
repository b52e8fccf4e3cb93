#include "dsa/dataset/temp_files.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "dsa/error.hpp"

namespace dsa::dataset {
namespace {

constexpr int kSlots = 16;
constexpr size_t kPathBytes = 4096;

// A slot is claimed (1), filled, then published (2); the handler reads only published slots.
struct Slot {
  std::atomic<int> state{0};
  char path[kPathBytes];
};
Slot slots[kSlots];

}  // namespace

std::string temp_file_for(const std::string& target) {
  const std::filesystem::path p(target);
  return (p.parent_path() / ("." + p.filename().string() + ".tmp." + std::to_string(::getpid()))).string();
}

void register_temp_file(const std::string& path) noexcept {
  if (path.size() >= kPathBytes) return;
  for (Slot& s : slots) {
    int free = 0;
    if (!s.state.compare_exchange_strong(free, 1)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.state.store(2);
    return;
  }
}

void unregister_temp_file(const std::string& path) noexcept {
  for (Slot& s : slots) {
    if (s.state.load() != 2 || path != s.path) continue;
    s.state.store(0);
    return;
  }
}

void remove_registered_temp_files() noexcept {
  for (Slot& s : slots)
    if (s.state.load() == 2) ::unlink(s.path);
}

std::vector<std::string> remove_stale_temp_files(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const size_t tmp = name.rfind(".tmp.");
    if (name.size() < 2 || name[0] != '.' || tmp == std::string::npos || !it->is_regular_file(ec)) continue;
    const std::string digits = name.substr(tmp + 5);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = pid_t(std::stol(digits));
    // Alive (or not ours to ask about): leave it to its writer.
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM) continue;
    std::error_code ignored;
    if (fs::remove(it->path(), ignored)) removed.push_back(name);
  }
  return removed;
}

void require_writable_file(const std::string& path, const std::string& argument) {
  namespace fs = std::filesystem;
  if (fs::is_directory(path)) throw InvalidInput(argument, "'" + path + "' is a folder, not a file");
  const fs::path folder = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!fs::is_directory(folder)) throw InvalidInput(argument, "'" + path + "': its folder " + folder.string() + " does not exist");
  if (::access(folder.c_str(), W_OK) != 0)
    throw InvalidInput(argument, "'" + path + "': its folder " + folder.string() + " is not writable");
  if (fs::exists(path) && ::access(path.c_str(), W_OK) != 0 && !fs::is_symlink(path))
    throw InvalidInput(argument, "'" + path + "' exists and is not writable");
}

void require_writable_folder(const std::string& folder, const std::string& argument) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(folder) && !fs::is_directory(folder)) throw InvalidInput(argument, "'" + folder + "' is a file, not a folder");
  fs::create_directories(folder, ec);
  if (!fs::is_directory(folder)) throw InvalidInput(argument, "cannot create folder '" + folder + "'");
  if (::access(folder.c_str(), W_OK) != 0) throw InvalidInput(argument, "folder '" + folder + "' is not writable");
}

}  // namespace dsa::dataset
