#!/usr/bin/env bash
# The whole GPU job in one call, on a machine with an sm_90 GPU (the H200 of the device tool):
#   1. environment (GPU, driver) and a self-check of the bundle's binaries;
#   2. the gpu tests (tests/gpu, ctest label `gpu`);
#   3. a fixed-seed fuzz campaign of every CUDA implementation of the table against its profile;
#   4. `dsa-oracle check --impl` of every CUDA implementation on the committed golden sets;
#   5. the speed table: logits_speed (ours, the read bandwidth) and DeepGEMM's SM90 kernel built
#      from its public source here, in the same run;
#   6. the selection kernels: the GPU campaign against the CUDA mutants (the mutant table), vLLM's
#      decode top-k under the fuzzer, and the selection speed table (select_speed: ours, the floor,
#      vLLM's top_k_per_row_decode; select_torch_bench.py: torch.topk) in the same run, and the
#      consumer layer's step (candidate_path_speed: the dense path against the fused launch's work).
# Parts of the job can be left out to save device time: IMPLS (an extended regex of the implementations
# to fuzz and check), GPU_TEST_FILTER (a gtest filter), SKIP_LOGITS=1 (no logits speed, no DeepGEMM),
# SKIP_SELECT=1 (no step 6); NCU_SELECT=1 adds an ncu profile of one group_topk launch.
# Results under $OUT (default ./gpu-out): RESULTS.md and results.json (the table), summary.txt,
# logs.tar.gz, and deepgemm-built.tar.xz (DeepGEMM's extension and JIT cache, to carry next time).
#   scripts/gpu/run_all.sh [BUNDLE.tar.xz] [DEEPGEMM_SOURCE.tar.xz]
# The bundle is made by scripts/gpu/make_bundle.sh on a CPU machine. DeepGEMM's source tarball
# (DeepGEMM 477618c with its CUTLASS and fmt submodules' include/, made by scripts/gpu/pack_deepgemm.sh)
# is never committed; if .gpu-carry/deepgemm-built.tar.xz exists it is used instead of building.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bundle.sh"
# The repository root: where the golden sets are (DSA_ROOT, else the folder above scripts/gpu, else here).
root=${DSA_ROOT:-$(cd "$here/../.." && pwd)}
[ -d "$root/data/golden" ] || root=$PWD
cd "$root"
OUT=${OUT:-$root/gpu-out}
mkdir -p "$OUT/logs"
bundle_tar=${1:-.gpu-carry/gpu-bundle.tar.xz}
dg_src=${2:-.gpu-carry/deepgemm-477618c.tar.xz}
dg_built=.gpu-carry/deepgemm-built.tar.xz
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
# A hung kernel must not eat the lease: every step has a time limit. The GPU tests' limit leaves room
# for Sm90LargeCache (2 GiB caches and logits, their host references: about 30 s more, not yet timed).
T_TESTS=${T_TESTS:-240} T_SPEED=${T_SPEED:-120} T_DEEPGEMM_BUILD=${T_DEEPGEMM_BUILD:-300} T_DEEPGEMM=${T_DEEPGEMM:-180}
summary="$OUT/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
t0=$(date +%s)

# 1. Environment and bundle.
nvidia-smi >"$OUT/logs/nvidia-smi.txt" 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
note "gpu: $gpu, driver $driver, date $(date -u +%FT%TZ)"
work=/tmp/dsa-gpu
B=$(unpack_bundle "$bundle_tar" "$work") || { note "FAIL: cannot unpack $bundle_tar"; exit 1; }
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export DSA_SOURCE_DIR=$root OMP_WAIT_POLICY=passive
note "bundle: $(tr '\n' ' ' <"$B/COMMIT")"
for bin in dsa-oracle dsa_gpu_tests logits_speed select_speed candidate_path_speed gather_floor; do
  if ldd "$B/$bin" | grep -q "not found"; then note "FAIL: $bin misses libraries: $(ldd "$B/$bin" | grep 'not found' | tr '\n' ' ')"; fi
done
"$B/dsa-oracle" --help >/dev/null 2>&1 && note "self-check: dsa-oracle runs" || note "FAIL: dsa-oracle does not run"

