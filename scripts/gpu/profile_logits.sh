#!/usr/bin/env bash
# Hardware counters of the consumer step's logits launches at one batch, on a machine with an sm_90
# GPU: ncu's full set of one replay each of the compact candidate logits (2048 blocks of 8 at 128k
# context) and of the dense paged logits they replace, from candidate_path_speed, so that the
# compact launch's gather (how far its bandwidth falls short of the dense launch's and of
# gather_floor's) can be read beside the dense launch's: DRAM throughput, L2 sectors, and the
# loader and math warps' stalls. Per launch: ncu's details page and its SASS page with the source
# lines (gzipped) under $OUT/profile/.
#   scripts/gpu/profile_logits.sh BUNDLE.tar.xz [BATCH]   (default 64)
set -uo pipefail
bundle=${1:?usage: profile_logits.sh BUNDLE.tar.xz [BATCH]}
batch=${2:-64}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/profile"
command -v ncu >/dev/null || { echo "profile_logits: no ncu on this machine" >&2; exit 1; }
source "$(dirname "$0")/bundle.sh"
work=/tmp/dsa-profile-logits
B=$(unpack_bundle "$bundle" "$work") || { echo "profile_logits: cannot unpack $bundle" >&2; exit 1; }
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The kernels' demangled names carry the mode as "(dsa::cuda::kernels::LogitsMode)N" (0 paged,
# 1 compact) and the fused launch's ranking as the last template argument, "(bool)1" (ncu prints bools as "(bool)0" and "(bool)1": 2026-12-05, H100).
profile() {
  local name=$1 kernel=$2 skip=$3
  echo "== $name: ncu of launch $((skip + 1)) matching $kernel, candidate_path_speed --batches $batch"
  timeout 300 ncu --clock-control none --set full --import-source yes --kernel-name-base demangled \
    -k "regex:$kernel" -s "$skip" -c 1 -f -o "$work/$name" \
    "$B/candidate_path_speed" --batches "$batch" --reps 2 >"$OUT/profile/$name-run.txt" 2>&1
  echo "   ncu exit $?"
  ncu --import "$work/$name.ncu-rep" --page details --print-details all >"$OUT/profile/$name-details.txt" 2>&1
  ncu --import "$work/$name.ncu-rep" --page source --print-source cuda,sass --csv 2>&1 | gzip >"$OUT/profile/$name-source.csv.gz"
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|Warp Cycles Per Issued|Issued Ipc Active|Grid Size" \
    "$OUT/profile/$name-details.txt" | sed 's/^/   /'
}

# Launch 1 of the paged kernel fills the logits the candidate blocks come from; the timed replays follow.
profile "dense-logits-$batch" 'sm90_logits_kernel<.*LogitsMode\)0' 2
profile "compact-logits-$batch" 'sm90_logits_kernel<.*LogitsMode\)1.*\(bool\)0>' 1
