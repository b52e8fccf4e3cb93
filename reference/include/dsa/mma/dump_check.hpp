// Checking the matrix-unit models against dumps of real instructions
// (H200) or of a published simulator (MMA-Sim), record by record.
//
// Headerless dumps are read exactly as ../shared/data/README.md describes them;
// the model and the format fix the record layout. Dumps of our own may start
// with a header (DumpHeader) that names the model, the shape and the record
// count; docs/matrix-unit-models.md documents both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/mma/models.hpp"

namespace dsa::mma {

enum class DumpFormat : uint8_t {
  single,  // one instruction per output: A, B, C, D
  chain,   // a K-long chain per output: A, B, C, Dc (from C), D0 (from zero), Ds[step] (from C)
};
std::string_view to_string(DumpFormat f);
DumpFormat parse_dump_format(std::string_view name);  // throws InvalidInput("format", ...)

// One record: A's codes, A's scales (MXFP4 only), B's codes, B's scales, then
// fp32 arrays [m][n] (C, D for single; C, Dc, D0, Ds[k / instruction_k] for
// chain), then the trailer. An fp8 row is k codes; an MXFP4 row is k / 2 bytes
// of e2m1 pairs (low nibble = even k), its scales k / 32 ue8m0 codes.
struct DumpLayout {
  int m = 0, n = 0, k = 0;  // k: the instruction's K (single) or the chain's K (chain)
  Operands operands = Operands::e4m3fn;
  bool has_mode = true;         // an i32 mode after the arrays (else mode = record index % 4)
  bool has_scale_d = false;     // an i32 scale_d after the mode (0: C is ignored)
  int trailing_bytes = 0;       // padding after the mode (and scale_d)
  int64_t code_bytes() const;   // of one row of A or B
  int64_t scale_bytes() const;  // of one row's scales (0 for fp8)
  int64_t record_bytes(Model model, DumpFormat format) const;
};

// The layout of the headerless dumps (../shared/data/README.md) for a model and format.
DumpLayout headerless_layout(Model model, DumpFormat format);

// The header of our own dumps: 80 bytes, little-endian; records follow at
// header_bytes. Their records end with two i32: mode, then scale_d (single;
// 0 means C is ignored) or 0 (chain).
struct DumpHeader {
  static constexpr char kMagic[8] = {'D', 'S', 'A', 'M', 'M', 'A', '0', '1'};
  char magic[8];
  uint32_t header_bytes;  // 80 in this version; readers skip to it
  uint32_t format;        // 0 single, 1 chain
  char model[32];         // the model name (models.hpp), NUL-padded
  uint32_t m, n, k;
  uint32_t flags;  // 0 (reserved)
  uint64_t count;  // records
  uint64_t reserved;
};
static_assert(sizeof(DumpHeader) == 80);

struct OutputTally {
  int64_t matched = 0;
  int64_t total = 0;
};

struct DumpMismatch {
  int64_t record = 0;
  int mode = 0;
  int m = 0, n = 0;
  std::string output;  // "D", "Dc", "D0", "Ds0", ...
  uint32_t expected_bits = 0, got_bits = 0;
};

struct DumpCheckOptions {
  // Judge apart the outputs decided by MMA-Sim's zero-operand convention (a zero
  // operand has exponent -126; NUMERICS "Zero operands"). Default: on for the
  // models whose dumps come from MMA-Sim (tcgen05, CDNA3), off for the H200's.
  bool zero_convention_apart = false;
  // NaN matches NaN whatever its bits (the agreed rule) unless this is set:
  // then a NaN must have the dump's bits too.
  bool nan_bits_exact = false;
  int max_mismatches = 10;
};
DumpCheckOptions default_check_options(Model model);

struct DumpCheck {
  std::string file;
  Model model = Model::exact;
  DumpFormat format = DumpFormat::single;
  bool has_header = false;
  DumpLayout layout;
  int64_t records = 0;
  OutputTally total;  // every output not reported apart
  std::map<int, OutputTally> by_mode;
  std::map<std::string, OutputTally> by_output;
  // Outputs where the two zero-operand conventions differ and the dump holds
  // MMA-Sim's value: reported apart, not counted in total.
  int64_t zero_convention = 0;
  std::vector<DumpMismatch> mismatches;  // the first max_mismatches
  // No output was judged (no record, or every output reported apart): not a pass.
  bool checked_nothing() const { return total.total == 0; }
  bool passed() const { return !checked_nothing() && total.matched == total.total; }
};

// The model a dump's header names; nullopt for a headerless file. Throws
// InvalidInput for an unreadable file or a header naming an unknown model.
std::optional<Model> dump_header_model(const std::string& path);

// Recomputes every output of the dump at `path`. A headerless file needs the
// model (the format defaults to single); a file with a header names both, and
// a model or format given here must agree with it. options = nullopt takes
// default_check_options(model). Throws InvalidInput for an unreadable file, a
// size that is not a whole number of records, a bad header (a record count
// whose size overflows included), or Model::exact. An empty headerless file,
// or a header with count 0, is read as zero records (checked_nothing()).
DumpCheck check_dump(const std::string& path, std::optional<Model> model, std::optional<DumpFormat> format,
                     std::optional<DumpCheckOptions> options = std::nullopt);

}  // namespace dsa::mma
