// A host emulator of the vendor layer (arch/cuda.hpp's interface): the
// threads of a block are fibers on one host thread, sync() is a barrier of
// the block, and a warp collective is an exchange through the warp's slots
// between two barriers of the warp. Blocks run one after another, except the
// blocks of one group (host_launch_groups: a cluster on CUDA), whose threads
// are fibers of one scheduler, so a group barrier and reads of another
// block's shared memory behave as on the GPU.
//
// It runs the shared selection code as written for the GPU, at any lane count
// (32 as NVIDIA, 64 as gfx942), so its logic is tested here; it cannot show a
// GPU's memory model or speed (the H200 campaign does). A barrier that not
// every thread reaches (a sync in divergent code: a hang on a GPU) throws.
// Between two barriers the threads run in an order drawn anew for every
// round of every launch, so code whose result depends on which thread comes
// first (an atomic ticket) gives different results from run to run, as on a GPU.
// A block's shared memory starts poisoned, not zeroed (undefined_shared), so
// that a counter used before it is cleared gives wrong answers here too.
//
// Fibers: ucontext starts each one on its own stack, _setjmp/_longjmp switch
// between them (no signal-mask system call per switch). Under AddressSanitizer
// every switch is announced to it. A host thread keeps its fibers' stacks from
// one block to the next (FiberStacks).
#pragma once

#include <setjmp.h>
#include <ucontext.h>
#if defined(__GLIBC__)
#include <dlfcn.h>
#endif

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define DSA_SIMT_ASAN 1
#else
#define DSA_SIMT_ASAN 0
#endif

namespace dsa::common::arch {

// The fiber stacks of one host thread, kept from one block to the next. A
// block of 1024 threads takes 128 MB of stacks, and allocated afresh for every
// block each one was a fresh mapping whose touched pages faulted in again: the
// emulator's tests took twice their time for it (Select* and CandidateMask*
// of the Release build, 20.3 s against 10.4). A stack handed out again starts
// unpoisoned, since a fiber that never returned may have left
// AddressSanitizer's marks of its frames on it.
class FiberStacks {
public:
  static FiberStacks& local() {
    static thread_local FiberStacks stacks;
    return stacks;
  }
  std::unique_ptr<char[]> take(size_t bytes) {
    if (bytes != bytes_) {
      free_.clear();
      bytes_ = bytes;
    }
    if (free_.empty()) return std::unique_ptr<char[]>(new char[bytes]);
    std::unique_ptr<char[]> stack = std::move(free_.back());
    free_.pop_back();
#if DSA_SIMT_ASAN
    ASAN_UNPOISON_MEMORY_REGION(stack.get(), bytes);
#endif
    return stack;
  }
  void give_back(std::unique_ptr<char[]> stack, size_t bytes) {
    if (stack && bytes == bytes_) free_.push_back(std::move(stack));
  }

private:
  size_t bytes_ = 0;
  std::vector<std::unique_ptr<char[]>> free_;
};

// Jumps to `env` by libc's own _longjmp. AddressSanitizer's runtime replaces
// _longjmp with one that first unpoisons the stack above the caller and asks
// the kernel (sigaltstack) whether it runs on the signal stack: a system call
// per fiber switch, 70 % of an emulator test's time in the sanitizer build,
// where a block of 1024 threads switches a million times. Nothing here needs
// that: a switch abandons only the frames of the two functions that jump, and
// a finished fiber's stack is unpoisoned before it is used again (FiberStacks).
// Called through a pointer, which a compiler does not take for a no-return
// call, so an instrumented caller does not get that hook either.
inline void fiber_jump(jmp_buf env) {
  using Jump = void (*)(jmp_buf, int);
  static const Jump jump = [] {
#if defined(__GLIBC__)
    if (void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD))
      if (void* own = dlsym(libc, "_longjmp")) return reinterpret_cast<Jump>(own);
#endif
    return static_cast<Jump>(&_longjmp);
  }();
  jump(env, 1);
}

