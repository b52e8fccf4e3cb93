// The table of implementations (implementations.hpp): one entry each.
#include "dsa/optimized/implementations.hpp"

#include <set>

#include "dsa/error.hpp"
#include "dsa/optimized/compact_candidates.hpp"
#include "dsa/optimized/persistent_topk.hpp"
#include "dsa/optimized/radix_topk.hpp"

namespace dsa::optimized {
namespace {

using Factory = std::function<std::unique_ptr<IndexerOps>()>;

bool always() { return true; }

Implementation entry(std::string name, std::string description, Device device, Contract contract, Factory make,
                     std::function<bool()> available = always) {
  Implementation e;
  e.name = std::move(name);
  e.description = std::move(description);
  e.device = device;
  e.contract = std::move(contract);
  e.make = std::move(make);
  e.available = std::move(available);
  return e;
}

// A contract of these ops and "anything" for every other clause.
Contract ops(std::set<Op> taken) {
  Contract c;
  c.ops = std::move(taken);
  return c;
}

std::vector<Implementation> build_table() {
  std::vector<Implementation> table;
  const std::vector<Op> all = all_ops();
  table.push_back(entry("reference", "the bit-exact CPU reference: every op, under any profile", Device::cpu,
                        ops({all.begin(), all.end()}), [] { return make_reference_ops(); }));
  table.push_back(entry("cpu_radix_topk",
                        "CPU twin of vLLM top_k_per_row (fp16 coarse pass, then fp32 radix passes into a bounded buffer)",
                        Device::cpu, ops({Op::topk}), [] { return make_cpu_radix_topk(); }));
  table.push_back(entry("cpu_persistent_topk",
                        "CPU twin of vLLM persistent_topk (persistent blocks, filtered and radix paths)", Device::cpu,
                        ops({Op::topk}), [] { return make_cpu_persistent_topk(); }));
  // Its logits copy whatever profile it is given (the reference's arithmetic
  // on the staged candidate pages), so it claims no single profile.
  table.push_back(entry("cpu_compact_candidates",
                        "CPU twin of the consumer layers' compact-candidate path (logits at candidate columns only)",
                        Device::cpu,
                        ops({Op::compact_candidate_logits, Op::candidate_topk, Op::candidate_logits_top_k}),
                        [] { return make_cpu_compact_candidates(); }));
  // GPU entries go here, each under its library's macro:
  //   #if defined(DSA_WITH_CUDA)
  //   table.push_back(entry("cuda_...", "...", Device::cuda, contract, [] { return cuda::make_...(); },
  //                         cuda::device_present));
  //   #endif
  std::set<std::string> names;
  for (const Implementation& entry : table)
    if (!names.insert(entry.name).second) throw std::logic_error("implementation '" + entry.name + "' listed twice");
  return table;
}

}  // namespace

std::string_view to_string(Device device) {
  switch (device) {
    case Device::cpu: return "cpu";
    case Device::cuda: return "cuda";
    case Device::hip: return "hip";
  }
  return "unknown";
}

const std::vector<Implementation>& implementations() {
  static const std::vector<Implementation> table = build_table();
  return table;
}

const Implementation& find_implementation(std::string_view name) {
  for (const Implementation& entry : implementations())
    if (entry.name == name) return entry;
  std::string known;
  for (const Implementation& entry : implementations()) known += (known.empty() ? "" : ", ") + entry.name;
  throw InvalidInput("impl", "unknown implementation '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> implementation_names() {
  std::vector<std::string> names;
  for (const Implementation& entry : implementations()) names.push_back(entry.name);
  return names;
}

std::vector<const Implementation*> implementations_taking(Op op) {
  std::vector<const Implementation*> taking;
  for (const Implementation& entry : implementations())
    if (entry.takes(op)) taking.push_back(&entry);
  return taking;
}

}  // namespace dsa::optimized