# DeepGEMM builds in the background while the tests run (CPU only; it touches no GPU until timed).
export DG_JIT_CACHE_DIR=$work/dg-jit
dg_dir=$work/DeepGEMM
(
  set -e
  [ "${SKIP_LOGITS:-0}" = 1 ] && { echo "deepgemm: skipped (SKIP_LOGITS=1)"; exit 0; }
  if [ -f "$dg_built" ]; then
    tar -C "$work" -xJf "$dg_built"
    echo "deepgemm: carried build"
  else
    tar -C "$work" -xJf "$dg_src"
    cd "$dg_dir"
    mkdir -p deep_gemm/include
    cp -r third-party/cutlass/include/cute third-party/cutlass/include/cutlass deep_gemm/include/
    CXX=/usr/bin/g++ DG_USE_LOCAL_VERSION=0 python3 setup.py build_ext --inplace
    echo "deepgemm: built from source"
  fi
) >"$OUT/logs/deepgemm-build.log" 2>&1 &
dg_pid=$!

# 2. GPU tests.
timeout "$T_TESTS" "$B/dsa_gpu_tests" --gtest_filter="${GPU_TEST_FILTER:-*}" --gtest_output=json:"$OUT/logs/gpu_tests.json" \
  >"$OUT/logs/gpu_tests.log" 2>&1
rc_tests=$?
note "gpu tests: exit $rc_tests; $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/logs/gpu_tests.log" | tr '\n' ' ')"
grep -E '^\[  FAILED  \]' "$OUT/logs/gpu_tests.log" | head -20 | tee -a "$summary"

# 3 and 4. Every CUDA implementation of the table (dsa-oracle fuzz --list names them).
# Only those that can run on this GPU: cuda_sm100_sparse_logits is sm_100a code ("not here" on an H200).
# `fuzz --list` has a section of implementations and one of mutants: names are read from their own section.
impls=$("$B/dsa-oracle" fuzz --list 2>/dev/null |
  awk '/^implementations/ {s = 1; next} /^mutants/ {s = 0} s && $2 == "cuda" && $3 == "available" {print $1}' |
  sort -u | grep -E "${IMPLS:-.}" | tr '\n' ' ')
absent=$("$B/dsa-oracle" fuzz --list 2>/dev/null | grep -E '^ +cuda_[a-z0-9_]+ +cuda +not here' | awk '{print $1}' | tr '\n' ' ')
note "cuda implementations in the table that run here: ${impls:-none}; built but not for this GPU: ${absent:-none}"
for impl in $impls; do
  timeout $((FUZZ_SECONDS + 60)) "$B/dsa-oracle" fuzz --impl "$impl" --seed 20261201 --seconds "$FUZZ_SECONDS" --quiet \
    --out "$OUT/logs/fuzz_$impl.jsonl" >"$OUT/logs/fuzz_$impl.log" 2>&1
  note "fuzz $impl (seed 20261201, ${FUZZ_SECONDS}s): exit $? $(tail -3 "$OUT/logs/fuzz_$impl.log" | tr '\n' ' ')"
  "$B/dsa-oracle" check --help 2>&1 | grep -q -- --impl || { note "check --impl: not in this build"; continue; }
  for set in data/golden/*/*/; do
    [ -f "$set/manifest.json" ] || continue
    log="$OUT/logs/check_${impl}_$(basename "$(dirname "$set")")_$(basename "$set").log"
    timeout 120 "$B/dsa-oracle" check --impl "$impl" --golden "$set" --quiet >"$log" 2>&1
    rc=$?
    # A set none of whose cases the implementation takes is not a failure, and not a pass either.
    if [ $rc = 1 ] && grep -q "^nothing was checked" "$log"; then
      note "check --impl $impl $set: none of its cases ($(grep -E '^[0-9]+ cases:' "$log" | cut -d';' -f1))"
    else
      note "check --impl $impl $set: exit $rc $(grep -E '^[0-9]+ cases:' "$log")"
    fi
  done
done

