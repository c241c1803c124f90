#!/usr/bin/env bash
# Who copies between devices on the CPU engine (issue 26; docs/engine.md "Who copies"): for each
# copy mode (worker: the receiver's copy thread; producer: the producing op's thread), calibrate
# a profile in that mode, then `validate-sim` the demo workload (Llama layer, seq 256, dim 256),
# chainmm (n 1024) and ffnn (batch 1024, dim 1024, hidden 2048), all f32 on 2 devices, with the
# engine in the same mode. Prints one TSV row per (graph, mode): Spearman and MAPE of the median
# and of the fastest runs. Run it on an idle machine.
#
#   scripts/copy_mode_results.sh [BUILD=build] [OUT=copy-mode-results] [ASSIGNMENTS=30] [REPEAT=5]
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-copy-mode-results}
ASSIGNMENTS=${3:-30}
REPEAT=${4:-5}
D=$BUILD/doppler
mkdir -p "$OUT"
gen() { [ -f "$OUT/$1.json" ] || $D -q generate "${@:2}" --dtype f32 --devices 2 -o "$OUT/$1.json"; }
gen demo llama-layer -p seq=256 -p dim=256 -p heads=4 -p ffn=512 -p vocab=1024
gen chainmm chainmm -p n=1024
gen ffnn ffnn -p batch=1024 -p dim=1024 -p hidden=2048
printf 'graph\tmode\tspearman\tmape\tspearman_min\tmape_min\n'
for mode in worker producer; do
  $D -q calibrate --devices 2 --copies "$mode" -o "$OUT/hw-$mode.json" >/dev/null
  for g in demo chainmm ffnn; do
    $D -q validate-sim "$OUT/$g.json" --hardware "$OUT/hw-$mode.json" --copies "$mode" \
      --assignments "$ASSIGNMENTS" --repeat "$REPEAT" --json >"$OUT/validate-$g-$mode.json"
    /usr/bin/python3 - "$OUT/validate-$g-$mode.json" "$g" "$mode" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("\t".join([sys.argv[2], sys.argv[3], f"{j['spearman']:.3f}", f"{j['mape']:.4g}",
                 f"{j['spearman_min']:.3f}", f"{j['mape_min']:.4g}"]))
PY
  done
done
