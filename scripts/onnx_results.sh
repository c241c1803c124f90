#!/usr/bin/env bash
# Reproduces the table of imported ONNX models (docs/results/onnx.md): PyTorch modules exported
# by tests/onnx/models.py (MLP, TransformerEncoderLayer, GPT-style block, a small whole language
# model from token ids; with MODELS="lstm gru" the recurrent models; each at two sizes), imported
# with `doppler import` (their real weights and input), checked against PyTorch's output on the
# CPU engine, and placed by every method with `doppler compare` on a shipped hardware profile.
# Usage: scripts/onnx_results.sh [BUILD_DIR] [OUT_DIR] [DEVICES] [SEEDS] [BUDGET]
# Environment: HARDWARE (default v100), METHODS (default below), MODELS (default: all four),
# PYTHON (default /usr/bin/python3, which must import torch and onnx: Debian python3-torch,
# python3-onnx).
set -euo pipefail
build=${1:-build}
out=${2:-onnx-results}
devices=${3:-4}
seeds=${4:-3}
budget=${5:-5000}
hardware=${HARDWARE:-v100}
here=$(cd "$(dirname "$0")/.." && pwd)
policy="$here/models/doppler-pretrained.pt"
# Doppler: the shipped pretrained model zero-shot (16 samples = 16 simulator calls) and
# fine-tuned on the graph (Stage II from the model, then the best of 64 samples) within budget.
methods=${METHODS:-critical-path,heft,etf,local-search,doppler:samples=16,doppler-sim:policy=$policy,il=0,sim=1000,samples=64,doppler-sim:policy=$policy,il=0,sim=4000,samples=64}
python=${PYTHON:-/usr/bin/python3}
doppler="$build/doppler"
mkdir -p "$out"
for model in ${MODELS:-mlp encoder gpt lm}; do
  for size in small large; do
    dir="$out/$model-$size"
    [ -f "$dir/model.onnx" ] || "$python" "$here/tests/onnx/models.py" export "$model" "$size" "$dir" >/dev/null
    "$doppler" -q import "$dir/model.onnx" --devices "$devices" --inputs "x=$dir/x.npy" \
      -o "$dir/graph.json" --json > "$dir/import.json"
    "$doppler" -q place "$dir/graph.json" --devices "$devices" --hardware "$hardware" \
      --method heft -o "$dir/heft.json" >/dev/null
    "$doppler" -q execute "$dir/graph.json" --assignment "$dir/heft.json" --repeat 1 --warmup 0 \
      --save "y=$dir/got.npy" --json > "$dir/execute.json"
    [ -f "$dir/compare.json" ] && [ -z "${FORCE:-}" ] && continue
    "$doppler" -q compare "$dir/graph.json" --devices "$devices" --hardware "$hardware" \
      --methods "$methods" --seeds "$seeds" --budget "$budget" \
      --json-file "$dir/compare.json" > "$dir/compare.txt"
    echo "$model $size done" >&2
  done
done
"$python" "$here/scripts/onnx_results_table.py" "$out" | tee "$out/table.md"
