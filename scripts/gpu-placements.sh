#!/usr/bin/env bash
# Issue 49's table placed ahead of a GPU (on a CPU machine with torch): every method of the
# paper's table but Doppler-SYS (critical-path, etf, enumopt, local-search, multilevel, placeto,
# gdp, doppler-sim) places the table's graphs (scripts/gpu-graphs.sh: chainmm, ffnn, llama-block,
# llama-layer at 7B dimensions, DTYPE tensors) on 4 devices of PROFILE (by default the shipped
# 4xH100-SM32-PCIe: one H100 as 4 SM partitions with PCIe-paced copies, from the datasheet), each
# search and learned method with the same simulator-call budget (training included), SEEDS
# seeds; and the searches of EQUAL_TIME (local-search, multilevel; empty: none) again with the
# wall-clock seconds doppler-sim took on that graph and no call limit (rows <method>-equal-time). Then a GPU session only measures them: `SAVED=OUT_DIR METHODS=none
# scripts/gpu-table.sh build-gpu PROFILE DIR` (a pure measurement, no search on the GPU's time).
# Writes OUT_DIR/<graph>/<method>[.seed-<s>].json (compare --assignments-dir) with
# OUT_DIR/<graph>/graph.sha256 (the graph they were made for), OUT_DIR/
# sim-<graph>.json (compare's JSON: simulated makespans, seconds per method), OUT_DIR/
# one-<graph>.json (the graph on one partition alone), OUT_DIR/table.md
# (scripts/gpu_placements_table.py) and OUT_DIR/gpu-placements.log. Exit 1 when a step failed.
#
#   scripts/gpu-placements.sh BUILD OUT_DIR
#     PROFILE=h100-sm4 GRAPHS="chainmm ffnn llama-block llama-layer" BUDGET=4000 SEEDS=3
#     DTYPE=bf16 JOBS=2 EQUAL_TIME=local-search,multilevel
#
# JOBS graphs at a time, each compare on one thread. About 40 minutes on a 2-core VM at the
# defaults (the learned methods' training, then as long again for the equal-time searches).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: scripts/gpu-placements.sh BUILD OUT_DIR}
out=${2:?usage: scripts/gpu-placements.sh BUILD OUT_DIR}
D=$(cd "$BUILD" && pwd)/doppler
GRAPHS=${GRAPHS:-chainmm ffnn llama-block llama-layer}
METHODS=${METHODS:-critical-path,etf,enumopt,local-search,multilevel,placeto,gdp,doppler-sim}
PROFILE=${PROFILE:-h100-sm4}
DTYPE=${DTYPE:-bf16}
EQUAL_TIME=${EQUAL_TIME-local-search,multilevel}  # set empty: no equal-time searches
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-placements.log
: >"$log"
step_prefix=gpu-placements
. "$here/scripts/gpu-steps.sh"  # run NAME CMD...
. "$here/scripts/gpu-graphs.sh"  # gpu_graph D NAME DTYPE OUT, graph_sum FILE

# place NAME: NAME's graph placed by every method, each seed's assignment kept.
place() {
  local g=$out/$1.graph.json
  gpu_graph "$D" "$1" "$DTYPE" "$g" || return 1
  rm -rf "${out:?}/$1"
  mkdir -p "$out/$1"
  graph_sum "$g" >"$out/$1/graph.sha256"
  "$D" compare "$g" --devices 4 --hardware "$PROFILE" --methods "$METHODS" \
    --budget "${BUDGET:-4000}" --seeds "${SEEDS:-3}" --threads 1 --assignments-dir "$out/$1" \
    --json-file "$out/sim-$1.json" &&
    "$D" compare "$g" --devices 1 --hardware "$PROFILE" --methods critical-path \
      --json-file "$out/one-$1.json" >/dev/null && equal_time "$1" "$g" && rm -f "$g"
}

# equal_time NAME GRAPH: the searches of EQUAL_TIME again, each seed with the wall-clock seconds
# doppler-sim took on NAME (its mean) and no call limit: rows <method>-equal-time, their
# assignments beside the others, compare's JSON in sim-NAME-equal-time.json.
equal_time() {
  local secs f base m tmp=$out/$1.equal-time
  [ -n "$EQUAL_TIME" ] || return 0
  secs=$("${PYTHON:-python3}" -c 'import json, sys
print(next((m["seconds_mean"] for m in json.load(open(sys.argv[1]))["methods"]
            if m["method"] == "doppler-sim"), ""))' "$out/sim-$1.json") || return 1
  [ -n "$secs" ] || { echo "no doppler-sim row in METHODS: no equal-time searches"; return 0; }
  rm -rf "$tmp" && mkdir -p "$tmp"
  "$D" compare "$2" --devices 4 --hardware "$PROFILE" \
    --methods "$EQUAL_TIME" --budget 0 --time-budget "$secs" \
    --seeds "${SEEDS:-3}" --threads 1 --assignments-dir "$tmp" \
    --json-file "$out/sim-$1-equal-time.json" || return 1
  for f in "$tmp"/*.json; do  # local-search.seed-0.json -> local-search-equal-time.seed-0.json
    base=$(basename "$f")
    m=${base%%.*}
    mv "$f" "$out/$1/$m-equal-time${base#"$m"}"
  done
  rm -rf "$tmp"
}

# One background run per graph, JOBS at a time; each appends to its own log, then to the log.
pids=() names=()
for name in $GRAPHS; do
  while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-2}" ]; do wait -n; done
  ( log=$out/$name.log; : >"$log"; rows=(); failed=0; run "place-$name" place "$name"; exit "$failed" ) &
  pids+=($!) names+=("$name")
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed=1
  cat "$out/${names[$i]}.log" >>"$log" && rm -f "$out/${names[$i]}.log"
done
"${PYTHON:-python3}" "$here/scripts/gpu_placements_table.py" "$out" >"$out/table.md" || failed=1
cat "$out/table.md"
exit "$failed"
