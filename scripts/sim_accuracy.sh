#!/usr/bin/env bash
# Simulator against the engine (issue 26; docs/results/sim-vs-engine.md): calibrates the
# engine with microbenchmarks only (`doppler calibrate`, per-kernel costs), then runs
# `doppler validate-sim` on three f32 graphs on 2 devices: the demo's Llama layer (seq 256, dim
# 256), chainmm (n 1024) and ffnn (batch 1024, dim 1024, hidden 2048), each with ASSIGNMENTS
# assignments measured REPEAT times. Prints one TSV row per graph: Spearman and MAPE of the
# medians, then of the fastest runs, the median ratio simulated / measured, and the engine's
# split-half Spearman (medians of even against odd runs: the noise ceiling of any ranking).
# With LOAD=1 a busy loop runs on the last core during the whole script (calibration included),
# as for "the other core loaded". With BACKEND=mpi both calibrate and validate-sim run on 2 MPI
# ranks (one device each; mpirun --oversubscribe, as root too). Writes OUT/hw.json (the profile),
# OUT/calibration.json (calibrate --json: every benchmark, the device-speed rounds), and per graph
# the graph, validate-sim's JSON and the measured assignments.
#
#   scripts/sim_accuracy.sh [BUILD=build] [OUT=sim-accuracy] [ASSIGNMENTS=30] [REPEAT=9]
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-sim-accuracy}
ASSIGNMENTS=${3:-30}
REPEAT=${4:-9}
D=$BUILD/doppler
RUN=()
BACKEND=${BACKEND:-local}
[ "$BACKEND" = mpi ] && RUN=(mpirun --allow-run-as-root --oversubscribe -np 2)
mkdir -p "$OUT"
if [ "${LOAD:-0}" = 1 ]; then
  taskset -c "$(($(nproc) - 1))" sh -c 'while :; do :; done' &
  load=$!
  trap 'kill $load' EXIT
fi
gen() { [ -f "$OUT/$1.json" ] || $D -q generate "${@:2}" --dtype f32 --devices 2 -o "$OUT/$1.json" >/dev/null; }
gen demo llama-layer -p seq=256 -p dim=256 -p heads=4 -p ffn=512 -p vocab=1024
gen chainmm chainmm -p n=1024
gen ffnn ffnn -p batch=1024 -p dim=1024 -p hidden=2048
"${RUN[@]}" $D -q calibrate --devices 2 --backend "$BACKEND" -o "$OUT/hw.json" --json >"$OUT/calibration.json"
printf 'graph\tspearman\tmape\tspearman_min\tmape_min\tsim_over_measured\tsplit_half\n'
for g in ${GRAPHS:-demo chainmm ffnn}; do
  "${RUN[@]}" $D -q validate-sim "$OUT/$g.json" --hardware "$OUT/hw.json" --backend "$BACKEND" \
    --assignments "$ASSIGNMENTS" --repeat "$REPEAT" --json --save-assignments "$OUT/assignments-$g.jsonl" \
    >"$OUT/validate-$g.json"
  /usr/bin/python3 - "$OUT/validate-$g.json" "$g" <<'PY'
import json, statistics, sys
j = json.load(open(sys.argv[1]))
ratio = statistics.median(c["simulated"] / c["measured"] for c in j["cases"])
print("\t".join([sys.argv[2], f"{j['spearman']:.3f}", f"{100 * j['mape']:.1f}%",
                 f"{j['spearman_min']:.3f}", f"{100 * j['mape_min']:.1f}%", f"{ratio:.3f}",
                 f"{j['spearman_split_half']:.3f}"]))
PY
done
