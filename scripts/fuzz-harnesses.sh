#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the readers (tests/fuzz_harness, Debian's
# clang-19 with -fsanitize=fuzzer,address,undefined) and runs each one for a
# fixed time from its seed corpus (data/fuzz_corpus), as many at a time as the
# machine has cores. Any finding (a crash, a sanitizer report, an exception
# other than InvalidInput, a leak, a timeout) fails the script; the input that
# found it is left in build-fuzz/artifacts/.
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
run_harness() {  # run_harness NAME: one harness for the fixed time; its exit status in build-fuzz/artifacts/NAME.status
  local h="$1" status=0
  # New inputs go to a scratch corpus; the committed seeds are only read.
  local scratch="build-fuzz/corpus/$h"
  mkdir -p "$scratch"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/${h}_fuzz" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/${h}-" "$scratch" "data/fuzz_corpus/$h" \
    > "build-fuzz/artifacts/$h.log" 2>&1 || status=$?
  echo "$status" > "build-fuzz/artifacts/$h.status"
}
# As many harnesses at a time as there are cores (each is one process): the fixed time per harness stays.
parallel="$(nproc)"
for ((i = 0; i < ${#harnesses[@]}; i += parallel)); do
  batch=("${harnesses[@]:i:parallel}")
  echo "== ${batch[*]}: ${seconds} s each"
  for h in "${batch[@]}"; do run_harness "$h" & done
  wait
done
found=0
for h in "${harnesses[@]}"; do
  log="build-fuzz/artifacts/$h.log"
  status="$(cat "build-fuzz/artifacts/$h.status")"
  echo "-- $h"
  grep -E "^(stat::number_of_executed_units|stat::new_units_added)|Done [0-9]+ runs" "$log" || true
  if ((status != 0)) || compgen -G "build-fuzz/artifacts/${h}-*" > /dev/null; then
    tail -40 "$log"
    echo "FINDING in $h (exit status $status): $(ls build-fuzz/artifacts/${h}-* 2> /dev/null)"
    found=1
    continue
  fi
  rm -f "$log" "build-fuzz/artifacts/$h.status"
done
((found == 0)) || exit 1
echo "libFuzzer harnesses: no finding"
