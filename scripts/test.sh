#!/usr/bin/env bash
# The README's set-up command first (scripts/install.sh: the packages, a
# Release build, `cmake --install` under /usr/local and Debian's python3
# importing the module from /), then the rest of the build and the tests with
# ctest (the GoogleTest suite, the pytest suite of python/tests and the
# install test): once in that Release build, once more under AddressSanitizer
# and UndefinedBehaviorSanitizer (set DSA_SKIP_SANITIZERS=1 to skip that part).
# Then the libFuzzer harnesses of the readers, a few seconds each
# (scripts/fuzz-harnesses.sh; DSA_SKIP_FUZZ_HARNESSES=1 skips them).
# Each phase prints its wall time and the CPU time of its processes (user +
# sys, which a machine shared with other work does not inflate), so a slow CI
# says where its time went.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
times_file="$(mktemp)"
trap 'rm -f "$times_file"' EXIT
children_cpu() {  # sets cpu: user + sys seconds of every finished child so far (`times`, second line)
  times > "$times_file"  # in this shell: a $(...) subshell would count its own children
  cpu="$(awk 'NR == 2 { s = 0; for (i = 1; i <= NF; ++i) { split($i, ms, "m"); s += ms[1] * 60 + ms[2] }
                        printf "%d", s }' "$times_file")"
}
phase_start=$SECONDS
phase_cpu=0
phase() {  # phase NAME: closes the previous phase's clocks, opens NAME's
  children_cpu
  echo "== (previous phase: $((SECONDS - phase_start)) s, CPU $((cpu - phase_cpu)) s) $1"
  phase_start=$SECONDS
  phase_cpu=$cpu
}

# The Release and sanitizer builds compile the test drivers identically; ccache (DSA_CCACHE) compiles
# them once. Its cache lives in the checkout unless one is set, so a bare CI machine needs no home folder.
export CCACHE_DIR="${CCACHE_DIR:-$PWD/build-ccache}"

phase "set-up (scripts/install.sh: packages, Release build of the installed parts, install, import check)"
bash scripts/install.sh

phase "Release build"
# The gfx942 code objects are part of the test: a missing tool fails the configure.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDSA_GFX942=ON
cmake --build build -j"$jobs"
phase "Release tests"
# Idle OpenMP threads must not spin while ctest runs tests side by side.
export OMP_WAIT_POLICY=passive
ctest --test-dir build -j"$jobs" --output-on-failure --timeout 600

if [ "${DSA_SKIP_SANITIZERS:-0}" != 1 ]; then
  phase "ASan + UBSan build"
  # CUDA is built (sm_90a, sm_100a) and its CPU-side tests run in the Release build above; nvcc code
  # is not instrumented, so the sanitizer build leaves it out. Device code does not change under host
  # sanitizers either: the Release build checks the gfx942 code objects.
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release -DDSA_SANITIZE=ON -DDSA_BUILD_BENCH=OFF -DDSA_CUDA=OFF \
    -DDSA_GFX942=OFF
  cmake --build build-sanitize -j"$jobs"
  phase "ASan + UBSan tests"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    DSA_SANITIZED=1 ctest --test-dir build-sanitize -j"$jobs" --output-on-failure --timeout 1200
fi

if [ "${DSA_SKIP_FUZZ_HARNESSES:-0}" != 1 ]; then
  phase "libFuzzer harnesses (clang-19, ASan + UBSan: build, then each harness for a fixed time)"
  bash scripts/fuzz-harnesses.sh
fi
children_cpu
phase "done (total $SECONDS s, CPU $cpu s)"
