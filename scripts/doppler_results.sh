#!/usr/bin/env bash
# Reproduces the README's learned-placement results: on the four reference graphs (4 devices,
# reference model) and the four generated workloads (4 devices, 4xP100-PCIe), Doppler-SIM
# (Stage I + Stage II, trained inside `doppler compare`) against the heuristics and local search
# given the same number of simulator calls, mean and std over 3 seeds. Writes one JSON file per
# problem into OUT_DIR and prints a Markdown summary.
# Usage: scripts/doppler_results.sh [BUILD_DIR] [OUT_DIR] [IL_EPISODES] [SIM_EPISODES] [SEEDS]
# (METHODS=... overrides the compared methods.)
set -euo pipefail
build=${1:-build}
out=${2:-doppler-results}
il=${3:-300}
sim=${4:-1000}
seeds=${5:-3}
doppler="$build/doppler"
shared="$(cd "$(dirname "$0")/.." && pwd)/../shared/reference-graphs"
mkdir -p "$out"
budget=$((il + 1 + sim + 1))  # simulator calls made by doppler-sim: episodes and two greedy rollouts
methods=${METHODS:-"critical-path,heft,etf,m-etf,enumopt,local-search,doppler-sim:il=$il,sim=$sim,placeto:calls=$((il + 1 + sim + 1)),gdp:calls=$((il + 1 + sim + 1))"}

run() {  # name graph extra-args...
  local name=$1 graph=$2
  shift 2
  [ -s "$out/$name.json" ] || "$doppler" compare "$graph" --devices 4 --methods "$methods" --seeds "$seeds" \
      --budget "$budget" --json-file "$out/$name.json" "$@" >/dev/null
}

if [ -d "$shared" ]; then
  for g in gdp_chain_mm_112nodes gdp_ffnn_192nodes gdp_transformer_block_215nodes gdp_full_transformer_layer_261nodes; do
    run "$g" "$shared/$g.txt"
  done
fi
for w in chainmm ffnn llama-block llama-layer; do
  [ -f "$out/$w.graph.json" ] || "$doppler" generate "$w" --devices 4 -o "$out/$w.graph.json" >/dev/null
  run "$w-p100" "$out/$w.graph.json" --hardware p100
done

echo "| problem | critical-path | heft | etf | m-etf | enumopt | local-search | placeto | gdp | doppler-sim | lower bound |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for f in "$out"/*.json; do
  case "$f" in *.graph.json) continue ;; esac
  python3 - "$f" <<'PY' 2>/dev/null || true
import json, sys
j = json.load(open(sys.argv[1]))
scale = 1e10 if j["unit"] == "reference" and j["graph"].startswith("gdp_") else 1.0
ms = j["unit"] == "seconds"
def fmt(m, s=None):
    v = m / scale * (1e3 if ms else 1)
    t = f"{v:.4g}" + (" ms" if ms else "")
    return t + (f" ± {s / scale * (1e3 if ms else 1):.2g}" if s else "")
cells = {m["method"].split(":")[0]: fmt(m["mean"], m["std"] if m["std"] > 0 else None) for m in j["methods"]}
order = ["critical-path", "heft", "etf", "m-etf", "enumopt", "local-search", "placeto", "gdp", "doppler-sim"]
print("| " + j["graph"] + " | " + " | ".join(cells.get(m, "-") for m in order) + " | " + fmt(j["lower_bound"]) + " |")
PY
done
