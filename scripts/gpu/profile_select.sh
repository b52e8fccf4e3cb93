#!/usr/bin/env bash
# Hardware counters of the selection kernels where they are latency-bound (few short rows), on a
# machine with an sm_90 GPU: ncu's full set of one launch each of
#   - the compact top-k of 8 rows of 16384 candidate logits (the group kernel at G blocks a row,
#     the row kernel, the short-row kernel: select_speed --profile-compact G),
#   - the decode top-k of ROWS x COLS (select_speed --profile-dense), for each shape given.
# Per launch: ncu's details page (every section), its SASS page (the executed instructions and sampled
# stalls of every instruction, CSV, gzipped) and the same beside the source lines (the bundle's device
# code carries line information), under $OUT/profile/. NCU_CACHE=none keeps the caches warm between
# ncu's replays of a launch (as a graph replay finds them); the default flushes them.
#   scripts/gpu/profile_select.sh BUNDLE.tar.xz [G] [ROWS:COLS ...]   (defaults: G 4, 8:131072)
set -uo pipefail
bundle=${1:?usage: profile_select.sh BUNDLE.tar.xz [G] [ROWS:COLS ...]}
group=${2:-4}
shift 2 2>/dev/null || shift $#
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(8:131072)
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/profile"
command -v ncu >/dev/null || { echo "profile_select: no ncu on this machine" >&2; exit 1; }
source "$(dirname "$0")/bundle.sh"
work=/tmp/dsa-profile
B=$(unpack_bundle "$bundle" "$work") || { echo "profile_select: cannot unpack $bundle" >&2; exit 1; }
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# profile NAME KERNEL_REGEX SKIP ARGS...: the (SKIP+1)-th launch of a kernel matching the regex.
profile() {
  local name=$1 kernel=$2 skip=$3
  shift 3
  echo "== $name: ncu of $kernel (launch $((skip + 1))) in select_speed $*"
  timeout 240 ncu --clock-control none --cache-control "${NCU_CACHE:-all}" --set full --import-source yes -k "regex:$kernel" -s "$skip" -c 1 \
    -f -o "$work/$name" "$B/select_speed" "$@" >"$OUT/profile/$name-run.txt" 2>&1
  echo "   ncu exit $?"
  ncu --import "$work/$name.ncu-rep" --page details --print-details all >"$OUT/profile/$name-details.txt" 2>&1
  ncu --import "$work/$name.ncu-rep" --page source --print-source sass --csv >"$OUT/profile/$name-sass.csv" 2>&1
  gzip -f "$OUT/profile/$name-sass.csv"
  ncu --import "$work/$name.ncu-rep" --page source --print-source cuda,sass --csv 2>&1 | gzip >"$OUT/profile/$name-source.csv.gz"
  grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issued Ipc Active|Block Size|Grid Size|Cluster Size" \
    "$OUT/profile/$name-details.txt" | sed 's/^/   /'
}

profile "compact-group$group" group_topk 1 --profile-compact "$group"
profile "compact-row" row_topk 1 --profile-compact "$group"
profile "compact-short" short_row_topk 1 --profile-compact "$group"
for s in "${shapes[@]}"; do
  profile "dense-${s/:/x}" "group_topk|row_topk" 1 --profile-dense "$s"
done
