#!/usr/bin/env bash
# Runs every benchmark program of the build directory ($1, default build) and prints its report.
set -euo pipefail
build=${1:-build}
found=0
for b in "$build"/bench/bench_*; do
  [ -x "$b" ] || continue
  found=1
  echo "== $(basename "$b")"
  "$b" --benchmark_min_time=0.2
done
[ "$found" = 1 ] || { echo "no benchmark programs in $build/bench" >&2; exit 1; }
