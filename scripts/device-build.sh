#!/usr/bin/env bash
# Builds the `doppler` CLI on a machine whose libtorch comes from a PyTorch wheel (e.g. the GPU
# machine of the device tool: Ubuntu, no libtorch-dev), without tests and benchmarks, in
# BUILD_DIR (default build-dev). Used by scripts/learned_results.sh runs on big machines.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-dev}
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
[ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDOPPLER_BUILD_TESTS=OFF -DDOPPLER_BUILD_BENCH=OFF -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$build" --target doppler -j "$(nproc)" -- -k 0
