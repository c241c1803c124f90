#!/usr/bin/env bash
# Search with the learned prior: `local-search` against `doppler-search` (default: the shipped
# model, or DOPPLER_MODEL, no training) at 1,000, 4,000 and 20,000 simulator calls and at 1 and
# 10 seconds, with ETF, the policy's greedy placement (doppler:samples=1) and zero-shot best of
# 64 samples (doppler:samples=64) as reference rows. One `doppler place --json` per problem, row
# and seed, so every run pays its own model load (the seconds are place()'s, process start-up
# excluded). Mean ± std over seeds.
# Problems: the four held-out reference graphs (4 devices, reference model; skipped with a
# message when ../shared/reference-graphs is absent) and generated graphs outside the training
# distribution (models/pretrain-spec.json): other sizes, device counts and hardware profiles.
# Usage: scripts/search_results.sh [--quick] [BUILD_DIR] [OUT_DIR] [SEEDS]
#   --quick: 1 seed, 1,000 calls and 1 second only, on the transformer block and one generated
#   graph (a smoke test of the script, not a result).
# Environment: DOPPLER_MODEL (the policy of every doppler row), PROBLEMS (space list of names),
# LABELS (extended regex: only the row labels that match, e.g. '1k|1 s'), JOBS (runs at a time,
# default 1: time budgets and seconds are only comparable without competing runs).
# Writes OUT_DIR/results.md and OUT_DIR/results.csv; runs already in OUT_DIR/runs are reused.
set -euo pipefail
quick=0
args=()
for a in "$@"; do
  if [ "$a" = --quick ]; then quick=1; else args+=("$a"); fi
done
build=${args[0]:-build}
out=${args[1]:-search-results}
seeds=${args[2]:-3}
jobs=${JOBS:-1}
root="$(cd "$(dirname "$0")/.." && pwd)"
doppler="$(cd "$build" && pwd)/doppler"
[ -x "$doppler" ] || { echo "search_results.sh: no doppler binary in $build" >&2; exit 2; }
shared="$root/../shared/reference-graphs"
model=$(realpath "${DOPPLER_MODEL:-$root/models/doppler-pretrained.pt}")
[ -f "$model" ] || { echo "search_results.sh: no model $model" >&2; exit 2; }
export DOPPLER_MODEL="$model"
mkdir -p "$out/graphs" "$out/runs"

declare -A graph devices hardware
if [ -d "$shared" ]; then
  for g in chain_mm_112nodes ffnn_192nodes transformer_block_215nodes \
    full_transformer_layer_261nodes; do
    [ -f "$shared/gdp_$g.txt" ] || continue
    graph[ref-$g]="$shared/gdp_$g.txt"; devices[ref-$g]=4; hardware[ref-$g]=reference
  done
else
  echo "search_results.sh: $shared is absent; skipping the reference graphs" >&2
