// A stand-in for the driver's libnvidia-ml.so.1 (bench/gpu/gpu_clock.hpp's calls only), so that the clock
// sampler of the speed programs is tested where there is no driver: one device, whose SM clock steps
// through a sequence the test sets, with a power draw and clock-event reasons the test sets too.
#include <atomic>
#include <cstring>

namespace {
int device;
std::atomic<unsigned> clocks[8];
std::atomic<int> clock_count{1}, next_clock{0};
std::atomic<unsigned> milliwatts{0};
std::atomic<unsigned long long> reasons{0};
}  // namespace

extern "C" {
// The test's controls: the clock sequence (n of at most 8 values, each call to the clock takes the next),
// the power draw and the reasons.
void fake_nvml_set(const unsigned* mhz, int n, unsigned mw, unsigned long long event_reasons) {
  n = n < 1 ? 1 : n > 8 ? 8 : n;
  for (int i = 0; i < n; ++i) clocks[i] = mhz[i];
  clock_count = n, next_clock = 0, milliwatts = mw, reasons = event_reasons;
}
int nvmlInit_v2() { return 0; }
// NVML_ERROR_NOT_FOUND (6) for any bus id but one.
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, void** d) {
  if (std::strcmp(bus, "00000000:19:00.0") != 0) return 6;
  *d = &device;
  return 0;
}
int nvmlDeviceGetClockInfo(void* d, int type, unsigned* mhz) {
  if (d != &device || type != 1) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *mhz = clocks[next_clock++ % clock_count];
  return 0;
}
int nvmlDeviceGetPowerUsage(void* d, unsigned* mw) {
  if (d != &device) return 2;
  *mw = milliwatts;
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(void* d, unsigned long long* r) {
  if (d != &device) return 2;
  *r = reasons;
  return 0;
}
}
