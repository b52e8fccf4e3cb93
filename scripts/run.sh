#!/usr/bin/env bash
# Installs the dependencies, builds and installs dsa-oracle (scripts/install.sh), runs the main job on defaults.
# Extra arguments go to `dsa-oracle run` (e.g. --rows 16 --context 131072 --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec ./build/dsa-oracle run "$@"
