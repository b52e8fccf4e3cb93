// The temporary files of atomic writes (`.NAME.tmp.PID` beside NAME): while
// one is open it is registered, so that a SIGINT/SIGTERM handler can remove
// it (remove_registered_temp_files is async-signal-safe); one left by a
// killed run (SIGKILL, a power cut) is found by the next run into that folder.
#pragma once

#include <string>
#include <vector>

namespace dsa::dataset {

// `.NAME.tmp.PID` in NAME's folder, this process's PID.
std::string temp_file_for(const std::string& target);

// At most a few files at once (writes are sequential); a full registry is not
// an error, the file is then only removed by the write's own error path.
void register_temp_file(const std::string& path) noexcept;
void unregister_temp_file(const std::string& path) noexcept;
// Unlinks every registered file. Async-signal-safe.
void remove_registered_temp_files() noexcept;

// Temporary files `.NAME.tmp.PID` in `folder` whose PID is no live process:
// removed; returns their names (for the run to say so).
std::vector<std::string> remove_stale_temp_files(const std::string& folder);

// Before any work: `path` can be written as a file (not a folder, and its
// folder exists and is writable). Throws InvalidInput(argument, ...) naming the path.
void require_writable_file(const std::string& path, const std::string& argument);
// The same for a folder a run writes into (created if missing).
void require_writable_folder(const std::string& folder, const std::string& argument);

}  // namespace dsa::dataset
