// The dump reader and checker: every record recomputed with its model's trait.
#include "dsa/mma/dump_check.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "dsa/checked.hpp"
#include "dsa/error.hpp"
#include "dsa/input_file.hpp"
#include "lanes.hpp"

namespace dsa::mma {
namespace {

using detail::DecodedVector;
using detail::ZeroOperands;

int chain_steps(Model model, const DumpLayout& l) { return l.k / instruction_k(model); }

int fp32_arrays(Model model, DumpFormat format, const DumpLayout& l) {
  return format == DumpFormat::single ? 2 : 3 + chain_steps(model, l);
}

std::vector<uint8_t> read_file(const std::string& path) { return read_input_file(path, "file"); }

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

bool same_output(float expected, float got, bool nan_bits_exact) {
  if (!nan_bits_exact && (std::isnan(expected) || std::isnan(got))) return std::isnan(expected) && std::isnan(got);
  return std::bit_cast<uint32_t>(expected) == std::bit_cast<uint32_t>(got);
}

// A record's fields, located once.
struct Record {
  const uint8_t* a;
  const uint8_t* a_scales;  // MXFP4 only
  const uint8_t* b;
  const uint8_t* b_scales;
  std::vector<float> arrays;  // [array][m][n]
  int mode;
  bool use_c;
};

template <class T>
struct Decoded {
  std::vector<DecodedVector> rows_a, rows_b;
  void decode(const Record& r, const DumpLayout& l, ZeroOperands zeros) {
    rows_a.resize(size_t(l.m));
    rows_b.resize(size_t(l.n));
    const size_t cb = size_t(l.code_bytes()), sb = size_t(l.scale_bytes());
    for (int i = 0; i < l.m; ++i)
      detail::decode_lanes<T>(r.a + i * cb, sb ? r.a_scales + i * sb : nullptr, l.k, rows_a[size_t(i)], zeros);
    for (int j = 0; j < l.n; ++j)
      detail::decode_lanes<T>(r.b + j * cb, sb ? r.b_scales + j * sb : nullptr, l.k, rows_b[size_t(j)], zeros);
  }
};

// The chain's value after every step, from c (use_c) or from zero.
template <class T>
void run_steps(const DecodedVector& a, const DecodedVector& b, int steps, float c, bool use_c, float* after) {
  const detail::Lanes la = a.lanes(), lb = b.lanes();
  float acc = c;
  for (int s = 0; s < steps; ++s) {
    acc = detail::step_with_nan<T>(la, lb, a.slice_has_nan[size_t(s)] || b.slice_has_nan[size_t(s)], s * T::kK, acc,
                                   use_c);
    use_c = true;
    after[s] = acc;
  }
}

// Every output of one (m, n) element, named, in the order of the record's arrays.
template <class T>
void outputs(DumpFormat format, const DumpLayout& l, const Decoded<T>& d, int i, int j, float c, bool use_c,
             std::vector<float>& out) {
  const DecodedVector &a = d.rows_a[size_t(i)], &b = d.rows_b[size_t(j)];
  if (format == DumpFormat::single) {
    out.resize(1);
    run_steps<T>(a, b, 1, c, use_c, out.data());
    return;
  }
  const int steps = l.k / T::kK;
  out.resize(size_t(2 + steps));  // Dc, D0, Ds[steps]
  run_steps<T>(a, b, steps, c, use_c, out.data() + 2);
  out[0] = out[size_t(2 + steps - 1)];
  std::vector<float> from_zero(static_cast<size_t>(steps));
  run_steps<T>(a, b, steps, 0.0f, false, from_zero.data());
  out[1] = from_zero.back();
}

std::vector<std::string> output_names(Model model, DumpFormat format, const DumpLayout& l) {
  if (format == DumpFormat::single) return {"D"};
  std::vector<std::string> names{"Dc", "D0"};
  for (int s = 0; s < chain_steps(model, l); ++s) names.push_back("Ds" + std::to_string(s));
  return names;
}

// Recomputes every record of r (located at `begin`), tallying into r.
template <class T>
void check_records(const std::vector<uint8_t>& bytes, size_t begin, const DumpCheckOptions& options, DumpCheck& r) {
  const DumpLayout& l = r.layout;
  const int64_t rb = l.record_bytes(r.model, r.format);
  const int arrays = fp32_arrays(r.model, r.format, l);
  const std::vector<std::string> names = output_names(r.model, r.format, l);
  const size_t mn = size_t(l.m) * size_t(l.n);
  const size_t cb = size_t(l.code_bytes()), sb = size_t(l.scale_bytes());

  Decoded<T> ours, mmasim;
  Record rec;
  std::vector<float> got, alt;
  for (int64_t t = 0; t < r.records; ++t) {
    const uint8_t* p = bytes.data() + begin + size_t(t * rb);
    rec.a = p;
    rec.a_scales = rec.a + size_t(l.m) * cb;
    rec.b = rec.a_scales + size_t(l.m) * sb;
    rec.b_scales = rec.b + size_t(l.n) * cb;
    const uint8_t* f = rec.b_scales + size_t(l.n) * sb;
    rec.arrays.resize(size_t(arrays) * mn);
    std::memcpy(rec.arrays.data(), f, rec.arrays.size() * 4);
    const uint8_t* trailer = f + rec.arrays.size() * 4;
    rec.mode = l.has_mode ? load<int32_t>(trailer) : int(t % 4);
    rec.use_c = !l.has_scale_d || load<int32_t>(trailer + 4) != 0;
    ours.decode(rec, l, ZeroOperands::no_term);
    if (options.zero_convention_apart) mmasim.decode(rec, l, ZeroOperands::exponent_m126);

    for (int i = 0; i < l.m; ++i)
      for (int j = 0; j < l.n; ++j) {
        const size_t ij = size_t(i) * l.n + j;
        const float c = rec.arrays[ij];
        outputs<T>(r.format, l, ours, i, j, c, rec.use_c, got);
        if (options.zero_convention_apart) outputs<T>(r.format, l, mmasim, i, j, c, rec.use_c, alt);
        for (size_t o = 0; o < got.size(); ++o) {
          const float expected = rec.arrays[(1 + o) * mn + ij];
          const bool match = same_output(expected, got[o], options.nan_bits_exact);
          if (!match && options.zero_convention_apart && !same_output(alt[o], got[o], options.nan_bits_exact) &&
              same_output(expected, alt[o], options.nan_bits_exact)) {
            ++r.zero_convention;
            continue;
          }
          for (OutputTally* tally : {&r.total, &r.by_mode[rec.mode], &r.by_output[names[o]]}) {
            ++tally->total;
            tally->matched += match;
          }
          if (!match && int(r.mismatches.size()) < options.max_mismatches)
            r.mismatches.push_back(
                {t, rec.mode, i, j, names[o], std::bit_cast<uint32_t>(expected), std::bit_cast<uint32_t>(got[o])});
        }
      }
  }
}

void require_instruction(Model m) {
  if (m == Model::exact) throw InvalidInput("model", "exact is not an instruction: it has no dumps");
}

}  // namespace

std::string_view to_string(DumpFormat f) { return f == DumpFormat::single ? "single" : "chain"; }

DumpFormat parse_dump_format(std::string_view name) {
  if (name == "single") return DumpFormat::single;
  if (name == "chain") return DumpFormat::chain;
  throw InvalidInput("format", "unknown dump format '" + std::string(name) + "' (known: single, chain)");
}

int64_t DumpLayout::code_bytes() const { return operands == Operands::mxfp4 ? k / 2 : k; }
int64_t DumpLayout::scale_bytes() const { return operands == Operands::mxfp4 ? k / detail::kMxfp4Block : 0; }

int64_t DumpLayout::record_bytes(Model model, DumpFormat format) const {
  // m, n and k may come from a file's header: no size computed from them may wrap.
  const int64_t row = checked_add<int64_t>(code_bytes(), scale_bytes(), "record bytes");
  const int64_t operand_bytes = checked_mul<int64_t>(checked_add<int64_t>(m, n, "m + n"), row, "record bytes");
  const int64_t cells = checked_mul<int64_t>(m, n, "m x n");
  const int64_t floats = checked_mul<int64_t>(
      checked_mul<int64_t>(fp32_arrays(model, format, *this), cells, "record bytes"), 4, "record bytes");
  return checked_add<int64_t>(checked_add<int64_t>(operand_bytes, floats, "record bytes"),
                              (has_mode ? 4 : 0) + (has_scale_d ? 4 : 0) + trailing_bytes, "record bytes");
}

DumpLayout headerless_layout(Model model, DumpFormat format) {
  require_instruction(model);
  DumpLayout l;
  detail::with_model(model, [&](auto trait) {
    using T = decltype(trait);
    l.m = T::kDump.m, l.n = T::kDump.n, l.k = T::kK, l.operands = T::kOperands;
    l.has_mode = T::kDump.trailer != detail::DumpTrailer::none;
    l.has_scale_d = T::kDump.trailer == detail::DumpTrailer::mode_scale_d;
  });
  if (format == DumpFormat::chain) {
    // The H200 wgmma chain layout (K = 128, mode, 4 bytes of padding) with the
    // instruction's own M and N (the probes' mma.sync chains: m16 n8).
    l.k = 128, l.has_mode = true, l.has_scale_d = false, l.trailing_bytes = 4;
  }
  return l;
}

DumpCheckOptions default_check_options(Model model) {
  DumpCheckOptions o;
  if (model != Model::exact)
    o.zero_convention_apart = detail::with_model(model, [](auto trait) { return decltype(trait)::kZeroOperandsApart; });
  return o;
}

std::optional<Model> dump_header_model(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw InvalidInput("file", "'" + path + "' is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput("file", "'" + path + "' cannot be opened");
  DumpHeader h{};
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  if (in.gcount() < std::streamsize(sizeof h) || std::memcmp(h.magic, DumpHeader::kMagic, sizeof h.magic) != 0)
    return std::nullopt;
  return parse_model(std::string(h.model, strnlen(h.model, sizeof h.model)));
}

DumpCheck check_dump(const std::string& path, std::optional<Model> model_arg, std::optional<DumpFormat> format_arg,
                     std::optional<DumpCheckOptions> options_arg) {
  const std::vector<uint8_t> bytes = read_file(path);
  DumpCheck r;
  r.file = path;
  size_t begin = 0;
  r.has_header = bytes.size() >= sizeof(DumpHeader::kMagic) &&
                 std::memcmp(bytes.data(), DumpHeader::kMagic, sizeof(DumpHeader::kMagic)) == 0;
  if (r.has_header) {
    if (bytes.size() < sizeof(DumpHeader)) throw InvalidInput("file", "'" + path + "': truncated header");
    const auto h = load<DumpHeader>(bytes.data());
    if (h.header_bytes < sizeof(DumpHeader) || h.header_bytes > bytes.size())
      throw InvalidInput("file", "'" + path + "': header_bytes " + std::to_string(h.header_bytes) + " is out of range");
    if (h.format > 1) throw InvalidInput("file", "'" + path + "': unknown format " + std::to_string(h.format));
    const std::string name(h.model, strnlen(h.model, sizeof h.model));
    r.model = parse_model(name);
    r.format = h.format == 0 ? DumpFormat::single : DumpFormat::chain;
    if (model_arg && *model_arg != r.model)
      throw InvalidInput("model", std::string(to_string(*model_arg)) + " given, but '" + path + "' holds " + name);
    if (format_arg && *format_arg != r.format)
      throw InvalidInput("format", std::string(to_string(*format_arg)) + " given, but '" + path + "' holds " +
                                       std::string(to_string(r.format)));
    require_instruction(r.model);
    const int ik = instruction_k(r.model);
    if (h.m == 0 || h.n == 0 || h.m > 4096 || h.n > 4096 || h.k == 0 || h.k > 65536 ||
        (r.format == DumpFormat::single ? h.k != uint32_t(ik) : h.k % uint32_t(ik) != 0))
      throw InvalidInput("file", "'" + path + "': bad shape m " + std::to_string(h.m) + " n " + std::to_string(h.n) +
                                     " k " + std::to_string(h.k) + " for " + name);
    r.layout.m = int(h.m), r.layout.n = int(h.n), r.layout.k = int(h.k);
    r.layout.operands = operands(r.model);
    r.layout.has_mode = true;
    r.layout.has_scale_d = r.format == DumpFormat::single;
    r.layout.trailing_bytes = r.format == DumpFormat::chain ? 4 : 0;
    begin = h.header_bytes;
    const uint64_t rb = uint64_t(r.layout.record_bytes(r.model, r.format));
    // A count so large that count x record bytes wraps must not pass as the file's size.
    uint64_t want = 0;
    try {
      want = checked_mul<uint64_t>(h.count, rb, "count");
    } catch (const InvalidInput& e) {
      throw InvalidInput("file", "'" + path + "': header " + e.what());
    }
    if (bytes.size() - begin != want)
      throw InvalidInput("file", "'" + path + "': " + std::to_string(bytes.size() - begin) +
                                     " bytes of records, but the header says " + std::to_string(h.count) +
                                     " records of " + std::to_string(rb));
    r.records = int64_t(h.count);
  } else {
    if (!model_arg) throw InvalidInput("model", "'" + path + "' has no header: give the model");
    r.model = *model_arg;
    r.format = format_arg.value_or(DumpFormat::single);
    r.layout = headerless_layout(r.model, r.format);
    const int64_t rb = r.layout.record_bytes(r.model, r.format);
    if (bytes.size() % uint64_t(rb) != 0)
      throw InvalidInput("file", "'" + path + "' has " + std::to_string(bytes.size()) +
                                     " bytes, not a whole number of " + std::string(to_string(r.model)) + " " +
                                     std::string(to_string(r.format)) + " records of " + std::to_string(rb) + " bytes");
    r.records = int64_t(bytes.size()) / rb;
  }
  const DumpCheckOptions options = options_arg.value_or(default_check_options(r.model));
  detail::with_model(r.model, [&](auto trait) { check_records<decltype(trait)>(bytes, begin, options, r); });
  return r;
}

}  // namespace dsa::mma
