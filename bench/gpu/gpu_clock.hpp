// The SM clock and power draw while a measurement runs, and whether the driver held the clock down,
// read through NVML: the driver's libnvidia-ml.so.1, opened at run time, so that the speed programs
// build where no driver is (CI) and still run, reporting no clock, where NVML cannot be opened.
//
// Why: on the H100 the software power cap moves the SM clock between about 1.6 and 1.98 GHz from one
// launch sequence to the next, and an issue-bound kernel's time follows it (bench/gpu/RESULTS.md runs
// 18-22); a ratio of two kernels' times means little without the clocks each ran at.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace dsa::bench_gpu {

// The PCI bus id of the current CUDA device ("0000:19:00.0"), by which NVML finds the same device
// (NVML's and CUDA's device numbering may differ); empty if CUDA does not say.
inline std::string current_pci_bus_id() {
  int device = 0;
  char bus[64] = {};
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetPCIBusId(bus, int(sizeof bus), device) != cudaSuccess)
    return {};
  return bus;
}

// What one measurement's samples say. `samples` is 0 where NVML was not available.
struct ClockStats {
  int samples = 0;
  unsigned median_mhz = 0, min_mhz = 0, max_mhz = 0;
  double median_watts = 0;
  double power_capped = 0;  // the fraction of samples with a power-cap reason active (software or hardware)
  double thermal = 0;       // the same for a thermal slowdown
};

// NVML's C interface, the few calls used here (nvml.h: nvmlReturn_t is an int, NVML_SUCCESS 0; a device
// is an opaque pointer; the clock-event reasons are a bit mask).
class Nvml {
 public:
  // The one instance: opened on the main thread (open()) before any sampling starts, then only read.
  static Nvml& get() {
    static Nvml nvml;
    return nvml;
  }
  bool ok() const { return device_ != nullptr; }
  std::string why_absent() const { return why_; }
  unsigned sm_clock_mhz() const {
    unsigned mhz = 0;
    return clock_info_(device_, kClockSm, &mhz) == 0 ? mhz : 0;
  }
  double watts() const {
    unsigned milliwatts = 0;
    return power_usage_(device_, &milliwatts) == 0 ? milliwatts / 1000.0 : 0.0;
  }
  uint64_t reasons() const {
    unsigned long long r = 0;
    return throttle_reasons_(device_, &r) == 0 ? uint64_t(r) : 0;
  }
  // nvmlClocksEventReason*: SwPowerCap 0x4, HwSlowdown 0x8, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40,
  // HwPowerBrakeSlowdown 0x80.
  static constexpr uint64_t kPowerCap = 0x4 | 0x8 | 0x80;
  static constexpr uint64_t kThermal = 0x20 | 0x40;

  // The device of CUDA's PCI bus id ("0000:19:00.0").
  bool open(const std::string& pci_bus_id) {
    if (!handle_) return false;
    using ByPci = int (*)(const char*, void**);
    const auto by_pci = reinterpret_cast<ByPci>(dlsym(handle_, "nvmlDeviceGetHandleByPciBusId_v2"));
    void* device = nullptr;
    if (!by_pci || by_pci(pci_bus_id.c_str(), &device) != 0 || !device) {
      why_ = "NVML has no device at PCI bus id " + pci_bus_id;
      return false;
    }
    device_ = device;
    return true;
  }

 private:
  static constexpr int kClockSm = 1;  // NVML_CLOCK_SM
  using ClockInfo = int (*)(void*, int, unsigned*);
  using PowerUsage = int (*)(void*, unsigned*);
  using Reasons = int (*)(void*, unsigned long long*);

  Nvml() {
    handle_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      why_ = "libnvidia-ml.so.1 not found";
      return;
    }
    using Init = int (*)();
    const auto init = reinterpret_cast<Init>(dlsym(handle_, "nvmlInit_v2"));
    clock_info_ = reinterpret_cast<ClockInfo>(dlsym(handle_, "nvmlDeviceGetClockInfo"));
    power_usage_ = reinterpret_cast<PowerUsage>(dlsym(handle_, "nvmlDeviceGetPowerUsage"));
    throttle_reasons_ = reinterpret_cast<Reasons>(dlsym(handle_, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!throttle_reasons_)
      throttle_reasons_ = reinterpret_cast<Reasons>(dlsym(handle_, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!init || !clock_info_ || !power_usage_ || !throttle_reasons_ || init() != 0) {
      why_ = "NVML did not initialise";
      handle_ = nullptr;
    }
  }
  void* handle_ = nullptr;
  void* device_ = nullptr;
  ClockInfo clock_info_ = nullptr;
  PowerUsage power_usage_ = nullptr;
  Reasons throttle_reasons_ = nullptr;
  std::string why_;
};

// Samples the clock every `period` on a thread of its own from start() to stop().
class ClockSampler {
 public:
  // Opens the NVML device of `pci_bus_id` once; without it every stop() returns samples = 0.
  static bool open(const std::string& pci_bus_id, std::string& why_absent) {
    Nvml& nvml = Nvml::get();
    if (!nvml.ok() && !nvml.open(pci_bus_id)) {
      why_absent = nvml.why_absent();
      return false;
    }
    return true;
  }

  explicit ClockSampler(std::chrono::microseconds period = std::chrono::microseconds(2000)) : period_(period) {}
  ~ClockSampler() { stop(); }
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  void start() {
    stop();
    samples_.clear();
    if (!Nvml::get().ok()) return;
    running_ = true;
    thread_ = std::thread([this] {
      const Nvml& nvml = Nvml::get();
      while (running_) {
        samples_.push_back({nvml.sm_clock_mhz(), nvml.watts(), nvml.reasons()});
        std::this_thread::sleep_for(period_);
      }
    });
  }

  ClockStats stop() {
    if (thread_.joinable()) {
      running_ = false;
      thread_.join();
    }
    ClockStats s;
    s.samples = int(samples_.size());
    if (samples_.empty()) return s;
    std::vector<unsigned> mhz;
    std::vector<double> watts;
    int capped = 0, thermal = 0;
    for (const Sample& x : samples_) {
      mhz.push_back(x.mhz);
      watts.push_back(x.watts);
      capped += (x.reasons & Nvml::kPowerCap) != 0;
      thermal += (x.reasons & Nvml::kThermal) != 0;
    }
    std::sort(mhz.begin(), mhz.end());
    std::sort(watts.begin(), watts.end());
    s.median_mhz = mhz[mhz.size() / 2], s.min_mhz = mhz.front(), s.max_mhz = mhz.back();
    s.median_watts = watts[watts.size() / 2];
    s.power_capped = double(capped) / s.samples;
    s.thermal = double(thermal) / s.samples;
    return s;
  }

 private:
  struct Sample {
    unsigned mhz;
    double watts;
    uint64_t reasons;
  };
  std::chrono::microseconds period_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::vector<Sample> samples_;
};

}  // namespace dsa::bench_gpu