// Cooperative fibers of one block and the barriers between them.
class FiberBlock {
public:
  struct Barrier {
    int participants = 0;
    int arrived = 0;
    uint64_t generation = 0;
  };

  FiberBlock(int threads, size_t stack_bytes, uint64_t seed)
      : stack_bytes_(stack_bytes), fibers_(size_t(threads)), seed_(seed) {}
  FiberBlock(const FiberBlock&) = delete;
  FiberBlock& operator=(const FiberBlock&) = delete;
  ~FiberBlock() {
    for (Fiber& f : fibers_) FiberStacks::local().give_back(std::move(f.stack), stack_bytes_);
  }

  // Runs body(t) for t in [0, threads) to completion, switching at barriers.
  void run(const std::function<void(int)>& body) {
    body_ = &body;
    for (Fiber& f : fibers_)
      if (!f.stack) f.stack = FiberStacks::local().take(stack_bytes_);
    size_t done = 0;
    uint64_t idle_rounds = 0;
    std::vector<size_t> order(fibers_.size());
    for (size_t t = 0; t < fibers_.size(); ++t) order[t] = t;
    for (size_t t = 0; t < fibers_.size(); ++t) start(t);
    for (;;) {
      done = 0;
      progress_ = false;
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[next_random() % i]);
      for (const size_t t : order) {
        if (fibers_[t].done) {
          ++done;
          continue;
        }
        resume(t);
      }
      if (error_) std::rethrow_exception(error_);
      if (done == fibers_.size()) break;
      idle_rounds = progress_ ? 0 : idle_rounds + 1;
      if (idle_rounds > 2) throw std::logic_error("host_simt: a barrier that not every thread of the block reaches");
    }
  }

  void arrive_and_wait(Barrier& b) {
    const uint64_t gen = b.generation;
    progress_ = true;
    if (++b.arrived == b.participants) {
      b.arrived = 0;
      ++b.generation;
      return;
    }
    while (b.generation == gen) yield();
    progress_ = true;
  }

