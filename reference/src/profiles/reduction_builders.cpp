// The parts profiles compose their head sums from (profile.hpp, namespace reduce).
#include <string>

#include "dsa/error.hpp"
#include "dsa/profile.hpp"

namespace dsa::reduce {
namespace {

using Op = ReduceStep::Op;

int32_t emit(std::vector<ReduceStep>& prog, int32_t& next_reg, Op op, int32_t a, int32_t b, int head) {
  const int32_t dst = next_reg++;
  prog.push_back({op, dst, a, b, head});
  return dst;
}

void require_heads(const std::vector<int>& heads, size_t at_least, const char* builder) {
  if (heads.size() < at_least)
    throw InvalidInput("heads", std::string(builder) + " needs at least " + std::to_string(at_least) + " heads, got " +
                                    std::to_string(heads.size()));
}

}  // namespace

int32_t product(std::vector<ReduceStep>& prog, int32_t& next_reg, int head) {
  return emit(prog, next_reg, Op::product, -1, -1, head);
}

int32_t fma_chain_from_zero(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads) {
  int32_t acc = emit(prog, next_reg, Op::zero, -1, -1, -1);
  for (int h : heads) acc = emit(prog, next_reg, Op::fma, acc, -1, h);
  return acc;
}

int32_t fma_chain_from_product(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads) {
  require_heads(heads, 1, "fma_chain_from_product");
  int32_t acc = product(prog, next_reg, heads[0]);
  for (size_t i = 1; i < heads.size(); ++i) acc = emit(prog, next_reg, Op::fma, acc, -1, heads[i]);
  return acc;
}

int32_t fma_chain_from_pair(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads) {
  require_heads(heads, 2, "fma_chain_from_pair");
  // The second head's product is the one rounded; the first is fused onto it.
  int32_t acc = product(prog, next_reg, heads[1]);
  acc = emit(prog, next_reg, Op::fma, acc, -1, heads[0]);
  for (size_t i = 2; i < heads.size(); ++i) acc = emit(prog, next_reg, Op::fma, acc, -1, heads[i]);
  return acc;
}

int32_t mul_add_chain(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads) {
  require_heads(heads, 1, "mul_add_chain");
  int32_t acc = product(prog, next_reg, heads[0]);
  for (size_t i = 1; i < heads.size(); ++i) acc = add(prog, next_reg, acc, product(prog, next_reg, heads[i]));
  return acc;
}

int32_t add(std::vector<ReduceStep>& prog, int32_t& next_reg, int32_t a, int32_t b) {
  return emit(prog, next_reg, Op::add, a, b, -1);
}

int32_t scale(std::vector<ReduceStep>& prog, int32_t& next_reg, int32_t a) {
  return emit(prog, next_reg, Op::scale, a, -1, -1);
}

int32_t butterfly(std::vector<ReduceStep>& prog, int32_t& next_reg, std::vector<int32_t> lanes,
                  const std::vector<int>& distances) {
  const size_t n = lanes.size();
  if (n == 0) throw InvalidInput("lanes", "a butterfly over no lanes");
  for (int d : distances)
    if (d <= 0) throw InvalidInput("distances", "butterfly distance " + std::to_string(d));
  for (int d : distances) {
    std::vector<int32_t> next(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t j = i ^ size_t(d);
      if (j >= n) throw InvalidInput("distances", "lane " + std::to_string(i) + " has no partner at distance " +
                                                      std::to_string(d));
      // Both lanes of a pair get the same sum (IEEE addition commutes), so it is
      // emitted once; steps no lane-0 result needs are dropped by the evaluator.
      if (i < j) next[i] = next[j] = add(prog, next_reg, lanes[i], lanes[j]);
    }
    lanes = std::move(next);
  }
  return lanes[0];
}

}  // namespace dsa::reduce
