#!/bin/sh
# Regenerates the committed golden sets: data/golden/<profile>/<preset>/.
# Usage: data/golden/regenerate.sh [path/to/dsa-oracle]
# The ctest GoldenRegen.* does the same into a temporary folder and compares
# the bytes: a change that alters the reference's output fails it until the
# sets are regenerated (and the change reviewed).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cli=${1:-dsa-oracle}
while read -r profile presets; do
  for preset in $presets; do
    rm -rf "$here/$profile/$preset"
    "$cli" golden --preset "$preset" --profile "$profile" --size small --seed 1 --out "$here/$profile/$preset"
  done
done <<SETS
exact v32_decode v41_c4a prefill gfx942 mxfp4 edge
deepgemm_sm90 v32_decode v41_c4a edge
deepgemm_sm100 v32_decode edge
deepgemm_sm100_bf16 mxfp4 edge
aiter_gfx942_gluon gfx942 edge
dsa_gfx942 gfx942
vllm_triton_c4a v41_c4a edge
dsa_sm90 edge
dsa_sm90_accurate edge
SETS
