// Seeds and draws shared by the case builders (cases_*.cpp). Every array of a
// case comes from a stream keyed by (case seed, owner seed, purpose, index),
// so removing one row or request while shrinking leaves the others' data as it was.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "dsa/candidates.hpp"
#include "dsa/rng.hpp"

namespace dsa::fuzz::detail {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t mix(std::initializer_list<uint64_t> keys) {
  uint64_t h = 0x6A09E667F3BCC909ull;
  for (uint64_t k : keys) h = splitmix64(h ^ splitmix64(k));
  return h;
}

inline Rng stream(std::initializer_list<uint64_t> keys) { return Rng(mix(keys)); }

// Purposes of the streams (the third key).
enum Purpose : uint64_t {
  kValues = 1,
  kTail = 2,
  kCandidates = 3,
  kQuery = 4,
  kKeys = 5,
  kScales = 6,
  kWeights = 7,
  kPages = 8,
  kJunk = 9,
  kPermutation = 10,
  kPadded = 11,  // index rows of a padded step (the padding properties)
};

// A cheap bell-shaped draw (sum of four uniforms, unit variance): the
// fuzzer needs the shape, not Gaussian tails, and it is exact IEEE arithmetic.
inline double bell(Rng& rng) {
  const double s = rng.uniform01() + rng.uniform01() + rng.uniform01() + rng.uniform01();
  return (s - 2.0) * 1.7320508075688772;
}

// Distinct blocks of [0, num_blocks) for one candidate row ending at `end`:
// the newest block usually among them, some past the row, then the -1 tail.
void draw_candidate_row(int32_t* out, int32_t slots, int64_t num_blocks, int64_t end, int32_t block_size, Rng& rng);

// A case's candidate blocks: `rows` rows of `slots` over `width` columns in blocks of `block_size`, row r drawn
// by draw_candidate_row from the stream row_stream(r) (an Rng), ending at row_end(r).
template <class RowStream, class RowEnd>
CandidateBlocks draw_candidates(int64_t rows, int32_t slots, int32_t block_size, int64_t width, RowStream row_stream,
                                RowEnd row_end) {
  CandidateBlocks out;
  out.rows = rows;
  out.slots = slots;
  out.block_size = block_size;
  out.blocks.resize(size_t(rows) * size_t(slots));
  const int64_t num_blocks = (width + block_size - 1) / block_size;
  for (int64_t r = 0; r < rows; ++r) {
    Rng rng = row_stream(r);
    draw_candidate_row(out.row(r), slots, num_blocks, row_end(r), block_size, rng);
  }
  out.validate();
  return out;
}

}  // namespace dsa::fuzz::detail