# 5. Speed: ours, then DeepGEMM's in the same run.
if [ "${SKIP_LOGITS:-0}" != 1 ]; then
timeout "$T_SPEED" "$B/logits_speed" --json "$OUT/logs/ours.json" 2>&1 | tee "$OUT/logs/logits_speed.log"
while kill -0 "$dg_pid" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt "$T_DEEPGEMM_BUILD" ]; do sleep 2; done
if kill -0 "$dg_pid" 2>/dev/null; then kill "$dg_pid"; note "deepgemm build: stopped after ${T_DEEPGEMM_BUILD}s"; fi
wait "$dg_pid"
note "deepgemm build: exit $? ($(tail -1 "$OUT/logs/deepgemm-build.log"))"
PYTHONUNBUFFERED=1 PYTHONPATH=$dg_dir${PYTHONPATH:+:$PYTHONPATH} timeout "$T_DEEPGEMM" python3 "$here/deepgemm_bench.py" --json "$OUT/logs/deepgemm.json" \
  2>&1 | tee "$OUT/logs/deepgemm_bench.log" | tail -20
python3 "$here/speed_table.py" "$OUT/logs/ours.json" "$OUT/logs/deepgemm.json" --md "$OUT/RESULTS.md" \
  --json "$OUT/results.json" --meta "commit=$(head -1 "$B/COMMIT")" --meta "driver_smi=$driver" \
  --meta "date=$(date -u +%F)" >/dev/null 2>&1 || note "FAIL: speed table"
if [ ! -f "$dg_built" ] && [ -d "$dg_dir/deep_gemm" ]; then
  tar -C "$work" -I 'xz -T0 -1' -cf "$OUT/deepgemm-built.tar.xz" --exclude='DeepGEMM/third-party' --exclude='DeepGEMM/build' \
    DeepGEMM dg-jit 2>/dev/null
fi
fi
# With NCU=1: the hardware counters of one launch of the main shape (ncu works on Firecracker machines),
# at next_n = NCU_NEXT_N (default 1).
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  timeout 150 ncu --clock-control none --set full -k regex:sm90_logits_kernel -c 1 --print-details all \
    "$B/logits_speed" --shapes 64:65536 --next-n "${NCU_NEXT_N:-1}" --iters 2 >"$OUT/logs/ncu.txt" 2>&1
  note "ncu: exit $? ($(grep -c . "$OUT/logs/ncu.txt") lines in logs/ncu.txt)"
fi
command -v cuobjdump >/dev/null && cuobjdump -sass "$B/logits_speed" 2>/dev/null | xz >"$OUT/logs/sass.txt.xz"

