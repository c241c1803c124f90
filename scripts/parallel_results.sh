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

# graph name -> "file devices hardware best-single-method" (the method best at 60 s on one
# thread in docs/results/scale.md and the issue's table)
setup() {
  case $1 in
    dag20k)
      [ -f "$OUT/dag20k.json" ] || $D -q generate random-dag -p ops=20000 -p seed=1 --devices 8 -o "$OUT/dag20k.json" >&2
      echo "$OUT/dag20k.json 64 - multilevel:inner=dsc" ;;
    llama7b-fwd)
      [ -f "$OUT/llama7b-fwd.json" ] || $D -q generate llama -p size=7b --devices 8 -o "$OUT/llama7b-fwd.json" >&2
      echo "$OUT/llama7b-fwd.json 8 h100 multilevel:inner=dsc" ;;
    llama7b-train)
      [ -f "$OUT/llama7b-train.json" ] || $D -q generate llama -p size=7b --training --devices 16 -o "$OUT/llama7b-train.json" >&2
      echo "$OUT/llama7b-train.json 16 h100x16 doppler-search" ;;
    gpt12)
      [ -f "$OUT/gpt12.onnx" ] || /usr/bin/python3 "$here/scripts/export_gpt12.py" "$OUT/gpt12.onnx" >&2
      [ -f "$OUT/gpt12.json" ] || $D -q import "$OUT/gpt12.onnx" --devices 8 -o "$OUT/gpt12.json" >&2
      echo "$OUT/gpt12.json 8 v100 multilevel:inner=dsc" ;;
    inception)
      [ -f "$OUT/inception/model.onnx" ] || /usr/bin/python3 "$here/tests/onnx/models.py" export inception_v3 b1 "$OUT/inception" >/dev/null
      [ -f "$OUT/inception.json" ] || $D -q import "$OUT/inception/model.onnx" --devices 8 -o "$OUT/inception.json" >&2
      echo "$OUT/inception.json 8 v100 multilevel:inner=dsc" ;;
    *) echo "unknown graph $1" >&2; exit 2 ;;
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
  read -r file p hw best < <(setup "$g")
  place "$g" "$file" "$p" "$hw" "$best" 1 "$T"
  place "$g" "$file" "$p" "$hw" "$best" "$THREADS" "$T_SHORT" 1
  place "$g" "$file" "$p" "$hw" "$best" "$THREADS" "$T_SHORT" "$THREADS"
  place "$g" "$file" "$p" "$hw" auto "$THREADS" "$T"
done
/usr/bin/python3 "$here/scripts/parallel_table.py" "$ROWS" | tee "$OUT/table.md"
