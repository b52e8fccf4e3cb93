#!/usr/bin/env bash
# A kernel change against its base on one GPU, in one call (METHOD.md: compare only timings of the
# same card and call): the GPU tests of the NEW bundle, then each speed command run with the OLD
# bundle's binary and the NEW one's in turn, ROUNDS times, so that the card's drift shows as the
# spread between rounds rather than as a difference between the two. Bundles are make_bundle.sh's.
#   scripts/gpu/ab_bundles.sh OLD.tar.xz NEW.tar.xz "PROGRAM ARGS" ...
#   e.g. ... "logits_speed --next-n 1" "candidate_path_speed --batches 64,256"
# Environment: ROUNDS (default 2), TESTS (a gtest filter for dsa_gpu_tests; default every test,
# "none" to skip them), OUT (default ./gpu-out). Writes $OUT/ab-tests.txt and $OUT/ab-speed.txt;
# exits 1 when a test of NEW failed or a speed program did not exit 0 (candidate_path_speed exits 3
# when the two paths chose differently), 2 on a bad argument.
set -uo pipefail
old=${1:-}
new=${2:-}
if [ -z "$old" ] || [ -z "$new" ] || [ $# -lt 3 ]; then
  echo "usage: ab_bundles.sh OLD.tar.xz NEW.tar.xz \"PROGRAM ARGS\" ..." >&2
  exit 2
fi
shift 2
rounds=${ROUNDS:-2}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
source "$(dirname "$0")/bundle.sh"
work=/tmp/dsa-ab
for side in old new; do
  bundle=$old
  [ "$side" = new ] && bundle=$new
  unpack_bundle "$bundle" "$work/$side" >/dev/null || { echo "ab_bundles: cannot unpack $bundle" >&2; exit 2; }
done
for cmd in "$@"; do
  program=${cmd%% *}
  [ -x "$work/new/gpu-bundle/$program" ] || { echo "ab_bundles: no program $program in the bundles" >&2; exit 2; }
done
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 || echo "no nvidia-smi"; } |
  tee "$OUT/ab-speed.txt"
echo "old: $(tr '\n' ' ' <"$work/old/gpu-bundle/COMMIT")  new: $(tr '\n' ' ' <"$work/new/gpu-bundle/COMMIT")" |
  tee -a "$OUT/ab-speed.txt"

status=0
if [ "${TESTS:-}" != none ]; then
  echo "== GPU tests of new (${TESTS:-all})"
  (cd "$work" && LD_LIBRARY_PATH=$work/new/gpu-bundle/lib timeout 420 "$work/new/gpu-bundle/dsa_gpu_tests" \
    --gtest_filter="${TESTS:-*}" >"$OUT/ab-tests.txt" 2>&1)
  status=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ test" "$OUT/ab-tests.txt" | sed 's/^/   /'
  [ $status -eq 0 ] || { echo "ab_bundles: GPU tests of new failed (exit $status)"; status=1; }
fi

for round in $(seq 1 "$rounds"); do
  for cmd in "$@"; do
    for side in old new; do
      echo "== round $round, $side: $cmd" | tee -a "$OUT/ab-speed.txt"
      # shellcheck disable=SC2086  # the command's words
      LD_LIBRARY_PATH=$work/$side/gpu-bundle/lib timeout 300 "$work/$side/gpu-bundle/"$cmd >>"$OUT/ab-speed.txt" 2>&1
      rc=$?
      echo "   exit $rc" | tee -a "$OUT/ab-speed.txt"
      [ $rc -eq 0 ] || status=1
    done
  done
done
exit $status
