#!/usr/bin/env bash
# Installs every Debian package Doppler needs to build, test, benchmark and fuzz.
# Idempotent: asks apt only for what is missing, and does nothing (fast) when all is present.
# Shared by `make demo`, `make test`, `make bench` and `.ci/run`.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ make cmake ninja-build pkg-config clang-format ccache shellcheck
  # libraries (see DEVELOPERS.md)
  libtorch-dev libopenblas-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev zlib1g-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  # graph readers (DOT via Graphviz cgraph)
  libgraphviz-dev
  # ONNX import (libonnx) and test models exported from PyTorch (python3-torch, python3-onnx)
  libonnx-dev libprotobuf-dev protobuf-compiler python3-torch python3-onnx python3-numpy
  python3-torchvision
  # the Python binding (python/) and its tests; networkx for doppler.from_networkx's tests
  pybind11-dev python3-dev python3-pytest python3-networkx python3-matplotlib
  # its packaging (pyproject.toml, setup.py): pip install . and python3 -m build, offline
  python3-pip python3-setuptools python3-wheel python3-build
  # fuzzing and sanitizers (clang + its runtime)
  clang libclang-rt-14-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}" >&2
  echo "install-deps: not root; run this as root, then retry:" >&2
  echo "  apt-get update && DEBIAN_FRONTEND=noninteractive $cmd" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done" >&2
