#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then from outside the tree: a tiny
# CMake project built against it (find_package(dsa_oracle)), the installed
# CLI, and the installed Python module imported by Debian's python3.
# Usage: install_test.sh BUILD_DIR PYTHON
set -euo pipefail
build=$1
python=$2
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/dsa-install-test-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "== cmake --install into $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
for f in bin/dsa-oracle include/dsa/topk.hpp include/dsa/oracle/report.hpp lib/cmake/dsa_oracle/dsa_oracleConfig.cmake; do
  [ -e "$tmp/prefix/$f" ] || { echo "missing after install: $f"; cat "$tmp/install.log"; exit 1; }
done

echo "== a consumer project: find_package(dsa_oracle), dsa_oracle::reference dsa_oracle::oracle"
cmake -S "$here/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; exit 1; }
cmake --build "$tmp/consumer" > "$tmp/consumer-build.log" 2>&1 || { cat "$tmp/consumer-build.log"; exit 1; }
"$tmp/consumer/consumer"

echo "== the installed CLI"
"$tmp/prefix/bin/dsa-oracle" --help > /dev/null

echo "== the installed Python module, from another directory"
pydir="$(echo "$tmp"/prefix/lib/python3*/dist-packages)"
[ -d "$pydir/dsa_oracle" ] || { echo "no dsa_oracle package under $tmp/prefix/lib"; exit 1; }
cd "$tmp"
env -u PYTHONPATH PYTHONPATH="$pydir" PYTHONDONTWRITEBYTECODE=1 "$python" - "$pydir" <<'PY'
import sys

import numpy as np

import dsa_oracle

assert dsa_oracle.__file__.startswith(sys.argv[1]), dsa_oracle.__file__
logits = np.array([[1, 5, 3, 5, 2]], np.float32)
topk = dsa_oracle.reference.topk(logits, 2)
assert sorted(topk[0].tolist()) == [1, 3], topk
dsa_oracle.testing.assert_topk_valid(topk, logits)
print("import dsa_oracle from", dsa_oracle.__file__)
PY
echo "install test: passed"
