#!/usr/bin/env bash
# The level placer against the other constructive methods (docs/scale.md, section "`levels`"):
# one `doppler place --json` per (graph, method), deterministic makespans, a Markdown table on
# stdout (reference graphs / 1e10, hardware graphs in ms) and the raw rows in OUT/rows.txt.
#
#   scripts/levels_table.sh [BUILD=build] [OUT=levels-table]
#   METHODS="levels levels:sweeps=forward dsc etf heft critical-path"
#
# The reference graphs are read from ../shared/reference-graphs (skipped with a message when
# absent); the large graphs are made by scripts/large_graphs.sh.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-levels-table}
METHODS=${METHODS:-"levels levels:sweeps=forward dsc etf heft critical-path"}
D=$BUILD/doppler
REF=$(cd "$(dirname "$0")/.." && pwd)/../shared/reference-graphs
mkdir -p "$OUT"
ROWS=$OUT/rows.txt
: >"$ROWS"
# shellcheck source=scripts/large_graphs.sh
source "$(dirname "$0")/large_graphs.sh"

row() {  # row LABEL FILE DEVICES HW
  local label=$1 file=$2 p=$3 hw=$4 m ms hwargs=()
  [ "$hw" != - ] && hwargs=(--hardware "$hw")
  for m in $METHODS; do
    ms=$($D place "$file" --devices "$p" "${hwargs[@]}" --method "$m" --json 2>/dev/null |
      /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["makespan"])')
    echo "$label|$p|$hw|$m|$ms" >>"$ROWS"
  done
}

for g in dag20k dag2k; do
  read -r file p hw < <(large_graph "$g" "$OUT" "$D")
  row "$g" "$file" "$p" "$hw"
  [ "$g" = dag2k ] && row "$g" "$file" 64 "$hw"
done
if [ -d "$REF" ]; then
  for g in gdp_chain_mm_112nodes gdp_ffnn_192nodes gdp_transformer_block_215nodes \
    gdp_full_transformer_layer_261nodes; do
    row "$g" "$REF/$g.txt" 4 -
  done
else
  echo "levels_table: $REF not found; reference graphs skipped" >&2
fi
for g in llama7b-fwd llama7b-train; do
  read -r file p hw < <(large_graph "$g" "$OUT" "$D")
  row "$g" "$file" "$p" "$hw"
done

/usr/bin/python3 - "$ROWS" "$METHODS" <<'PY'
import sys
rows, methods = {}, sys.argv[2].split()
for line in open(sys.argv[1]):
    label, p, hw, m, ms = line.strip().split("|")
    rows.setdefault((label, p, hw), {})[m] = float(ms)
print("| graph (devices) | " + " | ".join(f"`{m}`" for m in methods) + " |")
print("|---|" + "---:|" * len(methods))
for (label, p, hw), r in rows.items():
    scale, unit = (1e10, "") if hw == "-" else (1e-3, ", ms")
    best = min(r.values())
    cells = [("**{:.5g}**" if r[m] == best else "{:.5g}").format(r[m] / scale) for m in methods]
    print(f"| {label} ({p}{unit}) | " + " | ".join(cells) + " |")
PY
