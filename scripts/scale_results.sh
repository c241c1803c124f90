#!/usr/bin/env bash
# Placement at scale (issue 25): anytime makespans of the list schedulers, clustering,
# local-search, multilevel and the Doppler methods on large graphs, one `doppler place --json` per
# (graph, method, time budget). Writes OUT/rows.jsonl (one object per run) and OUT/table.md.
#
#   scripts/scale_results.sh [BUILD=build] [OUT=scale-results]
#   SECONDS_LIST="1 10 60"   time budgets of the search methods (seconds)
#   THREADS=1                threads per search (place's default is every core)
#   GRAPHS="dag20k dag2k llama7b-fwd llama7b-train gpt12"   which graphs (gpt12 is exported by
#                            scripts/export_gpt12.py with Debian's python3-torch, ~20 s)
#
# One run at a time; on the 2-core machine a 60 s budget means 60 s of wall-clock. Timings are
# only comparable on an otherwise idle machine.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-scale-results}
SECONDS_LIST=${SECONDS_LIST:-"1 10 60"}
GRAPHS=${GRAPHS:-"dag20k dag2k llama7b-fwd llama7b-train gpt12"}
D=$BUILD/doppler
mkdir -p "$OUT"
ROWS=$OUT/rows.jsonl
: >"$ROWS"

# shellcheck source=scripts/large_graphs.sh
source "$(dirname "$0")/large_graphs.sh"

# place GRAPH FILE DEVICES HW METHOD [TIME]
place() {
  local name=$1 file=$2 p=$3 hw=$4 method=$5 t=${6:-}
  local args=("$file" --devices "$p" --method "$method" --json --threads "${THREADS:-1}")
  [ "$hw" = - ] || args+=(--hardware "$hw")
  [ -z "$t" ] || args+=(--time-budget "$t" --budget 1000000000)
  echo "== $name $method ${t:+$t s}" >&2
  $D place "${args[@]}" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
j.update(graph=sys.argv[1], method=sys.argv[2], budget_seconds=float(sys.argv[3] or 0))
print(json.dumps(j))' "$name" "$method" "$t" >>"$ROWS"
}

for g in $GRAPHS; do
  read -r file p hw < <(large_graph "$g" "$OUT" "$D")
  for m in critical-path heft etf dsc doppler:samples=1; do place "$g" "$file" "$p" "$hw" "$m"; done
  for t in $SECONDS_LIST; do
    for m in local-search multilevel "multilevel:inner=dsc" doppler-search; do
      place "$g" "$file" "$p" "$hw" "$m" "$t"
    done
  done
done

/usr/bin/python3 - "$ROWS" >"$OUT/table.md" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for g in dict.fromkeys(r["graph"] for r in rows):
    rs = [r for r in rows if r["graph"] == g]
    lb = rs[0].get("lower_bound")
    tlb = rs[0].get("lower_bound_with_transfers")
    best_list = min(r["makespan"] for r in rs if r["method"] in ("critical-path", "heft", "etf"))
    print(f"\n### {g} ({sum(rs[0]['ops_per_device']):,} ops, {rs[0].get('devices', '?')} devices)\n")
    print("| method | budget s | makespan | vs best list scheduler | vs lower bound | vs bound with transfers | seconds | simulator calls |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rs:
        b = r["budget_seconds"]
        vs_lb = f"{r['makespan'] / lb:.3f}x" if lb else "-"
        vs_tlb = f"{r['makespan'] / tlb:.3f}x" if tlb else "-"
        print(f"| {r['method']} | {b:g} | {r['makespan']:.6g} | {100 * (r['makespan'] / best_list - 1):+.1f}% "
              f"| {vs_lb} | {vs_tlb} | {r['placement_seconds']:.2f} | {r.get('evaluations', 0)} |")
EOF
cat "$OUT/table.md"
