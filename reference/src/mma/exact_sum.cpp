#include "exact_sum.hpp"

#include <bit>

namespace dsa::mma::detail {

void ExactSum::add(int64_t sig, int exp) {
  if (sig == 0) return;
  const int pos = exp - kMinExp;
  const int limb = pos / 64, bit = pos % 64;
  // The term as a 128-bit two's complement value at `limb`, sign-extended above.
  const unsigned __int128 wide = (unsigned __int128)(__int128(sig)) << bit;
  const uint64_t extension = sig < 0 ? ~uint64_t{0} : 0;
  unsigned __int128 carry = 0;
  for (int i = limb; i < kLimbs; ++i) {
    const uint64_t word = i == limb ? uint64_t(wide) : i == limb + 1 ? uint64_t(wide >> 64) : extension;
    const unsigned __int128 s = (unsigned __int128)(limbs_[i]) + word + carry;
    limbs_[i] = uint64_t(s);
    carry = s >> 64;
  }
}

bool ExactSum::is_zero() const {
  for (uint64_t w : limbs_)
    if (w) return false;
  return true;
}

float ExactSum::round(Rounding mode, int precision) const {
  if (is_zero()) return 0.0f;
  const bool negative = limbs_[kLimbs - 1] >> 63;
  std::array<uint64_t, kLimbs> mag = limbs_;
  if (negative) {  // two's complement negation
    uint64_t carry = 1;
    for (auto& w : mag) {
      w = ~w + carry;
      carry = carry && w == 0;
    }
  }
  int top_limb = kLimbs - 1;
  while (mag[top_limb] == 0) --top_limb;
  // Keep the top 100 bits and fold everything below into a sticky bit: the
  // rounding point lies at most 24 bits below the top, far above it.
  const int top_bit = top_limb * 64 + std::bit_width(mag[top_limb]) - 1;
  const int low = top_bit - 100 > 0 ? top_bit - 100 : 0;
  unsigned __int128 kept = 0;
  for (int b = top_bit; b >= low; --b) kept = (kept << 1) | ((mag[b / 64] >> (b % 64)) & 1);
  bool sticky = low % 64 && (mag[low / 64] & ((uint64_t{1} << (low % 64)) - 1));
  for (int i = 0; i < low / 64; ++i) sticky = sticky || mag[i];
  kept = (kept << 1) | sticky;
  const __int128 sig = negative ? -__int128(kept) : __int128(kept);
  return round_scaled(sig, kMinExp + low - 1, mode, precision);
}

}  // namespace dsa::mma::detail