private:
  uint64_t next_random() {  // splitmix64
    uint64_t z = (seed_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  struct Fiber {
    std::unique_ptr<char[]> stack;
    jmp_buf context;
    bool done = false;
    void* fake_stack = nullptr;  // AddressSanitizer's, while switched out
  };

  static FiberBlock*& self() {
    static thread_local FiberBlock* block = nullptr;
    return block;
  }

  static void trampoline() {
    FiberBlock* b = self();
    b->entered();
    const size_t t = b->current_;
    try {
      (*b->body_)(int(t));
    } catch (...) {
      if (!b->error_) b->error_ = std::current_exception();
    }
    b->fibers_[t].done = true;
    b->switch_to_scheduler(true);
  }

  void start(size_t t) {
    ucontext_t uc;
    getcontext(&uc);
    uc.uc_stack.ss_sp = fibers_[t].stack.get();
    uc.uc_stack.ss_size = stack_bytes_;
    uc.uc_link = nullptr;
    makecontext(&uc, &FiberBlock::trampoline, 0);
    self() = this;
    current_ = t;
    if (!_setjmp(scheduler_)) {
      announce(fibers_[t].stack.get(), stack_bytes_);
      setcontext(&uc);
    }
    landed();
  }

  void resume(size_t t) {
    self() = this;
    current_ = t;
    if (!_setjmp(scheduler_)) {
      announce(fibers_[t].stack.get(), stack_bytes_);
      fiber_jump(fibers_[t].context);
    }
    landed();
  }

  void yield() {
    if (!_setjmp(fibers_[current_].context)) switch_to_scheduler(false);
    entered();
  }

  void switch_to_scheduler(bool finished) {
#if DSA_SIMT_ASAN
    __sanitizer_start_switch_fiber(finished ? nullptr : &fibers_[current_].fake_stack, scheduler_bottom_,
                                   scheduler_size_);
#else
    (void)finished;
#endif
    fiber_jump(scheduler_);
  }

  // AddressSanitizer's view of the stack switches.
  void announce(const void* bottom, size_t size) {
#if DSA_SIMT_ASAN
    __sanitizer_start_switch_fiber(&scheduler_fake_stack_, bottom, size);
#else
    (void)bottom;
    (void)size;
#endif
  }
  void entered() {
#if DSA_SIMT_ASAN
    __sanitizer_finish_switch_fiber(fibers_[current_].fake_stack, &scheduler_bottom_, &scheduler_size_);
#endif
  }
  void landed() {
#if DSA_SIMT_ASAN
    __sanitizer_finish_switch_fiber(scheduler_fake_stack_, nullptr, nullptr);
#endif
  }

  size_t stack_bytes_;
  std::vector<Fiber> fibers_;
  const std::function<void(int)>* body_ = nullptr;
  jmp_buf scheduler_;
  size_t current_ = 0;
  bool progress_ = false;
  std::exception_ptr error_;
  uint64_t seed_;
#if DSA_SIMT_ASAN
  void* scheduler_fake_stack_ = nullptr;
  const void* scheduler_bottom_ = nullptr;
  size_t scheduler_size_ = 0;
#endif
};

template <int Lanes>
class HostSimt {
public:
  static_assert(Lanes == 32 || Lanes == 64);
  static constexpr int kLanes = Lanes;
  using LaneMask = std::conditional_t<Lanes == 64, uint64_t, uint32_t>;

  // The fibers of `group` blocks of `threads` threads (one block unless a group launch).
  struct Block {
    Block(int threads, uint64_t seed, int group = 1)
        : fibers(threads * group, size_t(128) << 10, seed),
          block_threads(threads),
          barriers(size_t(group)),
          warps(size_t(threads * group / Lanes)),
          slots(size_t(threads * group)),
          shared(size_t(group), nullptr) {
      for (auto& b : barriers) b.participants = threads;
      group_barrier.participants = threads * group;
      for (auto& w : warps) w.participants = Lanes;
    }
    FiberBlock fibers;
    int block_threads;
    std::vector<FiberBlock::Barrier> barriers;  // one per block
    FiberBlock::Barrier group_barrier;
    std::vector<FiberBlock::Barrier> warps;
    std::vector<uint64_t> slots;  // one per thread, for warp exchanges
    std::vector<char*> shared;    // each block's Shared, for group_shared
  };

  // `fiber` is the thread's index among the fibers of its Block (its group's threads).
  HostSimt(Block* block, int fiber, int block_index, int grid)
      : block_(block), thread_(fiber), block_index_(block_index), grid_(grid) {}

  int thread() const { return thread_ % block_->block_threads; }
  int block() const { return block_index_; }
  int grid() const { return grid_; }
  void sync() const { block_->fibers.arrive_and_wait(block_->barriers[size_t(group_rank())]); }
  int group_rank() const { return thread_ / block_->block_threads; }
  int group_size() const { return int(block_->barriers.size()); }
  void group_sync() const { block_->fibers.arrive_and_wait(block_->group_barrier); }
  template <class T>
  T* group_shared(T* p, int rank) const {
    const char* mine = block_->shared[size_t(group_rank())];
    return reinterpret_cast<T*>(block_->shared[size_t(rank)] + (reinterpret_cast<const char*>(p) - mine));
  }

  LaneMask ballot(bool p) const {
    block_->slots[size_t(thread_)] = p ? 1u : 0u;
    warp_barrier();
    LaneMask m = 0;
    const size_t first = size_t(thread_ - lane());
    for (int l = 0; l < Lanes; ++l) m |= LaneMask(block_->slots[first + size_t(l)] & 1u) << l;
    warp_barrier();
    return m;
  }
  template <class T>
  T shfl(T v, int src) const {
    return exchange(v, src & (Lanes - 1), true);
  }
  template <class T>
  T shfl_up(T v, int delta) const {
    return exchange(v, lane() - delta, lane() >= delta);
  }
  int atomic_add_shared(int* p, int v) const { return std::atomic_ref<int>(*p).fetch_add(v); }
  uint32_t atomic_or_shared(uint32_t* p, uint32_t v) const { return std::atomic_ref<uint32_t>(*p).fetch_or(v); }
  uint32_t atomic_max_shared(uint32_t* p, uint32_t v) const {
    std::atomic_ref<uint32_t> x(*p);
    uint32_t seen = x.load();
    while (seen < v && !x.compare_exchange_weak(seen, v)) {
    }
    return seen;
  }
  uint32_t atomic_add_global(uint32_t* p, uint32_t v) const { return std::atomic_ref<uint32_t>(*p).fetch_add(v); }
  void fence() const { std::atomic_thread_fence(std::memory_order_seq_cst); }
  uint32_t load_cg(const uint32_t* p) const { return *p; }
  uint64_t load_cg(const uint64_t* p) const { return *p; }
  void load4(const float* p, float (&v)[4]) const {
    // A GPU faults on a 16-byte load from an address that is not a multiple of 16.
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) throw std::logic_error("host_simt: load4 from an unaligned address");
    for (int i = 0; i < 4; ++i) v[i] = p[i];
  }

private:
  int lane() const { return thread_ % Lanes; }
  void warp_barrier() const { block_->fibers.arrive_and_wait(block_->warps[size_t(thread_ / Lanes)]); }
  template <class T>
  T exchange(T v, int src, bool take) const {
    static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable_v<T>);
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    block_->slots[size_t(thread_)] = bits;
    warp_barrier();
    T out = v;
    if (take) std::memcpy(&out, &block_->slots[size_t(thread_ - lane() + src)], sizeof(T));
    warp_barrier();
    return out;
  }

  Block* block_;
  int thread_, block_index_, grid_;
};

