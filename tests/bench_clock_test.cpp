// The speed programs' clock sampler (bench/gpu/gpu_clock.hpp) against a stand-in NVML (tests/fakes/nvml.cpp):
// what it reports where the library or the device is missing, and the statistics of its samples.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "bench/gpu/gpu_clock.hpp"

namespace {

using dsa::bench_gpu::ClockSampler;
using dsa::bench_gpu::ClockStats;
using dsa::bench_gpu::Nvml;

// The stand-in's controls (the same loaded object as Nvml's: dlopen counts references).
struct FakeNvml {
  void* handle = dlopen(DSA_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  using Set = void (*)(const unsigned*, int, unsigned, unsigned long long);
  Set set = handle ? reinterpret_cast<Set>(dlsym(handle, "fake_nvml_set")) : nullptr;
  ~FakeNvml() {
    if (handle) dlclose(handle);
  }
};

ClockStats sample_for(const Nvml& nvml, std::chrono::milliseconds how_long) {
  ClockSampler sampler(nvml, std::chrono::microseconds(500));
  sampler.start();
  std::this_thread::sleep_for(how_long);
  return sampler.stop();
}

TEST(BenchClock, NoLibraryMeansNoSamplesAndSaysWhy) {
  Nvml nvml("libdsa-no-such-nvml.so.1");
  EXPECT_FALSE(nvml.open("00000000:19:00.0"));
  EXPECT_FALSE(nvml.ok());
  EXPECT_NE(nvml.why_absent().find("libdsa-no-such-nvml.so.1 not found"), std::string::npos) << nvml.why_absent();
  EXPECT_EQ(sample_for(nvml, std::chrono::milliseconds(2)).samples, 0);
}

TEST(BenchClock, AnUnknownDeviceMeansNoSamplesAndNamesTheBusId) {
  Nvml nvml(DSA_FAKE_NVML_PATH);
  EXPECT_FALSE(nvml.open("00000000:42:00.0"));
  EXPECT_FALSE(nvml.ok());
  EXPECT_NE(nvml.why_absent().find("00000000:42:00.0"), std::string::npos) << nvml.why_absent();
  EXPECT_EQ(sample_for(nvml, std::chrono::milliseconds(2)).samples, 0);
}

TEST(BenchClock, ReportsTheClockPowerAndPowerCapOfItsSamples) {
  FakeNvml fake;
  ASSERT_NE(fake.set, nullptr) << dlerror();
  Nvml nvml(DSA_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml.open("00000000:19:00.0")) << nvml.why_absent();
  const unsigned steady[] = {1755};
  fake.set(steady, 1, 650000, 0x4);  // software power cap
  ClockStats s = sample_for(nvml, std::chrono::milliseconds(5));
  EXPECT_GE(s.samples, 2);  // one at each end at least
  EXPECT_EQ(s.median_mhz, 1755u);
  EXPECT_EQ(s.min_mhz, 1755u);
  EXPECT_EQ(s.max_mhz, 1755u);
  EXPECT_DOUBLE_EQ(s.median_watts, 650.0);
  EXPECT_DOUBLE_EQ(s.power_capped, 1.0);
  EXPECT_DOUBLE_EQ(s.thermal, 0.0);
  // A clock stepping through three values: the middle one is the median of any run of whole cycles and
  // of any partial one too (the sequence starts at its lowest); reasons without a cap or slowdown.
  const unsigned stepping[] = {1500, 1600, 1700};
  fake.set(stepping, 3, 400000, 0x1);  // GPU idle
  s = sample_for(nvml, std::chrono::milliseconds(5));
  EXPECT_GE(s.samples, 2);
  EXPECT_EQ(s.median_mhz, 1600u);
  EXPECT_EQ(s.min_mhz, 1500u);
  EXPECT_EQ(s.max_mhz, s.samples >= 3 ? 1700u : 1600u);
  EXPECT_DOUBLE_EQ(s.power_capped, 0.0);
  EXPECT_DOUBLE_EQ(s.thermal, 0.0);
  fake.set(steady, 1, 700000, 0x40);  // hardware thermal slowdown
  s = sample_for(nvml, std::chrono::milliseconds(2));
  EXPECT_DOUBLE_EQ(s.power_capped, 0.0);
  EXPECT_DOUBLE_EQ(s.thermal, 1.0);
}

TEST(BenchClock, StopsAtOnceRestartsAnewAndStopsWhenDestroyed) {
  FakeNvml fake;
  ASSERT_NE(fake.set, nullptr);
  const unsigned steady[] = {1980};
  fake.set(steady, 1, 300000, 0);
  Nvml nvml(DSA_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml.open("00000000:19:00.0"));
  {
    ClockSampler sampler(nvml, std::chrono::microseconds(100));
    sampler.start();
  }  // joins its thread: no std::terminate
  // A period of an hour: stop() does not wait for it, and a second start() drops the first one's samples.
  ClockSampler sampler(nvml, std::chrono::hours(1));
  sampler.start();
  sampler.start();
  const auto t0 = std::chrono::steady_clock::now();
  const ClockStats s = sampler.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(s.samples, 2);
  EXPECT_EQ(s.median_mhz, 1980u);
}

}  // namespace
