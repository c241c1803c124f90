#!/usr/bin/env bash
# Reproduces the pretrained-policy tables of docs/pretraining.md: the shipped model (or MODEL)
# zero-shot (1 and 64 samples) and fine-tuned (200 and 1,000 Stage II rollouts from it) against
# critical path, HEFT, ETF, local-search at 1,000 and 20,000 simulator calls and Doppler trained
# from scratch on the graph within 1,000 calls; mean and std over seeds, wall-clock per run.
# Problems: the four held-out reference graphs (4 devices; skipped when ../shared is absent),
# generated workloads at sizes, partitions, device counts and profiles outside the training
# spec, and a random DAG of 2,000 ops on 8 devices.
# Usage: scripts/pretrain_results.sh [BUILD_DIR] [OUT_DIR] [SEEDS] [JOBS]
# Environment: MODEL (default models/doppler-pretrained.pt), PROBLEMS (space list of names),
# LABELS (extended regex: only the method labels that match, e.g. '^(heft|etf)$').
set -euo pipefail
build=${1:-build}
out=${2:-pretrain-results}
seeds=${3:-3}
jobs=${4:-$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))}
doppler="$(cd "$(dirname "$build/doppler")" && pwd)/doppler"
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="$root/../shared/reference-graphs"
model=$(realpath "${MODEL:-$root/models/doppler-pretrained.pt}")
mkdir -p "$out/graphs" "$out/runs"

declare -A graph devices hardware
for g in chain_mm_112nodes ffnn_192nodes transformer_block_215nodes full_transformer_layer_261nodes; do
  [ -f "$shared/gdp_$g.txt" ] || continue
  graph[ref-$g]="$shared/gdp_$g.txt"; devices[ref-$g]=4; hardware[ref-$g]=""
done
# name workload devices hardware params...: none of these sizes or partitions is in the spec.
while read -r name w d hw params; do
  f="$out/graphs/$name.json"
  args=()
  for p in $params; do args+=(--param "$p"); done
  [ -f "$f" ] || "$doppler" generate "$w" --devices "$d" "${args[@]}" -o "$f" >/dev/null
  graph[$name]="$f"; devices[$name]=$d
  if [ "$hw" = reference ]; then hardware[$name]=""; else hardware[$name]="--hardware $hw"; fi
done <<'PROBLEMS'
llama-layer-13b-h100x8 llama-layer 8 h100 seq=2048 dim=5120 heads=40 ffn=13824
llama-layer-13b-ref16 llama-layer 16 reference seq=2048 dim=5120 heads=40 ffn=13824
llama-block-13b-a100x8 llama-block 8 a100 seq=2048 dim=5120 heads=40 ffn=13824
chainmm-12k-v100x4 chainmm 4 v100 n=12000
ffnn-h100x8 ffnn 8 h100 batch=16384 hidden=32768
random-dag-2000-ref8 random-dag 8 reference ops=2000 width=64 density=0.1 ccr=1 seed=7
PROBLEMS
problems=${PROBLEMS:-"${!graph[*]}"}

# label|budget|method spec
runs="critical-path|1000|critical-path
heft|1000|heft
etf|1000|etf
local-search 1k|1000|local-search
local-search 20k|20000|local-search
zero-shot K=1|1000|doppler:policy=$model,samples=1
zero-shot K=64|1000|doppler:policy=$model,samples=64
fine-tune 200|1000|doppler-sim:policy=$model,il=0,sim=200,samples=64
fine-tune 1000|2000|doppler-sim:policy=$model,il=0,sim=1000,samples=64
scratch 1k|1000|doppler-sim"
jobfile="$out/jobs.txt"
: >"$jobfile"
for p in $problems; do
  while IFS='|' read -r label budget spec; do
    [[ "$label" =~ ${LABELS:-.} ]] || continue
    name="$p.${label// /_}"
    [ -s "$out/runs/$name.json" ] && continue
    s=$seeds
    case "$spec" in critical-path|heft|etf) s=1 ;; esac
    echo "$doppler compare ${graph[$p]} --devices ${devices[$p]} ${hardware[$p]} --methods $spec --seeds $s --budget $budget --json-file $out/runs/$name.json" >>"$jobfile"
  done <<<"$runs"
done
echo "$(wc -l <"$jobfile") compares, $jobs at a time" >&2
xargs -P "$jobs" -I{} sh -c '{} >/dev/null 2>>'"$out"'/errors.log || echo "failed: {}" >>'"$out"'/errors.log' <"$jobfile"
python3 "$root/scripts/pretrain_tables.py" "$out/runs"
