#!/usr/bin/env bash
# Reproduces docs/results/video.md: torchvision's video ResNets r3d_18, mc3_18 and r2plus1d_18
# (seeded random weights, one 16-frame clip of 112 x 112) exported by tests/onnx/models.py,
# imported with `doppler import` (3-D convolutions: docs/onnx.md) for 4 devices and placed by
# every method with `doppler compare` on 4 x P100 (scripts/vision_results.sh: the same
# simulator-call budget for every search and learned method), beside the whole model on one
# device (`single`); then run on the CPU engine against PyTorch (scripts/video_engine.py; run it
# on an idle machine).
# Usage: scripts/video_results.sh [BUILD_DIR] [OUT_DIR] [SEEDS] [BUDGET]
# Environment: MODELS, PROFILES (p100:4), METHODS, PYTHON (default /usr/bin/python3 with
# python3-torch, python3-torchvision, python3-onnx), ENGINE=0 to leave out the engine table.
set -euo pipefail
build=${1:-build}
out=${2:-video-results}
here=$(cd "$(dirname "$0")/.." && pwd)
policy="$here/models/doppler-pretrained.pt"
export MODELS=${MODELS:-r3d_18 mc3_18 r2plus1d_18}
export SIZES=b1
export PROFILES=${PROFILES:-p100:4}
export METHODS=${METHODS:-critical-path,heft,etf,local-search,multilevel:inner=dsc,doppler-sim:policy=$policy,il=0,sim=1000,samples=64,single}
"$here/scripts/vision_results.sh" "$build" "$out" "${3:-3}" "${4:-2000}"
if [ "${ENGINE:-1}" != 0 ]; then
  echo
  # shellcheck disable=SC2086  # the model names are words
  "${PYTHON:-/usr/bin/python3}" "$here/scripts/video_engine.py" "$build" "$out" $MODELS |
    tee -a "$out/table.md"
fi