// A block's shared memory as a GPU hands it over: holding whatever was there
// (here a poison byte), so that code reading a word before it writes it fails
// on the host as it can on the device (a zeroed Shared would hide a histogram
// that a kernel used uncleared).
template <class Shared>
std::unique_ptr<Shared> undefined_shared() {
  static_assert(std::is_trivially_copyable_v<Shared>, "shared memory holds plain data");
  auto shared = std::make_unique_for_overwrite<Shared>();
  std::memset(static_cast<void*>(shared.get()), 0xa5, sizeof(Shared));
  return shared;
}

// Runs body(arch, shared) for every thread of `grid` blocks of `threads`
// threads; each block gets its own Shared, uninitialised (undefined_shared).
// Every launch draws its own thread orders.
template <int Lanes, class Shared, class Body>
void host_launch(int grid, int threads, Body body) {
  using A = HostSimt<Lanes>;
  static std::atomic<uint64_t> launches{0};
  const uint64_t launch = launches.fetch_add(1);
  for (int b = 0; b < grid; ++b) {
    typename A::Block block(threads, (launch << 20) ^ uint64_t(b));
    auto shared = undefined_shared<Shared>();
    block.shared[0] = reinterpret_cast<char*>(shared.get());
    block.fibers.run([&](int t) { body(A(&block, t, b, grid), *shared); });
  }
}

// The same with the blocks in groups of `group` consecutive blocks (grid a
// multiple of it), each group's threads run together: a cluster launch.
template <int Lanes, class Shared, class Body>
void host_launch_groups(int grid, int group, int threads, Body body) {
  using A = HostSimt<Lanes>;
  static std::atomic<uint64_t> launches{0};
  const uint64_t launch = launches.fetch_add(1);
  if (group < 1 || grid % group != 0) throw std::logic_error("host_simt: a grid of whole groups");
  for (int first = 0; first < grid; first += group) {
    typename A::Block block(threads, (launch << 20) ^ uint64_t(first) ^ (uint64_t(1) << 63), group);
    std::vector<std::unique_ptr<Shared>> shared;
    for (int q = 0; q < group; ++q) {
      shared.push_back(undefined_shared<Shared>());
      block.shared[size_t(q)] = reinterpret_cast<char*>(shared.back().get());
    }
    block.fibers.run([&](int t) { body(A(&block, t, first + t / threads, grid), *shared[size_t(t / threads)]); });
  }
}

}  // namespace dsa::common::arch
