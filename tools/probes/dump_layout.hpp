// Record layouts of the matrix-unit dumps, exactly as ../shared/data/README.md
// gives them (little-endian, headerless), so `dsa-oracle mma-check` reads the
// probes' files like the shared ones. docs/probes.md lists every file.
//
//   single: A[M][K] e4m3, B[N][K] e4m3, C[M][N] f32, D[M][N] f32
//           [, mode i32, scale_d i32]            (the wgmma form has the two fields)
//   chain:  A[M][128], B[N][128], then f32[M][N] arrays C, Dc, D0, Ds[0..3],
//           then mode i32 and 4 bytes of padding
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

// The layouts are read by the kernels as well as by the host.
#if defined(__CUDACC__)
#define PROBE_HOST_DEVICE __host__ __device__
#else
#define PROBE_HOST_DEVICE
#endif

namespace probes {

inline constexpr int kChainK = 128;
inline constexpr int kChainSteps = kChainK / 32;

struct SingleLayout {
  int m, n, k;
  bool has_mode_fields;  // mma.sync's shared format has none: its mode is the record index % 4

  PROBE_HOST_DEVICE constexpr size_t a() const { return 0; }
  PROBE_HOST_DEVICE constexpr size_t b() const { return size_t(m) * k; }
  PROBE_HOST_DEVICE constexpr size_t c() const { return b() + size_t(n) * k; }
  PROBE_HOST_DEVICE constexpr size_t d() const { return c() + size_t(m) * n * 4; }
  PROBE_HOST_DEVICE constexpr size_t mode() const { return d() + size_t(m) * n * 4; }
  PROBE_HOST_DEVICE constexpr size_t scale_d() const { return mode() + 4; }
  PROBE_HOST_DEVICE constexpr size_t bytes() const { return mode() + (has_mode_fields ? 8 : 0); }
};

struct ChainLayout {
  int m, n;

  PROBE_HOST_DEVICE constexpr size_t a() const { return 0; }
  PROBE_HOST_DEVICE constexpr size_t b() const { return size_t(m) * kChainK; }
  PROBE_HOST_DEVICE constexpr size_t c() const { return b() + size_t(n) * kChainK; }
  PROBE_HOST_DEVICE constexpr size_t tile() const { return size_t(m) * n * 4; }
  PROBE_HOST_DEVICE constexpr size_t dc() const { return c() + tile(); }
  PROBE_HOST_DEVICE constexpr size_t d0() const { return dc() + tile(); }
  PROBE_HOST_DEVICE constexpr size_t ds(int step) const { return d0() + tile() * size_t(1 + step); }
  PROBE_HOST_DEVICE constexpr size_t mode() const { return ds(kChainSteps); }
  PROBE_HOST_DEVICE constexpr size_t bytes() const { return mode() + 8; }
};

inline constexpr SingleLayout kMmaSyncSingle{16, 8, 32, false};  // 1792 bytes
inline constexpr SingleLayout kWgmmaSingle{64, 8, 32, true};     // 6408 bytes
inline constexpr ChainLayout kMmaSyncChain{16, 8};               // 6664 bytes (new here)
inline constexpr ChainLayout kWgmmaChain{64, 8};                 // 23560 bytes

static_assert(kMmaSyncSingle.bytes() == 1792);
static_assert(kWgmmaSingle.bytes() == 6408);
static_assert(kWgmmaChain.bytes() == 23560);
static_assert(kMmaSyncChain.bytes() == 6664);

inline void put_i32(uint8_t* record, size_t offset, int32_t value) { std::memcpy(record + offset, &value, 4); }
inline int32_t get_i32(const uint8_t* record, size_t offset) {
  int32_t value;
  std::memcpy(&value, record + offset, 4);
  return value;
}

}  // namespace probes
