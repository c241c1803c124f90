#!/usr/bin/env bash
# Critical-chain focused moves (docs/scale.md#critical-chain-focused-moves): on 2,000-op random
# DAGs (8 devices, reference model), `local-search` with 20,000 calls against
# `local-search:focus=0.8` with 14,000 calls, and `multilevel` / `doppler-search` with and
# without focus=0.8 at 14,000 calls; one `doppler place --json` run per row, printed as TSV
# (graph seed, method, calls, seed, makespan / 1e10, placement seconds).
# Usage: scripts/focus_results.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
build=${1:-build}
out=${2:-focus-results}
doppler="$build/doppler"
mkdir -p "$out"
row() {  # graph-seed method calls seed
  "$doppler" -q place "$out/dag2k-$1.json" --devices 8 --method "$2" --budget "$3" --seed "$4" --threads 1 \
    --json -o "$out/assignment.json" |
    /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print('$1\t$2\t$3\t$4\t%.4f\t%.2f' % (d['makespan']/1e10, d['placement_seconds']))"
}
printf 'graph\tmethod\tcalls\tseed\tmakespan_1e10\tseconds\n'
for g in 1 2 3; do
  [ -f "$out/dag2k-$g.json" ] ||
    "$doppler" -q generate random-dag -p ops=2000 -p "seed=$g" --devices 8 -o "$out/dag2k-$g.json"
  seeds="0 1 2"
  [ "$g" = 1 ] && seeds="0 1 2 3 4"
  for s in $seeds; do
    row "$g" local-search 20000 "$s"
    row "$g" local-search:focus=0.8 14000 "$s"
  done
done
for m in multilevel multilevel:focus=0.8 doppler-search doppler-search:focus=0.8; do
  for s in 0 1 2; do row 1 "$m" 14000 "$s"; done
done
