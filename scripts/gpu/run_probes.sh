#!/usr/bin/env bash
# Builds the Hopper matrix-unit probes (tools/probes) with nvcc for sm_90a, runs them on the GPU and
# writes their dumps, SHA256SUMS and probe_log.txt to $OUT (default ./probe-out). With --oracle PATH
# (a built dsa-oracle), every dump is then checked against the models: `mma-check` must match all.
#
#   bash scripts/gpu/run_probes.sh [--oracle build/dsa-oracle] [--seed N] [--scale F]
#
# Needs an sm_90 GPU (H100/H200) and nvcc >= 12.0; docs/probes.md says what each dump holds.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-$PWD/probe-out}
build=${PROBE_BUILD_DIR:-${TMPDIR:-/tmp}/dsa-probes-build}
oracle=""
probe_args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --oracle) oracle=$2; shift 2 ;;
    --seed | --scale) probe_args+=("$1" "$2"); shift 2 ;;
    --dry-run) probe_args+=("$1"); shift ;;  # no GPU: build, and write the inputs with D unwritten
    *) echo "usage: $0 [--oracle PATH] [--seed N] [--scale F] [--dry-run]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out" "$build"

main() {
  echo "== environment"
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader || true
  nvcc --version | tail -n 2
  echo "source commit: ${PROBE_SOURCE_COMMIT:-$(git -C "$root" rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}"
  (cd "$root" && sha256sum tools/probes/*.hpp tools/probes/*.cpp tools/probes/*.cu scripts/gpu/run_probes.sh)

  echo "== build (nvcc, sm_90a)"
  flags=(-O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I"$root/tools/probes")
  status=0
  for probe in mma_sync wgmma; do
    nvcc "${flags[@]}" -o "$build/probe_$probe" "$root/tools/probes/${probe}_probe.cu" "$root/tools/probes/operand_draw.cpp" ||
      { echo "build of probe_$probe FAILED"; return 1; }
  done
  if command -v cuobjdump >/dev/null; then
    echo "== SASS (matrix instructions per binary)"
    for probe in mma_sync wgmma; do
      echo "probe_$probe:"
      cuobjdump --dump-sass "$build/probe_$probe" | grep -oE '\b(HMMA|QMMA|QGMMA|HGMMA|F2FP|WARPGROUP)[.A-Z0-9x_]*' |
        sort | uniq -c
    done
  fi

  echo "== run"
  for probe in mma_sync wgmma; do
    "$build/probe_$probe" --out "$out" "${probe_args[@]}" || { echo "probe_$probe FAILED (exit $?)"; status=1; }
  done

  echo "== checksums"
  (cd "$out" && sha256sum ./*.bin | sed 's| \./| |' | tee SHA256SUMS)

  if [[ -n $oracle ]]; then
    echo "== mma-check"
    check() {  # model format files...
      local model=$1 format=$2
      shift 2
      "$oracle" mma-check --model "$model" --format "$format" "$@" || status=1
    }
    check sm90_mma_sync_e4m3 single "$out"/probe_mma_sync_m16n8k32_e4m3.bin "$out"/probe_mma_sync_m16n8k32_e4m3_edge.bin
    check sm90_mma_sync_e4m3 chain "$out"/probe_mma_sync_chain_k128_e4m3.bin
    check sm90_wgmma_e4m3 single "$out"/probe_wgmma_m64n8k32_e4m3.bin "$out"/probe_wgmma_m64n8k32_e4m3_edge.bin
    check sm90_wgmma_e4m3 chain "$out"/probe_wgmma_chain_k128_e4m3.bin
  fi
  echo "== $([[ $status == 0 ]] && echo done || echo FAILED)"
  return $status
}

main 2>&1 | tee "$out/probe_log.txt"
exit "${PIPESTATUS[0]}"
