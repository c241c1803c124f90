#!/usr/bin/env bash
# The recorded comparison table: every method that gives the same answer for the same seed, on the
# reference graphs, with fixed seeds and a fixed simulator-call budget; prints one line per
# (graph, method) with the makespan of every seed and the calls spent (no times: they vary).
# A refactor that should not change behaviour leaves this output byte-identical:
#   scripts/recorded_table.sh build > before.txt; (change); scripts/recorded_table.sh build | diff before.txt -
set -euo pipefail
build=${1:-build}
graphs=${DOPPLER_REFERENCE_GRAPHS:-$(dirname "$0")/../../shared/reference-graphs}
[[ -d $graphs ]] || { echo "recorded_table.sh: no reference graphs in $graphs" >&2; exit 2; }
methods=critical-path,heft,etf,m-topo,m-etf,round-robin,random,balanced,dsc,enumopt,local-search
methods+=,multilevel,multilevel:inner=dsc
if "$build/doppler" --version | grep -q '^components:.*torch'; then
  methods+=,doppler,doppler-il:il=40,doppler-sim:il=40,doppler-search,placeto,gdp
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for g in gdp_chain_mm_112nodes gdp_ffnn_192nodes gdp_transformer_block_215nodes \
         gdp_full_transformer_layer_261nodes; do
  "$build/doppler" compare "$graphs/$g.txt" --devices 4 --methods "$methods" --seeds 2 \
      --budget 600 --json-file "$tmp/$g.json" > /dev/null
  /usr/bin/python3 - "$tmp/$g.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for m in r["methods"]:
    spans = " ".join(f"{x:.6e}" for x in m["makespans"])
    print(f'{r["graph"]} {m["method"]} calls={m["evaluations"]} {spans}')
print(f'{r["graph"]} refused={r.get("refused_over_budget", [])}')
PY
done
