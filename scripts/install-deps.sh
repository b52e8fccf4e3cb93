#!/usr/bin/env bash
# Installs every Debian package dsa-oracle needs on a bare Debian 12 machine.
# Safe to run again: apt-get skips what is already there.
# DSA_WITH_TORCH=1 adds Debian's python3-torch, for the torch tests of the
# pytest suite (they skip without it). CI leaves it out: it is 177 packages,
# 143 MB to download and 583 MB on disk, about 3 minutes of a CI run
# (docs/python.md, "Tests").
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential cmake ninja-build pkg-config ccache
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libeigen3-dev libcli11-dev nlohmann-json3-dev libfmt-dev libssl-dev zlib1g-dev
  libomp-dev
  clang-19 lld-19 llvm-19 libclang-rt-19-dev rocm-device-libs libamdhip64-dev
  python3 python3-numpy python3-dev pybind11-dev python3-pybind11 python3-pytest
)
if [ "${DSA_WITH_TORCH:-0}" = 1 ]; then packages+=(python3-torch); fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
