#!/usr/bin/env bash
# Hardware counters of the paged logits launch of both variants at one shape, on a machine with an sm_90 GPU: ncu's
# full set with source counters of one launch (after the first) of logits_speed, the accurate variant's and the
# standard one's, and where their warps wait (scripts/gpu/ncu_sass_stalls.py: the samples by stall reason and by
# execution count, so the unit loop's share and its waits on the K tile and on the wgmma groups can be read).
# Per variant under $OUT/profile/: ncu's details page, its SASS page (gzipped) and the summary.
#   scripts/gpu/profile_paged_logits.sh BUNDLE.tar.xz [BATCH:CONTEXT] [NEXT_N]   (default 128:32768 2)
# H 64 and D 128 (logits_speed's). The clocks are left to the card (--clock-control none), as in the timed runs.
set -uo pipefail
bundle=${1:?usage: profile_paged_logits.sh BUNDLE.tar.xz [BATCH:CONTEXT] [NEXT_N]}
shape=${2:-128:32768}
next_n=${3:-2}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/profile"
command -v ncu >/dev/null || { echo "profile_paged_logits: no ncu on this machine" >&2; exit 1; }
here=$(dirname "$0")
source "$here/bundle.sh"
work=/tmp/dsa-profile-paged
B=$(unpack_bundle "$bundle" "$work") || { echo "profile_paged_logits: cannot unpack $bundle" >&2; exit 1; }
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0
# The demangled name's third template argument is the variant ((bool)1 accurate), the fourth the mode (0 paged).
for accurate in 1 0; do
  name=paged-$([ "$accurate" = 1 ] && echo accurate || echo standard)-${shape/:/x}-n$next_n
  echo "== $name"
  timeout 300 ncu --clock-control none --set full --import-source yes --kernel-name-base demangled \
    -k "regex:sm90_logits_kernel<\\(int\\)64, \\(int\\)128, \\(bool\\)$accurate, \\(dsa::cuda::kernels::LogitsMode\\)0" \
    -s 1 -c 1 -f -o "$work/$name" "$B/logits_speed" --shapes "$shape" --next-n "$next_n" --iters 2 --rounds 1 \
    >"$OUT/profile/$name-run.txt" 2>&1
  rc=$?
  echo "   ncu exit $rc"
  [ "$rc" = 0 ] || { status=1; continue; }
  ncu --import "$work/$name.ncu-rep" --page details --print-details all >"$OUT/profile/$name-details.txt" 2>&1
  ncu --import "$work/$name.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip >"$OUT/profile/$name-source.csv.gz"
  grep -E "^\s+(Duration|Elapsed Cycles|SM Frequency|DRAM Throughput|Issue Slots Busy|No Eligible|Eligible Warps Per Scheduler) " \
    "$OUT/profile/$name-details.txt" | awk '!seen[$1 $2]++' | sed 's/^/   /'
  python3 "$here/ncu_sass_stalls.py" "$OUT/profile/$name-source.csv.gz" 20 >"$OUT/profile/$name-stalls.txt" || status=1
  head -14 "$OUT/profile/$name-stalls.txt" | sed 's/^/   /'
done
exit $status