# 6. The selection kernels (docs/cuda.md, "Selection").
if [ "${SKIP_SELECT:-0}" != 1 ]; then
  # The GPU campaign against each bug injected into the CUDA kernel (docs/mutants.md): killed or not.
  cuda_mutants=$("$B/dsa-oracle" fuzz --list 2>/dev/null | awk '/^mutants/ {s = 1; next} s && $1 ~ /^cuda_/ {print $1}' |
    sort -u | paste -sd, -)
  if [ -n "$cuda_mutants" ]; then
    timeout "${T_MUTANTS:-150}" "$B/dsa-oracle" fuzz --mutants "$cuda_mutants" --mutant-seconds "${MUTANT_SECONDS:-20}" \
      --seed 20261201 --quiet --out "$OUT/logs/cuda_mutants.jsonl" >"$OUT/logs/cuda_mutants.log" 2>&1
    note "cuda mutant table: exit $?"
    tee -a "$summary" <"$OUT/logs/cuda_mutants.log" | tail -12
  else
    note "cuda mutants: not in this bundle"
  fi
  # vLLM's kernel under the same fuzzer (a baseline: its failures are vLLM's bugs, SPEC 10).
  if "$B/dsa-oracle" fuzz --list 2>/dev/null | grep -q vllm_top_k_per_row_decode; then
    timeout $((FUZZ_SECONDS + 60)) "$B/dsa-oracle" fuzz --impl vllm_top_k_per_row_decode --seed 20261201 \
      --seconds "$FUZZ_SECONDS" --quiet --out "$OUT/logs/fuzz_vllm.jsonl" >"$OUT/logs/fuzz_vllm.log" 2>&1
    note "fuzz vllm_top_k_per_row_decode (seed 20261201, ${FUZZ_SECONDS}s): exit $? $(tail -3 "$OUT/logs/fuzz_vllm.log" | tr '\n' ' ')"
  fi
  timeout "${T_SELECT_SPEED:-150}" "$B/select_speed" --json "$OUT/logs/select.json" 2>&1 | tee "$OUT/logs/select_speed.log" | tail -40
  PYTHONUNBUFFERED=1 timeout "${T_TORCH:-90}" python3 "$here/select_torch_bench.py" --json "$OUT/logs/select_torch.json" \
    >"$OUT/logs/select_torch.log" 2>&1 || note "torch.topk bench: failed ($(tail -1 "$OUT/logs/select_torch.log"))"
  # At 256 requests as well: the launches' fixed costs weigh less there (the ratio against batch).
  timeout "${T_PATH_SPEED:-120}" "$B/candidate_path_speed" --batches 8,64,256 --json "$OUT/logs/candidate_path.json" 2>&1 |
    tee "$OUT/logs/candidate_path.log"
  note "candidate_path_speed: exit ${PIPESTATUS[0]} $(tail -2 "$OUT/logs/candidate_path.log" | tr '\n' ' ')"
  # The physical floor of the compact launch's gather (random 1-8 KB chunks of a K cache), and what writes cost beside it.
  if [ -x "$B/gather_floor" ]; then
    timeout 60 "$B/gather_floor" --json "$OUT/logs/gather_floor.json" 2>&1 | tee "$OUT/logs/gather_floor.log"
    note "gather_floor: exit ${PIPESTATUS[0]} $(tail -19 "$OUT/logs/gather_floor.log" | tr -s ' ' | tr '\n' ';')"
  fi
  python3 "$here/select_table.py" "$OUT/logs/select.json" "$OUT/logs/select_torch.json" --md "$OUT/SELECT_RESULTS.md" \
    --path "$OUT/logs/candidate_path.json" \
    --json "$OUT/select_results.json" --meta "commit=$(head -1 "$B/COMMIT")" --meta "driver_smi=$driver" \
    --meta "gpu=$gpu" --meta "date=$(date -u +%F)" >"$OUT/logs/select_table.log" 2>&1 || note "FAIL: selection table"
  command -v cuobjdump >/dev/null && cuobjdump -sass -res-usage "$B/select_speed" 2>/dev/null | xz >"$OUT/logs/select_sass.txt.xz"
  # With NCU_SELECT=1: the hardware counters of one group_topk launch (64 x 128k, k 2048, normal).
  if [ "${NCU_SELECT:-0}" = 1 ] && command -v ncu >/dev/null; then
    timeout 150 ncu --clock-control none --set full -k regex:group_topk -c 1 --print-details all \
      "$B/select_speed" --quick --reps 2 >"$OUT/logs/select_ncu.txt" 2>&1
    note "ncu group_topk: exit $? ($(grep -c . "$OUT/logs/select_ncu.txt") lines in logs/select_ncu.txt)"
    cp "$OUT/logs/select_ncu.txt" "$OUT/select_ncu.txt" 2>/dev/null
  fi
fi
# The SM100 sparse logits kernel's SASS (block-scaled tcgen05 MMA, no local memory) and ISA report:
# CPU machines have no cuobjdump, this one does.
bash "$root/scripts/check_sm100_sass.sh" "$B/dsa-oracle" "$OUT/sm100_sass.md" >"$OUT/logs/sm100_sass.log" 2>&1
note "sm100 SASS check: exit $? ($(tail -1 "$OUT/logs/sm100_sass.log"))"
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$OUT/logs"
note "elapsed $(( $(date +%s) - t0 )) s"
echo "==== speed ===="
cat "$OUT/RESULTS.md" "$OUT/SELECT_RESULTS.md" 2>/dev/null
echo "==== summary ===="
cat "$summary"
