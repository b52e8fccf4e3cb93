// The one table of implementations under test: every implementation built
// into this binary, each once, with what a harness needs to drive and judge
// it. The fuzzer (`--impl NAME`), `dsa-oracle check --impl` and `run --impl`,
// the tests (the CI campaign list) and the benchmarks all read this table;
// no other list of implementation names exists. (An external command,
// `external:COMMAND` in the fuzzer, is the one implementation made at run
// time and is not in the table.)
//
// Adding an implementation is adding one entry in implementations.cpp; a
// CUDA or HIP entry goes under the CMake-defined macro of its library
// (DSA_WITH_CUDA, DSA_WITH_HIP), so that it is present only when built.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/contract.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::optimized {

// Where an implementation runs.
enum class Device : uint8_t { cpu, cuda, hip };
std::string_view to_string(Device device);

struct Implementation {
  std::string name;         // what --impl takes
  std::string description;  // one line
  Device device = Device::cpu;
  // The ops it takes, the profile whose arithmetic it claims ("" for the
  // reference, which takes any profile, and for selection-only
  // implementations) and the shapes of the calls it takes.
  Contract contract;
  std::function<std::unique_ptr<IndexerOps>()> make;
  // Whether it can run on this machine: a CPU entry always; a GPU entry only
  // when a device of its kind is present (it is in the table only when built).
  std::function<bool()> available = [] { return true; };

  bool takes(Op op) const { return contract.takes(op); }
};

// Every entry, the reference first, in a fixed order.
const std::vector<Implementation>& implementations();
// Throws InvalidInput("impl", ...) listing the names for an unknown one.
const Implementation& find_implementation(std::string_view name);
std::vector<std::string> implementation_names();
// The entries that take `op`, in table order.
std::vector<const Implementation*> implementations_taking(Op op);

}  // namespace dsa::optimized
