// The SM clock and power draw while a measurement runs, and whether the driver held the clock down,
// read through NVML: the driver's libnvidia-ml.so.1, opened at run time, so that the speed programs
// build where no driver is (CI) and still run, reporting no clock, where NVML cannot be opened.
//
// Why: on the H100 the software power cap moves the SM clock between about 1.6 and 1.98 GHz from one
// launch sequence to the next, and an issue-bound kernel's time follows it (bench/gpu/RESULTS.md runs
// 18-22); a ratio of two kernels' times means little without the clocks each ran at.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dsa::bench_gpu {

// What one measurement's samples say. `samples` is 0 where NVML was not available.
struct ClockStats {
  int samples = 0;
  unsigned median_mhz = 0, min_mhz = 0, max_mhz = 0;
  double median_watts = 0;  // NVML's power reading, which it documents as a one-second average on these GPUs:
                            // it follows the work before a short measurement as much as the measurement
  double power_capped = 0;  // the fraction of samples with a power-cap reason active (software or hardware)
  double thermal = 0;       // the same for a thermal slowdown
};

// NVML's C interface, the few calls used here (nvml.h: nvmlReturn_t is an int, NVML_SUCCESS 0; a device
// is an opaque pointer; the clock-event reasons are a bit mask). Opened once on the main thread, then
// only read (NVML's calls are thread-safe).
class Nvml {
 public:
  // nvmlClocksEventReason*: SwPowerCap 0x4, HwSlowdown 0x8, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40,
  // HwPowerBrakeSlowdown 0x80.
  static constexpr uint64_t kPowerCap = 0x4 | 0x8 | 0x80;
  static constexpr uint64_t kThermal = 0x20 | 0x40;

  // `library`: the driver's, or another of the same interface (the tests' stand-in).
  explicit Nvml(const char* library = "libnvidia-ml.so.1") {
    handle_ = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      why_ = std::string(library) + " not found";
      return;
    }
    using Init = int (*)();
    const auto init = reinterpret_cast<Init>(dlsym(handle_, "nvmlInit_v2"));
    by_pci_ = reinterpret_cast<ByPci>(dlsym(handle_, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_info_ = reinterpret_cast<ClockInfo>(dlsym(handle_, "nvmlDeviceGetClockInfo"));
    power_usage_ = reinterpret_cast<PowerUsage>(dlsym(handle_, "nvmlDeviceGetPowerUsage"));
    reasons_ = reinterpret_cast<Reasons>(dlsym(handle_, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons_) reasons_ = reinterpret_cast<Reasons>(dlsym(handle_, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!init || !by_pci_ || !clock_info_ || !power_usage_ || !reasons_ || init() != 0) {
      why_ = std::string(library) + " did not initialise";
      dlclose(handle_);
      handle_ = nullptr;
    }
  }
  ~Nvml() {
    if (handle_) dlclose(handle_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // The device at CUDA's PCI bus id ("0000:19:00.0"): NVML's numbering of devices may differ from CUDA's.
  bool open(const std::string& pci_bus_id) {
    if (!handle_) return false;
    void* device = nullptr;
    if (by_pci_(pci_bus_id.c_str(), &device) != 0 || !device) {
      why_ = "NVML has no device at PCI bus id '" + pci_bus_id + "'";
      return false;
    }
    device_ = device;
    return true;
  }
  bool ok() const { return device_ != nullptr; }
  const std::string& why_absent() const { return why_; }

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
    return reasons_(device_, &r) == 0 ? uint64_t(r) : 0;
  }

 private:
  static constexpr int kClockSm = 1;  // NVML_CLOCK_SM
  using ByPci = int (*)(const char*, void**);
  using ClockInfo = int (*)(void*, int, unsigned*);
  using PowerUsage = int (*)(void*, unsigned*);
  using Reasons = int (*)(void*, unsigned long long*);
  void* handle_ = nullptr;
  void* device_ = nullptr;
  ByPci by_pci_ = nullptr;
  ClockInfo clock_info_ = nullptr;
  PowerUsage power_usage_ = nullptr;
  Reasons reasons_ = nullptr;
  std::string why_;
};

// Samples the clock of an opened device every `period` on a thread of its own from start() to stop(),
// and once at each end, so that a measurement shorter than a period has two samples. Without a device
// every stop() returns samples = 0.
class ClockSampler {
 public:
  explicit ClockSampler(const Nvml& nvml, std::chrono::microseconds period = std::chrono::microseconds(2000))
      : nvml_(nvml), period_(period) {}
  ~ClockSampler() { stop(); }
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  void start() {
    stop();
    samples_.clear();
    if (!nvml_.ok()) return;
    sample();
    running_ = true;
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      // A period's wait that stop() cuts short, so that stopping never waits for a period.
      while (!wake_.wait_for(lock, period_, [this] { return !running_; })) sample();
    });
  }

  ClockStats stop() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        running_ = false;
      }
      wake_.notify_all();
      thread_.join();
      sample();
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
  void sample() { samples_.push_back({nvml_.sm_clock_mhz(), nvml_.watts(), nvml_.reasons()}); }
  const Nvml& nvml_;
  std::chrono::microseconds period_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool running_ = false;  // under mutex_ while the thread runs
  std::thread thread_;
  std::vector<Sample> samples_;
};

}  // namespace dsa::bench_gpu
