#!/usr/bin/env bash
# Reproduces docs/results/video.md: torchvision's video ResNets r3d_18, mc3_18 and r2plus1d_18
# (seeded random weights, one 16-frame clip of 112 x 112) exported by tests/onnx/models.py,
# imported with `doppler import` (3-D convolutions: docs/onnx.md) for 4 devices and placed by
# every method with `doppler compare` on 4 x P100 (the same simulator-call budget for every search
# and learned method), beside the whole model on one device (`single`); then run on
# the CPU engine against PyTorch (scripts/video_engine.py; run it on an idle machine).
# Usage: scripts/video_results.sh [BUILD_DIR] [OUT_DIR] [SEEDS] [BUDGET]
# Environment: MODELS, PROFILE (p100:4), METHODS, PYTHON (default /usr/bin/python3 with
# python3-torch, python3-torchvision, python3-onnx), ENGINE=0 to leave out the engine table.
set -euo pipefail
build=${1:-build}
out=${2:-video-results}
seeds=${3:-3}
budget=${4:-2000}
here=$(cd "$(dirname "$0")/.." && pwd)
policy="$here/models/doppler-pretrained.pt"
models=${MODELS:-r3d_18 mc3_18 r2plus1d_18}
profile=${PROFILE:-p100:4}
methods=${METHODS:-critical-path,heft,etf,local-search,multilevel:inner=dsc,doppler-sim:policy=$policy,il=0,sim=1000,samples=64,single}
python=${PYTHON:-/usr/bin/python3}
doppler="$build/doppler"
hw=${profile%%:*}
p=${profile##*:}
mkdir -p "$out"
for model in $models; do
  onnx="$out/$model-b1"
  dir="$onnx/$hw"
  mkdir -p "$dir"
  [ -f "$onnx/model.onnx" ] || "$python" "$here/tests/onnx/models.py" export "$model" b1 "$onnx" >/dev/null
  [ -f "$onnx/conv.txt" ] || "$python" "$here/tests/onnx/models.py" onnx-flops "$onnx/model.onnx" Conv > "$onnx/conv.txt"
  [ -f "$dir/import.json" ] ||
    "$doppler" -q import "$onnx/model.onnx" --devices "$p" -o "$dir/graph.json" --json > "$dir/import.json"
  [ -f "$dir/compare.json" ] ||
    "$doppler" -q compare "$dir/graph.json" --devices "$p" --hardware "$hw" --methods "$methods" \
      --seeds "$seeds" --budget "$budget" \
      --json-file "$dir/compare.json" > "$dir/compare.txt"
  echo "$model $hw done" >&2
done
{
  "$python" "$here/scripts/vision_results_table.py" "$out"
  if [ "${ENGINE:-1}" != 0 ]; then
    echo
    # shellcheck disable=SC2086  # the model names are words
    "$python" "$here/scripts/video_engine.py" "$build" "$out" $models
  fi
} | tee "$out/table.md"
