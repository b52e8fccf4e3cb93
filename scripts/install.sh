#!/usr/bin/env bash
# Installs the Debian packages, builds dsa-oracle (Release) and installs it:
# the CLI, the C++ libraries with their headers and CMake package
# (find_package(dsa_oracle)), and the Python module `dsa_oracle` where
# Debian's /usr/bin/python3 finds it. Prefix: /usr/local, or PREFIX=...
# (another prefix needs PYTHONPATH=PREFIX/lib/python3.X/dist-packages).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="$(realpath -m "${PREFIX:-/usr/local}")"
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target dsa-oracle dsa_oracle_python dsa_reference dsa_oracle dsa_optimized_cpu \
  dsa_dataset dsa_fuzz dsa_oracle_python_sources
SUDO=""
if [ "$(id -u)" -ne 0 ] && [ ! -w "$prefix" ]; then SUDO="sudo"; fi
$SUDO cmake --install build --prefix "$prefix" > build/install.log
echo "install: $(grep -c Installing build/install.log) files under $prefix (build/install.log)"
# The README's promise, checked where it is made: Debian's python3 imports the
# installed module from any directory, with no PYTHONPATH, and it runs.
pydir="$prefix/lib/python3.$(/usr/bin/python3 -c 'import sys; print(sys.version_info.minor)')/dist-packages"
if [ "$prefix" = /usr/local ] || [ "$prefix" = /usr ]; then
  pypath=""
else
  pypath="$pydir"
fi
(cd / && env -u PYTHONPATH ${pypath:+PYTHONPATH="$pypath"} PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 - "$pydir" <<'PY'
import sys

import numpy as np

import dsa_oracle

assert dsa_oracle.__file__.startswith(sys.argv[1]), f"imported {dsa_oracle.__file__}, not the one under {sys.argv[1]}"
topk = dsa_oracle.reference.topk(np.array([[1, 5, 3, 5, 2]], np.float32), 2)
assert sorted(topk[0].tolist()) == [1, 3], topk
print("install: import dsa_oracle from / ->", dsa_oracle.__file__)
PY
)
