#!/usr/bin/env bash
# Reproduces the table of convolutional models (docs/results/vision.md): torchvision
# resnet18, resnet50, mobilenet_v3_small, inception_v3, vit_b_16 and the segmentation models
# lraspp_mobilenet_v3_large, fcn_resnet50 and unet (seeded random weights)
# exported by tests/onnx/models.py at 224 x 224 (inception 299 x 299), batch 1 and 32, imported
# with `doppler import` for each profile's device count, and placed by every method with
# `doppler compare` (the same simulator-call budget for every search and learned method).
# Usage: scripts/vision_results.sh [BUILD_DIR] [OUT_DIR] [SEEDS] [BUDGET]
# Environment: MODELS, SIZES (b1 b32), PROFILES ("p100:4 v100:8"), METHODS, PYTHON
# (default /usr/bin/python3 with python3-torch, python3-torchvision, python3-onnx), FIRST_SEED
# (default 0; from N > 0 the results go to compare-from<N>.json beside compare.json, and the table
# pools the seeds of every compare*.json of a row: two processes on two cores give one row's seeds).
set -euo pipefail
build=${1:-build}
out=${2:-vision-results}
seeds=${3:-3}
budget=${4:-2000}
here=$(cd "$(dirname "$0")/.." && pwd)
policy="$here/models/doppler-pretrained.pt"
models=${MODELS:-resnet18 resnet50 mobilenet_v3_small inception_v3 vit_b_16}
sizes=${SIZES:-b1 b32}
profiles=${PROFILES:-p100:4 v100:8}
first=${FIRST_SEED:-0}
result=compare
[ "$first" -gt 0 ] && result=compare-from$first
methods=${METHODS:-critical-path,heft,etf,local-search,placeto,gdp,doppler:samples=16,doppler-sim:policy=$policy,il=0,sim=1000,samples=64}
python=${PYTHON:-/usr/bin/python3}
doppler="$build/doppler"
mkdir -p "$out"
for model in $models; do
  for size in $sizes; do
    onnx="$out/$model-$size"
    [ -f "$onnx/model.onnx" ] || "$python" "$here/tests/onnx/models.py" export "$model" "$size" "$onnx" >/dev/null
    [ -f "$onnx/conv.txt" ] || "$python" "$here/tests/onnx/models.py" onnx-flops "$onnx/model.onnx" Conv > "$onnx/conv.txt"
    for profile in $profiles; do
      hw=${profile%%:*}
      p=${profile##*:}
      dir="$onnx/$hw"
      mkdir -p "$dir"
      [ -f "$dir/import.json" ] && [ -z "${FORCE:-}" ] ||
        "$doppler" -q import "$onnx/model.onnx" --devices "$p" -o "$dir/graph.json" --json > "$dir/import.json"
      [ -f "$dir/$result.json" ] && [ -z "${FORCE:-}" ] && continue
      "$doppler" -q compare "$dir/graph.json" --devices "$p" --hardware "$hw" \
        --methods "$methods" --seeds "$seeds" --first-seed "$first" --budget "$budget" \
        --json-file "$dir/$result.json" > "$dir/$result.txt"
      echo "$model $size $hw done" >&2
    done
  done
done
"$python" "$here/scripts/vision_results_table.py" "$out" | tee "$out/table.md"
