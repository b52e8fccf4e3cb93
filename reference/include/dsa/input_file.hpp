// Reading a file named on the command line or in a manifest, whole: the one
// reader every input goes through, so that no path can hang the tool or
// exhaust its memory. A folder, a device (/dev/zero, /dev/stdin of a
// terminal) or a socket is refused by name; a pipe is read, like a file, only
// up to the memory bound (checked.hpp), and a regular file is refused up front
// when its size exceeds it.
//
// Header-only: the libFuzzer harnesses compile the readers from their sources.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "dsa/checked.hpp"
#include "dsa/error.hpp"

namespace dsa {

// The bytes of `path`; InvalidInput(argument, ...) naming the path and the problem.
inline std::vector<uint8_t> read_input_file(const std::string& path, const std::string& argument) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InvalidInput(argument, "'" + path + "' cannot be opened: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InvalidInput(argument, "'" + path + "' is a folder, not a file");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw InvalidInput(argument, "'" + path + "' is not a regular file (a device or a socket)");
  const uint64_t bound = memory_bound_bytes();
  if (S_ISREG(st.st_mode)) require_memory(argument, double(st.st_size), "reading '" + path + "'");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(argument, "'" + path + "' cannot be opened: " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(size_t(st.st_size));
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof chunk);
    bytes.insert(bytes.end(), chunk, chunk + in.gcount());
    if (bytes.size() > bound)
      require_memory(argument, double(bytes.size()), "reading '" + path + "' (a pipe that does not end?)");
  }
  if (in.bad()) throw InvalidInput(argument, "'" + path + "' cannot be read: " + std::strerror(errno));
  return bytes;
}

// The same, as text (JSON, a manifest, a contract).
inline std::string read_input_text(const std::string& path, const std::string& argument) {
  const std::vector<uint8_t> bytes = read_input_file(path, argument);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace dsa
