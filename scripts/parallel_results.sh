#!/usr/bin/env bash
# Parallel search and `auto` on the five large rows of docs/results/parallel.md (issue 51): per
# graph, the best single-threaded method of the scale results at T seconds on one thread, the
# same method on THREADS threads at SHARE x T seconds, once as THREADS chains (--lanes 1) and
# once as one chain of THREADS speculative lanes (--lanes THREADS) (does it reach the
# single-thread result in that fraction of the time? its curve says when it first did), and
# `auto` on THREADS threads at T seconds (lanes by the default rule). One `doppler place --json`
# per run, seed 0;
# OUT/rows.jsonl has one object per run (with its anytime curve), OUT/table.md the table.
#
#   scripts/parallel_results.sh [BUILD=build] [OUT=parallel-results]
#   SECONDS_BUDGET=60 SHARE=0.6 THREADS=2 GRAPHS="dag20k llama7b-fwd llama7b-train gpt12 inception"
#
# Timings are only comparable on an otherwise idle machine; with THREADS equal to the core
# count, nothing else may run.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-parallel-results}
T=${SECONDS_BUDGET:-60}
THREADS=${THREADS:-2}
SHARE=${SHARE:-0.6}
T_SHORT=$(/usr/bin/python3 -c "print(round($T * $SHARE, 3))")
GRAPHS=${GRAPHS:-"dag20k llama7b-fwd llama7b-train gpt12 inception"}
D=$BUILD/doppler
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
ROWS=$OUT/rows.jsonl
: >"$ROWS"

# shellcheck source=scripts/large_graphs.sh
source "$here/scripts/large_graphs.sh"
# graph name -> the method best at 60 s on one thread in docs/results/scale.md and the issue's table
best_single() {
  case $1 in
    llama7b-train) echo doppler-search ;;
    *) echo multilevel:inner=dsc ;;
  esac
}

# place NAME FILE DEVICES HW METHOD THREADS SECONDS [LANES, default: the rule]
place() {
  local name=$1 file=$2 p=$3 hw=$4 method=$5 threads=$6 t=$7 lanes=${8:-0}
  local args=("$file" --devices "$p" --method "$method" --json --time-budget "$t" --threads "$threads"
              --lanes "$lanes")
  [ "$hw" = - ] || args+=(--hardware "$hw")
  echo "== $name $method $threads thread(s), lanes $lanes, $t s" >&2
  $D place "${args[@]}" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
j.update(graph=sys.argv[1], method=sys.argv[2], budget_seconds=float(sys.argv[3]),
         lanes_asked=int(sys.argv[4]))
print(json.dumps(j))' "$name" "$method" "$t" "$lanes" >>"$ROWS"
}

for g in $GRAPHS; do
  read -r file p hw < <(large_graph "$g" "$OUT" "$D")
  best=$(best_single "$g")
  place "$g" "$file" "$p" "$hw" "$best" 1 "$T"
  place "$g" "$file" "$p" "$hw" "$best" "$THREADS" "$T_SHORT" 1
  place "$g" "$file" "$p" "$hw" "$best" "$THREADS" "$T_SHORT" "$THREADS"
  place "$g" "$file" "$p" "$hw" auto "$THREADS" "$T"
done
/usr/bin/python3 "$here/scripts/parallel_table.py" "$ROWS" | tee "$OUT/table.md"
