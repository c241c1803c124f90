#!/usr/bin/env bash
# Reproduces the planted-instance table of docs/results/task-graphs.md: planted instances
# with a known optimum L (50 to 2,000 ops, 2 to 16 devices, transfer/compute ratios 0.1 to 10),
# every method's gap to L through `doppler bench-suite`, and the exact solver on the smallest.
# Usage: scripts/planted_suite.sh [BUILD_DIR] [OUT_DIR] [SEEDS] [BUDGET]
# Environment: METHODS (default below), OPTIMAL_SECONDS (time limit of `optimal`, default 20).
set -euo pipefail
build=${1:-build}
out=${2:-planted-results}
seeds=${3:-3}
budget=${4:-5000}
doppler="$build/doppler"
methods=${METHODS:-random,critical-path,heft,etf,local-search,doppler:samples=16}
mkdir -p "$out/graphs" "$out/small" "$out/assignments"
for n in 50 200 1000 2000; do
  for p in 2 4 8 16; do
    for r in 0.1 1 10; do
      name="planted-n$n-p$p-r$r"
      [ -f "$out/graphs/$name.json" ] ||
        "$doppler" -q generate planted --ops "$n" --devices "$p" --ratio "$r" --seed 1 \
          -o "$out/graphs/$name.json" --assignment-out "$out/assignments/$name.json"
    done
  done
done
for p in 2 4; do
  for r in 0.1 1 10; do
    name="planted-n20-p$p-r$r"
    [ -f "$out/small/$name.json" ] ||
      "$doppler" -q generate planted --ops 20 --devices "$p" --ratio "$r" --seed 1 \
        -o "$out/small/$name.json" --assignment-out "$out/assignments/$name.json"
  done
done
"$doppler" bench-suite "$out/graphs" --methods "$methods" --seeds "$seeds" --budget "$budget" \
  --markdown --csv "$out/runs.csv" --json-file "$out/suite.json" | tee "$out/table.md"
"$doppler" bench-suite "$out/small" \
  --methods "critical-path,heft,etf,local-search,optimal:seconds=${OPTIMAL_SECONDS:-20}" \
  --seeds "$seeds" --budget "$budget" --markdown --csv "$out/small-runs.csv" \
  --json-file "$out/small-suite.json" | tee "$out/small-table.md"
