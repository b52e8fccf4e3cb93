#!/usr/bin/env bash
# Installs the dependencies, builds dsa-oracle and runs the main job on defaults.
# Extra arguments go to `dsa-oracle run` (e.g. --rows 16 --context 131072 --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target dsa-oracle
exec ./build/dsa-oracle run "$@"
