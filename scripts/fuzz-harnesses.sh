#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the readers (tests/fuzz_harness, Debian's
# clang-19 with -fsanitize=fuzzer,address,undefined) and runs each one for a
# fixed time from its seed corpus (data/fuzz_corpus). Any finding (a crash, a
# sanitizer report, an exception other than InvalidInput, a leak, a timeout)
# fails the script; the input that found it is left in build-fuzz/artifacts/.
#
#   scripts/fuzz-harnesses.sh                       # CI: 10 s per harness
#   DSA_FUZZ_SECONDS=3600 scripts/fuzz-harnesses.sh safetensors golden_case   # an hour each
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${DSA_FUZZ_SECONDS:-10}"
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(safetensors golden_case npy npz dump replay)

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S tests/fuzz_harness -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 "${launcher[@]}" > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target $(printf '%s_fuzz ' "${harnesses[@]}")
rm -rf build-fuzz/artifacts
mkdir -p build-fuzz/artifacts
for h in "${harnesses[@]}"; do
  # New inputs go to a scratch corpus; the committed seeds are only read.
  scratch="build-fuzz/corpus/$h"
  mkdir -p "$scratch"
  echo "== $h: ${seconds} s"
  log="build-fuzz/artifacts/$h.log"
  status=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/${h}_fuzz" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/${h}-" "$scratch" "data/fuzz_corpus/$h" > "$log" 2>&1 ||
    status=$?
  grep -E "^(stat::number_of_executed_units|stat::new_units_added)|Done [0-9]+ runs" "$log" || true
  if ((status != 0)) || compgen -G "build-fuzz/artifacts/${h}-*" > /dev/null; then
    tail -40 "$log"
    echo "FINDING in $h (exit status $status): $(ls build-fuzz/artifacts/${h}-* 2> /dev/null)"
    exit 1
  fi
  rm -f "$log"
done
echo "libFuzzer harnesses: no finding"
