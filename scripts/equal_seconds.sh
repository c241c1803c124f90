#!/usr/bin/env bash
# Equal wall-clock comparisons (issue 51): `doppler compare --time-budget T` for each T, every
# search and learned method given the same seconds (training included) on one thread, plus
# `auto` on THREADS threads as its own row; OUT/<graph>-<T>s.json per run, OUT/table.md.
#
#   scripts/equal_seconds.sh [BUILD=build] [OUT=equal-seconds] GRAPH:DEVICES[:HARDWARE]...
#   env: SECONDS_LIST="1 10" SEEDS=1 THREADS=2
#        METHODS="etf,dsc,local-search,multilevel,multilevel:inner=dsc,auto,doppler-search,doppler-sim,placeto,gdp"
#        AUTO_ONLY=1: re-run only `auto` (THREADS threads), keeping the one-thread files in OUT
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-equal-seconds}
shift 2
D=$BUILD/doppler
SECONDS_LIST=${SECONDS_LIST:-"1 10"}
SEEDS=${SEEDS:-1}
THREADS=${THREADS:-2}
METHODS=${METHODS:-etf,dsc,local-search,multilevel,multilevel:inner=dsc,auto,doppler-search,doppler-sim,placeto,gdp}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
for spec in "$@"; do
  IFS=: read -r file p hw <<<"$spec"
  name=$(basename "${file%.*}")
  # vision_results.sh's layout MODEL-BATCH/PROFILE/graph.json: name it MODEL-BATCH-PROFILE
  [ "$name" = graph ] && name=$(basename "$(dirname "$(dirname "$file")")")-$(basename "$(dirname "$file")")
  hwargs=()
  [ -z "${hw:-}" ] || hwargs=(--hardware "$hw")
  for t in $SECONDS_LIST; do
    echo "== $name, $t s" >&2
    [ "${AUTO_ONLY:-0}" = 1 ] ||
      $D -q compare "$file" --devices "$p" "${hwargs[@]}" --methods "$METHODS" --seeds "$SEEDS" \
        --time-budget "$t" --threads 1 --json-file "$OUT/$name-${t}s.json" >/dev/null
    $D -q compare "$file" --devices "$p" "${hwargs[@]}" --methods auto --seeds "$SEEDS" \
      --time-budget "$t" --threads "$THREADS" --json-file "$OUT/$name-${t}s-auto$THREADS.json" >/dev/null
  done
done
/usr/bin/python3 "$here/scripts/equal_seconds_table.py" "$OUT" | tee "$OUT/table.md"