fi
# 16 H100s: two DGX H100 nodes (the shipped h100 profile has 8 devices), NVSwitch inside a node,
# 400 Gb/s InfiniBand per GPU between the nodes.
h100x16="$out/graphs/16xH100-2node.json"
[ -s "$h100x16" ] || python3 - "$root/hardware/8xH100-NVSwitch.json" >"$h100x16" <<'PY'
import json, sys
n, node = 16, 8
def link(a, b, inside, across):
    return 0 if a == b else (inside if a // node == b // node else across)
print(json.dumps({
    "format": "doppler-hardware", "version": 1, "name": "16xH100-2node",
    "description": "two DGX H100 nodes: NVSwitch (450 GB/s per direction) inside a node, "
                   "400 Gb/s InfiniBand (50 GB/s, 5 us) per GPU between the nodes",
    "device": json.load(open(sys.argv[1]))["device"], "count": n,
    "topology": {"kind": "matrix",
                 "bandwidth": [[link(a, b, 450e9, 50e9) for b in range(n)] for a in range(n)],
                 "latency": [[link(a, b, 1e-6, 5e-6) for b in range(n)] for a in range(n)]}}))
PY
# name workload devices hardware params...: none of these is in the training spec (llama-block
# trains on 2, 3, 5 and 6 devices; llama-layer and ffnn at other sizes; chainmm at n = 4096,
# 8192 and 16384; random DAGs on the reference model and 8xA100 only, never a two-node
# profile). The 13B graphs are those of scripts/pretrain_results.sh.
while read -r name w d hw params; do
  [ "$hw" = h100x16 ] && hw=$h100x16
  f="$out/graphs/$name.json"
  gen=()
  for p in $params; do gen+=(--param "$p"); done
  [ -s "$f" ] || "$doppler" generate "$w" --devices "$d" "${gen[@]}" -o "$f" >/dev/null
  graph[$name]="$f"; devices[$name]=$d; hardware[$name]=$hw
done <<'PROBLEMS'
llama-block-ref8 llama-block 8 reference
llama-block-13b-a100x8 llama-block 8 a100 seq=2048 dim=5120 heads=40 ffn=13824
llama-layer-13b-h100x8 llama-layer 8 h100 seq=2048 dim=5120 heads=40 ffn=13824
ffnn-h100x8 ffnn 8 h100 batch=16384 hidden=32768
chainmm-12k-v100x4 chainmm 4 v100 n=12000
random-dag-600-h100x16 random-dag 16 h100x16 ops=600 width=32 density=0.1 ccr=1 seed=11
PROBLEMS

# label|budget options|method spec
runs="etf|--budget 1000|etf
greedy|--budget 1000|doppler:samples=1
zero-shot K=64|--budget 1000|doppler:samples=64
local-search 1k|--budget 1000|local-search
doppler-search 1k|--budget 1000|doppler-search
local-search 4k|--budget 4000|local-search
doppler-search 4k|--budget 4000|doppler-search
local-search 20k|--budget 20000|local-search
doppler-search 20k|--budget 20000|doppler-search
local-search 1 s|--time-budget 1|local-search
doppler-search 1 s|--time-budget 1|doppler-search
local-search 10 s|--time-budget 10|local-search
doppler-search 10 s|--time-budget 10|doppler-search"
problems=${PROBLEMS:-"${!graph[*]}"}
labels=${LABELS:-.}
if [ "$quick" = 1 ]; then
  seeds=1
  problems=${PROBLEMS:-"ref-transformer_block_215nodes llama-block-ref8"}
  labels=${LABELS:-"^(etf|greedy|zero-shot K=64|.* 1k|.* 1 s)$"}
fi

jobfile="$out/jobs.txt"
: >"$jobfile"
for p in $problems; do
  [ -n "${graph[$p]:-}" ] || { echo "search_results.sh: unknown or absent problem $p" >&2; continue; }
  hw=()
  [ "${hardware[$p]}" = reference ] || hw=(--hardware "${hardware[$p]}")
  [ -s "$out/runs/$p.info.json" ] ||
    "$doppler" info "${graph[$p]}" "${hw[@]}" --devices "${devices[$p]}" --json \
      >"$out/runs/$p.info.json" 2>/dev/null
  while IFS='|' read -r label budget spec; do
    [[ "$label" =~ $labels ]] || continue
    n=$seeds
    [ "$spec" = etf ] && n=1
    for ((s = 0; s < n; s++)); do
      f="$out/runs/$p.${label// /_}.s$s.json"
      [ -s "$f" ] && continue
      echo "$doppler place ${graph[$p]} --devices ${devices[$p]} ${hw[*]} --method $spec $budget --seed $s --threads 1 --json >$f.tmp && mv $f.tmp $f" >>"$jobfile"
    done
  done <<<"$runs"
done
echo "search_results.sh: $(wc -l <"$jobfile") runs, $jobs at a time, model $model" >&2
xargs -P "$jobs" -I{} sh -c '{} 2>>'"$out"'/errors.log || echo "failed: {}" >>'"$out"'/errors.log' \
  <"$jobfile"
python3 "$root/scripts/search_tables.py" "$out/runs" "$out/results.csv" >"$out/results.md"
echo "search_results.sh: wrote $out/results.md and $out/results.csv" >&2
