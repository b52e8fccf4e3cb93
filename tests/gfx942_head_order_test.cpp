// The head order of the gfx942 logits kernels, read from their code objects:
// where the compiler decides the order (the association of the head sum, the
// shuffles, the MFMA operands it feeds), a dataflow walk over the disassembly
// rebuilds the logit each kernel stores and compares it with the profile
// dsa_gfx942's program. A change of the source or of the compiler that
// reorders the sum fails here.
//
// The walk follows each operand to the nearest earlier instruction that
// writes it (the epilogue is straight-line code inside the token loop; the
// weights and constants are written before the loop).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dsa/gfx942/isa_report.hpp"
#include "dsa/profile.hpp"
#include "gfx942_test_support.hpp"

namespace dsa {
namespace {

struct Reg {
  char file = 0;  // 'v' or 'a'
  int lo = -1, hi = -1;
  bool covers(char f, int r) const { return f == file && r >= lo && r <= hi; }
};

std::optional<Reg> parse_reg(const std::string& s) {
  if (s.size() < 2 || (s[0] != 'v' && s[0] != 'a')) return std::nullopt;
  if (s[1] == '[') {
    const size_t colon = s.find(':'), close = s.find(']');
    if (colon == std::string::npos || close == std::string::npos) return std::nullopt;
    return Reg{s[0], std::stoi(s.substr(2, colon - 2)), std::stoi(s.substr(colon + 1, close - colon - 1))};
  }
  if (!std::all_of(s.begin() + 1, s.end(), ::isdigit)) return std::nullopt;
  return Reg{s[0], std::stoi(s.substr(1)), std::stoi(s.substr(1))};
}

struct Instr {
  std::string op;
  std::vector<std::string> args;
  std::vector<std::string> mods;  // offset:N and the like
};

Instr parse_instr(const std::string& text) {
  Instr in;
  const size_t sp = text.find(' ');
  in.op = text.substr(0, sp);
  if (sp == std::string::npos) return in;
  std::string rest = text.substr(sp + 1);
  size_t start = 0;
  while (start < rest.size()) {
    size_t comma = rest.find(',', start);
    std::string a = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    a.erase(0, a.find_first_not_of(' '));
    if (comma == std::string::npos) {  // the last operand carries the modifiers
      size_t m = a.find(' ');
      while (m != std::string::npos) {
        const size_t next = a.find(' ', m + 1);
        const std::string mod = a.substr(m + 1, next == std::string::npos ? std::string::npos : next - m - 1);
        if (!mod.empty()) in.mods.push_back(mod);
        a.erase(m, next == std::string::npos ? std::string::npos : next - m);
        m = a.find(' ');
      }
    }
    if (!a.empty()) in.args.push_back(a);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return in;
}

bool writes_vector_register(const Instr& in) {
  const std::string& m = in.op;
  if (m.rfind("s_", 0) == 0 || m.rfind("v_cmp", 0) == 0 || m.rfind("v_readfirstlane", 0) == 0) return false;
  if (m.find("store") != std::string::npos || m.rfind("ds_write", 0) == 0) return false;
  return !in.args.empty() && parse_reg(in.args[0]).has_value();
}

// A value in the walk: an instruction's result (element `element` of its destination) or a constant.
struct Node {
  std::string kind;  // the mnemonic, "const" or "undef"
  int at = -1, element = 0;
  std::string constant;
  std::vector<const Node*> ops;
  int offset = 0;  // loads: the offset modifier
};

class Walk {
public:
  explicit Walk(const std::vector<std::string>& text) {
    for (const std::string& t : text) code_.push_back(parse_instr(t));
  }
  const std::vector<Instr>& code() const { return code_; }

  // The value of operand text `arg` as read by instruction `at`.
  const Node* value(int at, const std::string& arg, int element = 0) {
    const std::optional<Reg> r = parse_reg(arg);
    if (!r) return constant(arg);
    const int reg = r->lo + element;
    for (int j = at - 1; j >= 0; --j) {
      if (!writes_vector_register(code_[size_t(j)])) continue;
      const Reg d = *parse_reg(code_[size_t(j)].args[0]);
      if (d.covers(r->file, reg)) return result(j, reg - d.lo);
    }
    return constant("undef:" + arg);
  }

  const Node* result(int j, int element) {
    const auto key = std::make_pair(j, element);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    auto n = std::make_unique<Node>();
    const Instr& in = code_[size_t(j)];
    n->kind = in.op;
    n->at = j;
    n->element = element;
    for (const std::string& m : in.mods)
      if (m.rfind("offset:", 0) == 0) n->offset = std::stoi(m.substr(7), nullptr, 0);
    const Node* raw = n.get();
    memo_[key] = raw;
    nodes_.push_back(std::move(n));
    Node* self = nodes_.back().get();
    const std::string& m = in.op;
    const bool load = m.rfind("global_load", 0) == 0;
    if (m.rfind("v_accvgpr_read", 0) == 0 || m.rfind("v_mov_b32", 0) == 0 || m.rfind("v_accvgpr_write", 0) == 0) {
      self->kind = "copy";
      self->ops = {value(j, in.args[1])};
    } else if (m.rfind("v_mfma", 0) == 0) {
      self->ops = {value(j, in.args[1]), value(j, in.args[2]), value(j, in.args[3], element)};
    } else if (!load) {
      for (size_t i = 1; i < in.args.size(); ++i) self->ops.push_back(value(j, in.args[i]));
    } else {
      for (size_t i = 1; i < in.args.size(); ++i) self->ops.push_back(constant(in.args[i]));
    }
    return raw;
  }

  const Node* constant(const std::string& text) {
    nodes_.push_back(std::make_unique<Node>());
    nodes_.back()->kind = "const";
    nodes_.back()->constant = text;
    return nodes_.back().get();
  }

private:
  std::vector<Instr> code_;
  std::map<std::pair<int, int>, const Node*> memo_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

const Node* through_copies(const Node* n) {
  while (n->kind == "copy") n = n->ops[0];
  return n;
}
bool is(const Node* n, const char* prefix) { return n->kind.rfind(prefix, 0) == 0; }
bool is_neg_inf(const Node* n) {
  n = through_copies(n);
  return n->kind == "const" && (n->constant == "0xff800000" || n->constant == "0xFF800000");
}

// The -inf select of masked columns is transparent to the order (inf + x = inf).
const Node* unmask(const Node* n) {
  n = through_copies(n);
  while (is(n, "v_cndmask_b32") && n->ops.size() >= 2 && (is_neg_inf(n->ops[0]) || is_neg_inf(n->ops[1]))) {
    n = through_copies(is_neg_inf(n->ops[0]) ? n->ops[1] : n->ops[0]);
  }
  return n;
}

// Integer value of an address operand for lane `lane` (lane id from v_mbcnt).
std::optional<int64_t> lane_value(const Node* n, int lane) {
  n = through_copies(n);
  if (n->kind == "const") {
    try {
      return std::stoll(n->constant, nullptr, 0);
    } catch (...) {
      return std::nullopt;
    }
  }
  std::vector<int64_t> v;
  for (const Node* o : n->ops) {
    const auto x = lane_value(o, lane);
    if (!x) return std::nullopt;
    v.push_back(*x);
  }
  const std::string& m = n->kind;
  if (m.rfind("v_mbcnt_lo_u32_b32", 0) == 0 && v.size() == 2 && v[0] == -1) return std::min(lane, 32) + v[1];
  if (m.rfind("v_mbcnt_hi_u32_b32", 0) == 0 && v.size() == 2 && v[0] == -1) return std::max(lane - 32, 0) + v[1];
  if (m.rfind("v_lshlrev_b32", 0) == 0 && v.size() == 2) return v[1] << v[0];
  if (m.rfind("v_xor_b32", 0) == 0 && v.size() == 2) return v[0] ^ v[1];
  if (m.rfind("v_and_b32", 0) == 0 && v.size() == 2) return v[0] & v[1];
  if (m.rfind("v_or_b32", 0) == 0 && v.size() == 2) return v[0] | v[1];
  if (m.rfind("v_add_u32", 0) == 0 && v.size() == 2) return v[0] + v[1];
  return std::nullopt;
}

// One term of the in-lane sum: weight * relu(dot * scale).
struct Term {
  int head_offset;  // the weight's offset from the lane's first weight, in heads
  const Node* accumulator;
};

std::optional<Term> as_term(const Node* n, std::string& why) {
  n = unmask(n);
  if (!is(n, "v_mul_f32")) return std::nullopt;
  for (int w = 0; w < 2; ++w) {
    const Node* weight = through_copies(n->ops[size_t(w)]);
    const Node* relu = unmask(n->ops[size_t(1 - w)]);
    if (!is(weight, "global_load") || !is(relu, "v_max_f32")) continue;
    const Node* zero = through_copies(relu->ops[0]);
    const Node* scaled = through_copies(relu->ops[1]);
    if (zero->kind != "const") std::swap(zero, scaled);
    if (zero->kind != "const" || zero->constant != "0" || !is(scaled, "v_mul_f32")) {
      why = "relu is not max(0, dot * scale)";
      return std::nullopt;
    }
    for (int a = 0; a < 2; ++a) {
      const Node* acc = through_copies(scaled->ops[size_t(a)]);
      if (is(acc, "v_mfma_f32_16x16x32_fp8_fp8")) return Term{weight->offset / 4 + weight->element, acc};
    }
    why = "a term's dot product is not an fp8 MFMA result";
    return std::nullopt;
  }
  return std::nullopt;
}

// What the disassembly says: the in-lane order of heads (relative to the
// lane's first head) and the shuffle distances, in lanes, outermost last.
struct StoredSum {
  std::vector<int> lane_heads;
  std::vector<int> distances;
  std::vector<const Node*> accumulators;
  std::string why;
};

StoredSum read_sum(Walk& walk, int store_at) {
  StoredSum out;
  const Instr& st = walk.code()[size_t(store_at)];
  const Node* n = unmask(walk.value(store_at, st.args[1]));
  // Shuffle steps: x + bpermute(x) (either operand order).
  while (is(n, "v_add_f32")) {
    const Node* a = unmask(n->ops[0]);
    const Node* b = unmask(n->ops[1]);
    if (is(a, "ds_bpermute_b32")) std::swap(a, b);
    if (!is(b, "ds_bpermute_b32") || unmask(b->ops[1]) != a) break;
    // Lane l reads lane src(l) / 4: a butterfly when src(l) / 4 = l ^ d for every lane.
    std::optional<int> distance;
    for (int lane = 0; lane < 64; ++lane) {
      const auto src = lane_value(b->ops[0], lane);
      const int d = src ? int(*src / 4) ^ lane : -1;
      if (!src || *src % 4 != 0 || (distance && d != *distance)) {
        out.why = "a shuffle that is not a butterfly over the lane id";
        return out;
      }
      distance = d;
    }
    out.distances.insert(out.distances.begin(), *distance);
    n = a;
  }
  // The in-lane chain: ((t0 + t1) + t2) + ...
  std::vector<Term> reversed;
  while (true) {
    if (!is(n, "v_add_f32")) {
      out.why = "the in-lane sum does not end in an add";
      return out;
    }
    const auto x = as_term(n->ops[0], out.why), y = as_term(n->ops[1], out.why);
    if (x && y) {
      // The first add: its two terms commute bit for bit; take the lower head first.
      reversed.push_back(x->head_offset < y->head_offset ? *y : *x);
      reversed.push_back(x->head_offset < y->head_offset ? *x : *y);
      break;
    }
    if (!x && !y) {
      if (out.why.empty()) out.why = "the in-lane sum is not a sequential chain";
      return out;
    }
    reversed.push_back(x ? *x : *y);
    n = unmask(x ? n->ops[1] : n->ops[0]);
  }
  for (auto it = reversed.rbegin(); it != reversed.rend(); ++it) {
    out.lane_heads.push_back(it->head_offset);
    out.accumulators.push_back(it->accumulator);
  }
  return out;
}

// The profile's head sum as a canonical string (adds commute bit for bit).
std::string canonical_program(const std::vector<ReduceStep>& prog) {
  std::map<int32_t, std::string> reg;
  for (const ReduceStep& s : prog) {
    switch (s.op) {
      case ReduceStep::Op::product: reg[s.dst] = std::to_string(s.head); break;
      case ReduceStep::Op::add: {
        const std::string a = reg[s.a], b = reg[s.b];
        reg[s.dst] = "(" + std::min(a, b) + "+" + std::max(a, b) + ")";
        break;
      }
      default: reg[s.dst] = "?";
    }
  }
  return reg[prog.back().dst];
}

// The stored sum of lane group 0 in the same form: group g holds heads 4g + offset.
std::string canonical_stored(const StoredSum& s, int group, size_t level) {
  if (level == 0) {
    std::string acc;
    for (size_t i = 0; i < s.lane_heads.size(); ++i) {
      const std::string h = std::to_string(s.lane_heads[i] + 4 * group);
      acc = i == 0 ? h : "(" + std::min(acc, h) + "+" + std::max(acc, h) + ")";
    }
    return acc;
  }
  const std::string a = canonical_stored(s, group, level - 1);
  const std::string b = canonical_stored(s, group ^ (s.distances[level - 1] / 16), level - 1);
  return "(" + std::min(a, b) + "+" + std::max(a, b) + ")";
}

TEST(Gfx942HeadOrder, StoredLogitIsTheProfilesHeadSum) {
  DSA_REQUIRE_GFX942();
  const Profile& profile = find_profile("dsa_gfx942");
  int checked = 0;
  for (const std::string& name : test::gfx942_code_objects()) {
    const auto functions = gfx942::parse_disassembly(test::gfx942_file(name + ".s"));
    for (const auto& [kernel, text] : functions) {
      if (kernel.find("logits") == std::string::npos) continue;
      SCOPED_TRACE(kernel);
      const int heads = kernel.size() > 4 && kernel.substr(kernel.size() - 3) == "h64" ? 64 : 32;
      Walk walk(text);
      int sums = 0;
      for (int i = 0; i < int(walk.code().size()); ++i) {
        if (walk.code()[size_t(i)].op != "global_store_dword") continue;
        const StoredSum s = read_sum(walk, i);
        if (s.lane_heads.empty()) continue;  // not a logit (top-k indices, counters)
        ++sums;
        ASSERT_EQ(s.why, "");
        ASSERT_EQ(s.lane_heads.size(), size_t(heads / 4));
        ASSERT_EQ(s.distances, (std::vector<int>{32, 16})) << "shuffles at lane distance 32, then 16";
        EXPECT_EQ(canonical_stored(s, 0, s.distances.size()), canonical_program(profile.build_reduction(heads)));
        // Each accumulator tuple (one MFMA chain) feeds the 4 heads of one 16-head tile, element i head 4g + i.
        for (size_t t = 0; t < s.accumulators.size(); ++t) {
          EXPECT_EQ(s.accumulators[t]->element, s.lane_heads[t] % 4);
          EXPECT_EQ(s.accumulators[t]->at, s.accumulators[t - t % 4]->at) << "heads of one tile from two chains";
        }
      }
      EXPECT_EQ(sums, 1) << "exactly one stored head sum per logits kernel";
      ++checked;
    }
  }
  EXPECT_GE(checked, 4);
}

// The MFMA chain of every tile: 4 instructions from zero, fed the dims as the
// profile's dim_order says: instruction 2c + half takes half `half` (8 bytes)
// of the 16-byte run c of the lane's dims, and run 1 lies 1024 bytes past run 0
// in the preshuffle cache (4 dim groups of 256 bytes).
TEST(Gfx942HeadOrder, MfmaChainsReadTheDimsInTheProfilesOrder) {
  DSA_REQUIRE_GFX942();
  int chains = 0;
  for (const std::string& name : test::gfx942_code_objects()) {
    for (const auto& [kernel, text] : gfx942::parse_disassembly(test::gfx942_file(name + ".s"))) {
      if (kernel.find("logits") == std::string::npos) continue;
      SCOPED_TRACE(kernel);
      Walk walk(text);
      for (int i = 0; i < int(walk.code().size()); ++i) {
        const Instr& in = walk.code()[size_t(i)];
        if (in.op != "v_mfma_f32_16x16x32_fp8_fp8") continue;
        // Chain ends: MFMAs whose result no later MFMA accumulates.
        bool accumulated = false;
        for (int j = i + 1; j < int(walk.code().size()) && !accumulated; ++j) {
          const Instr& next = walk.code()[size_t(j)];
          if (next.op == in.op && next.args[3] == in.args[0]) accumulated = walk.value(j, next.args[3])->at == i;
        }
        if (accumulated) continue;
        std::vector<const Node*> chain;
        for (const Node* n = walk.result(i, 0); is(n, "v_mfma"); n = through_copies(n->ops[2])) chain.insert(chain.begin(), n);
        ASSERT_EQ(chain.size(), 4u);
        const Node* first_c = through_copies(walk.result(chain[0]->at, 0)->ops[2]);
        EXPECT_TRUE(first_c->kind == "const" && first_c->constant == "0") << "the chain does not start from zero";
        const Node* run[2] = {nullptr, nullptr};
        for (int k = 0; k < 4; ++k) {
          const Node* key = through_copies(chain[size_t(k)]->ops[1]);
          ASSERT_TRUE(is(key, "global_load_dwordx4")) << "instruction " << k << ": the key operand is not a 16-byte load";
          EXPECT_EQ(key->element % 4, 2 * (k % 2)) << "instruction " << k << " does not take half " << k % 2;
          if (k % 2 == 0) run[k / 2] = key;
          else EXPECT_EQ(key->at, run[k / 2]->at) << "the two halves of a run come from two loads";
        }
        EXPECT_EQ(run[1]->offset - run[0]->offset, 1024) << "run 1 is not dims 64 + 16g of the lane's token";
        ++chains;
      }
    }
  }
  EXPECT_GE(chains, 2 * (2 + 4));
}

}  // namespace
}  // namespace dsa
