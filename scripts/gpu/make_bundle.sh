#!/usr/bin/env bash
# Builds, on a CPU machine of the project, the bundle that scripts/gpu/run_all.sh runs on the GPU
# machine (which has no Debian packages): portable binaries (x86-64-v3, no -march=native) and every
# shared library they load except the C library and the CUDA driver, in one tarball.
#   scripts/gpu/make_bundle.sh [BUILD_DIR] [TARBALL]   (defaults: build-bundle, gpu-bundle.tar.xz)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-bundle}
tarball=${2:-gpu-bundle.tar.xz}
# The bundle also holds the selection kernels' mutants (DSA_CUDA_MUTANTS) and, where its source was
# fetched (optimized/cuda/vllm_baseline/README.md), vLLM's decode top-k as a baseline. Device code
# carries line information (-lineinfo: a line table beside the same machine code; the sm_90a code of
# select_launch.cu's 12 kernels and select_rows.cu's 3 is byte-identical with and without it, checked
# 2026-12-05), so that ncu's source page (scripts/gpu/profile_select.sh) puts each SASS instruction
# beside its line of source.
vllm=OFF
[ -f third_party/vllm/csrc/libtorch_stable/sampler.cu ] && vllm=ON
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDSA_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 \
  -DCMAKE_CUDA_FLAGS=-lineinfo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache -DDSA_CUDA_MUTANTS=ON \
  -DDSA_VLLM_BASELINE=$vllm -DDSA_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target dsa-oracle dsa_gpu_tests logits_speed select_speed candidate_path_speed gather_floor row_phases
stage=$(mktemp -d)
mkdir -p "$stage/gpu-bundle/lib"
cp "$build/dsa-oracle" "$build/tests/dsa_gpu_tests" "$build/bench/logits_speed" "$build/bench/select_speed" \
  "$build/bench/candidate_path_speed" "$build/bench/gather_floor" "$build/bench/row_phases" "$stage/gpu-bundle/"
for bin in "$stage"/gpu-bundle/dsa-oracle "$stage"/gpu-bundle/dsa_gpu_tests "$stage"/gpu-bundle/logits_speed \
  "$stage"/gpu-bundle/select_speed "$stage"/gpu-bundle/candidate_path_speed "$stage"/gpu-bundle/gather_floor \
  "$stage"/gpu-bundle/row_phases; do
  ldd "$bin" | awk '/=> \// {print $3}' |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libcuda|ld-linux[^/]*)\.so' |
    xargs -r -I{} cp -L -n {} "$stage/gpu-bundle/lib/"
done
git rev-parse HEAD >"$stage/gpu-bundle/COMMIT"
echo "vllm_baseline=$vllm" >"$stage/gpu-bundle/BUILD"
git status --porcelain --untracked-files=no | grep -q . && echo dirty >>"$stage/gpu-bundle/COMMIT" || true
# xz -9: about 9 MB (23 MB at -1), so that a bundle travels to the GPU machine beside the repository's 41 MB
# within the device tool's 64 MiB.
tar -C "$stage" -I 'xz -T0 -9' -cf "$tarball" gpu-bundle
rm -rf "$stage"
echo "make_bundle: $tarball ($(du -h "$tarball" | cut -f1)) from $(git rev-parse --short HEAD)"
