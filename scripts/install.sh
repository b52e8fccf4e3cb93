#!/usr/bin/env bash
# Installs the Debian packages, builds dsa-oracle (Release) and installs it:
# the CLI, the C++ libraries with their headers and CMake package
# (find_package(dsa_oracle)), and the Python module `dsa_oracle` where
# Debian's /usr/bin/python3 finds it. Prefix: /usr/local, or PREFIX=...
# (another prefix needs PYTHONPATH=PREFIX/lib/python3.X/dist-packages).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${PREFIX:-/usr/local}"
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target dsa-oracle dsa_oracle_python dsa_reference dsa_oracle dsa_optimized_cpu \
  dsa_dataset dsa_fuzz dsa_oracle_python_sources
SUDO=""
if [ "$(id -u)" -ne 0 ] && [ ! -w "$prefix" ]; then SUDO="sudo"; fi
$SUDO cmake --install build --prefix "$prefix" > build/install.log
echo "install: $(grep -c Installing build/install.log) files under $prefix (build/install.log)"
if [ "$prefix" = /usr/local ] || [ "$prefix" = /usr ]; then
  (cd / && /usr/bin/python3 -c "import dsa_oracle; print('install: import dsa_oracle ->', dsa_oracle.__file__)")
fi
