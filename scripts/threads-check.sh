#!/usr/bin/env bash
# Issue 51's many-thread figure, on a machine with many cores (the GPU machine has 16): per large
# row of docs/results/parallel.md, the best one-thread method at T1 seconds on one thread (the
# rows side by side, one core each, pinned with taskset where it exists), then the same method on
# N threads (default: every core) for TN seconds, one row at a time on the idle machine. The
# N-thread curve says when it first reached the one-thread result, so the speedup is T1 over that
# time (or "more than T1/TN" where it reached it within the run, "not within TN s" where not).
#
#   scripts/threads-check.sh BUILD OUT_DIR
#   T1=60 TN=20 THREADS=$(nproc) SEED=0 GRAPHS="dag20k llama7b-fwd llama7b-train gpt12 inception"
#   AUTO=1: also `auto` on N threads for T1 seconds per row (T1 more seconds per row)
#
# Graphs: dag20k and the two Llama rows are generated with BUILD/doppler; gpt12 and inception
# need the ONNX import, which the GPU machine's build lacks: scripts/gpu-bundle.sh puts them in
# .gpu/graphs/NAME.json.gz, taken from there when present (a row is skipped with a message when
# neither way works). Writes OUT_DIR/rows.jsonl (one `doppler place --json` object per run, its
# anytime curve included), OUT_DIR/threads.md and OUT_DIR/threads.json, and the log
# OUT_DIR/threads-check.log. Time with the defaults: about T1 + 5 x TN seconds plus the
# graphs' generation (about 3.5 minutes). Exit 1 when a run failed.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: scripts/threads-check.sh BUILD OUT_DIR}
out=${2:?usage: scripts/threads-check.sh BUILD OUT_DIR}
D=$(cd "$BUILD" && pwd)/doppler
T1=${T1:-60}
TN=${TN:-20}
THREADS=${THREADS:-$(nproc)}
SEED=${SEED:-0}
GRAPHS=${GRAPHS:-"dag20k llama7b-fwd llama7b-train gpt12 inception"}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/threads-check.log
rows=$out/rows.jsonl
: >"$log"
rm -rf "$out/runs"
mkdir -p "$out/runs"
failed=0

# shellcheck source=scripts/large_graphs.sh
source "$here/scripts/large_graphs.sh"

# The best one-thread method at 60 s per row (docs/results/parallel.md, "Where the targets
# stand"); every one torch-free, so the GPU machine's build runs them.
best_single() {
  case $1 in
    llama7b-fwd | llama7b-train) echo multilevel:inner=dsc,tied=0.8,t0=0.0005,proxy=4 ;;
    dag20k) echo local-search:t0=0.0001,focus=1,aim=1,swaps=0,dsc=1,levels=1 ;;
    *) echo multilevel:inner=dsc,t0=0.0005 ;;  # gpt12, inception: cold beats the default
  esac
}

# graph NAME: prints "file devices hardware" or nothing (with a message) when it cannot be made.
graph() {
  local name=$1 packed=$here/.gpu/graphs/$1.json.gz
  case $name in
    gpt12 | inception)
      if [ -f "$packed" ]; then
        [ -f "$out/$name.json" ] || gunzip -c "$packed" >"$out/$name.json"
        echo "$out/$name.json 8 v100"
        return
      fi ;;
  esac
  local line
  line=$(large_graph "$name" "$out" "$D" 2>>"$log")
  if [ -n "$line" ] && [ -f "${line%% *}" ]; then
    echo "$line"
  else
    echo "threads-check: $name skipped (it could not be made here; gpt12 and inception need the" \
      "ONNX import or $packed)" >&2
  fi
}

# place NAME FILE DEVICES HW METHOD THREADS SECONDS: one run, its JSON (with the run's
# settings added) in OUT_DIR/runs/, one file per run (the one-thread runs go side by side).
place() {
  local name=$1 file=$2 p=$3 hw=$4 method=$5 threads=$6 t=$7 pin=()
  local args=(-q place "$file" --devices "$p" --method "$method" --json --time-budget "$t"
              --threads "$threads" --seed "$SEED")
  [ "$hw" = - ] || args+=(--hardware "$hw")
  [ -n "${CORE:-}" ] && command -v taskset >/dev/null && pin=(taskset -c "$CORE")
  echo "== $name $method, $threads thread(s), $t s" >>"$log"
  "${pin[@]}" "$D" "${args[@]}" 2>>"$log" | /usr/bin/env python3 -c '
import json, sys
j = json.load(sys.stdin)
j.update(graph=sys.argv[1], method=sys.argv[2], budget_seconds=float(sys.argv[3]),
         threads_asked=int(sys.argv[4]))
print(json.dumps(j))' "$name" "$method" "$t" "$threads" >"$out/runs/$name-$threads-${method%%:*}.json" ||
    { echo "threads-check: $name $method on $threads thread(s) failed (see $log)" >&2; return 1; }
}

t_start=$(date +%s)
declare -A file devices hw
names=()
for g in $GRAPHS; do
  read -r f p h < <(graph "$g") || continue
  [ -n "${f:-}" ] || continue
  file[$g]=$f devices[$g]=$p hw[$g]=$h
  names+=("$g")
done
echo "threads-check: graphs ready after $(( $(date +%s) - t_start )) s: ${names[*]}" >&2

# One thread per row: the rows side by side on cores 0, 1, ... when there are more cores than
# rows (the 16-core GPU machine), else one after another.
core=0
pids=()
for g in "${names[@]}"; do
  if [ "${#names[@]}" -lt "$(nproc)" ]; then
    CORE=$core place "$g" "${file[$g]}" "${devices[$g]}" "${hw[$g]}" "$(best_single "$g")" 1 "$T1" &
    pids+=($!)
    core=$((core + 1))
  else
    place "$g" "${file[$g]}" "${devices[$g]}" "${hw[$g]}" "$(best_single "$g")" 1 "$T1" || failed=1
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
echo "threads-check: one-thread runs done after $(( $(date +%s) - t_start )) s" >&2

for g in "${names[@]}"; do
  place "$g" "${file[$g]}" "${devices[$g]}" "${hw[$g]}" "$(best_single "$g")" "$THREADS" "$TN" ||
    failed=1
  if [ "${AUTO:-0}" = 1 ]; then
    place "$g" "${file[$g]}" "${devices[$g]}" "${hw[$g]}" auto "$THREADS" "$T1" || failed=1
  fi
done
echo "threads-check: $THREADS-thread runs done after $(( $(date +%s) - t_start )) s" >&2

cat "$out"/runs/*.json >"$rows" 2>/dev/null
/usr/bin/env python3 "$here/scripts/threads_table.py" "$rows" "$out" "$(nproc)" || failed=1
echo "threads-check: $(( $(date +%s) - t_start )) s in all; $out/threads.md" >&2
exit "$failed"
