#!/usr/bin/env bash
# Stage I on each reference graph (4 devices, reference model): the greedy policy's agreement
# with the critical-path teacher (last 10 episodes) and its makespan against critical-path's.
# Usage: scripts/stage1_results.sh [BUILD_DIR] [OUT_DIR] [EPISODES]
set -euo pipefail
build=${1:-build}
out=${2:-stage1-results}
episodes=${3:-300}
doppler="$build/doppler"
shared="$(cd "$(dirname "$0")/.." && pwd)/../shared/reference-graphs"
[ -d "$shared" ] || { echo "../shared/reference-graphs is absent" >&2; exit 1; }
mkdir -p "$out"
echo "| graph | SEL match | PLC match | greedy makespan / 1e10 | critical-path / 1e10 | ratio | seconds / episode |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for g in gdp_chain_mm_112nodes gdp_ffnn_192nodes gdp_transformer_block_215nodes gdp_full_transformer_layer_261nodes; do
  [ -s "$out/$g.json" ] || "$doppler" train "$shared/$g.txt" --devices 4 --stage il --episodes "$episodes" -o "$out/$g" --json > "$out/$g.json"
  cp=$("$doppler" place "$shared/$g.txt" --devices 4 --method critical-path --json | sed -n 's/^ *"makespan": *\([0-9.e+-]*\).*/\1/p')
  read -r greedy spe sel plc < <(grep -E '"(teacher_match_sel_last10|teacher_match_plc_last10|greedy_makespan|seconds_per_episode)"' "$out/$g.json" \
      | tr -d ' ",' | cut -d: -f2 | paste -sd' ')
  awk -v g="$g" -v s="$sel" -v p="$plc" -v gm="$greedy" -v c="$cp" -v t="$spe" \
      'BEGIN { printf "| %s | %.1f%% | %.1f%% | %.4g | %.4g | %.3f | %.3f |\n", g, 100*s, 100*p, gm/1e10, c/1e10, gm/c, t }'
done
