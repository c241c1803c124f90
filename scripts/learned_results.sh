#!/usr/bin/env bash
# Reproduces the learned-placement tables of docs/results/learned.md: every method against the same
# budgets of simulator calls (training included), mean and std over seeds, wall-clock time.
# Problems: the four reference graphs (../shared/reference-graphs, 4 devices, reference model;
# skipped when absent) and the four generated workloads on 4 x P100 and 8 x V100.
# One `doppler compare` per (problem, budget, method), run JOBS at a time; then
# scripts/learned_tables.py prints the Markdown tables.
# Usage: scripts/learned_results.sh [BUILD_DIR] [OUT_DIR] [BUDGETS] [SEEDS] [JOBS]
#   BUDGETS: comma list (default 1000,4000,20000); JOBS: parallel compares (default nproc/2:
#   each learned method runs its rollouts on two threads).
# Environment: PROBLEMS (space list of names below, default all), METHODS (comma list, default
# below), PAPER_MAX_BUDGET (largest budget for doppler-sim:preset=paper, default 4000: it makes
# one update per rollout and costs ~10x more per call), PLACETO_MAX_BUDGET (default 4000).
set -euo pipefail
build=${1:-build}
out=${2:-learned-results}
budgets=${3:-1000,4000,20000}
seeds=${4:-3}
jobs=${5:-$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))}
doppler="$(cd "$(dirname "$build/doppler")" && pwd)/doppler"
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="$root/../shared/reference-graphs"
methods=${METHODS:-"critical-path,heft,etf,enumopt,local-search,placeto,gdp,doppler-sim:preset=paper,doppler-sim,doppler-search:train=0.5"}
paper_max=${PAPER_MAX_BUDGET:-4000}
placeto_max=${PLACETO_MAX_BUDGET:-4000}
mkdir -p "$out/graphs" "$out/runs"

declare -A graph devices hardware
for g in chain_mm_112nodes ffnn_192nodes transformer_block_215nodes full_transformer_layer_261nodes; do
  [ -f "$shared/gdp_$g.txt" ] || continue
  graph[ref-$g]="$shared/gdp_$g.txt"; devices[ref-$g]=4; hardware[ref-$g]=""
done
for w in chainmm ffnn llama-block llama-layer; do
  for hp in "p100 4" "v100 8"; do
    set -- $hp
    f="$out/graphs/$w-$2.json"
    [ -f "$f" ] || "$doppler" generate "$w" --devices "$2" -o "$f" >/dev/null
    graph[$w-$1]="$f"; devices[$w-$1]=$2; hardware[$w-$1]="--hardware $1"
  done
done
problems=${PROBLEMS:-"${!graph[*]}"}

jobfile="$out/jobs.txt"
: >"$jobfile"
for p in $problems; do
  for b in ${budgets//,/ }; do
    IFS=, read -ra ms <<<"$methods"
    for m in "${ms[@]}"; do
      case "$m" in doppler-sim:preset=paper) [ "$b" -le "$paper_max" ] || continue ;; esac
      case "$m" in placeto*) [ "$b" -le "$placeto_max" ] || continue ;; esac
      case "$m" in critical-path|heft|etf) [ "$b" = "${budgets%%,*}" ] || continue ;; esac
      name="$p.$b.${m//[:=,]/_}"
      [ -s "$out/runs/$name.json" ] && continue
      case "$m" in doppler-sim:preset=paper) cost=$((10 * b)) ;; doppler*|gdp*|placeto*) cost=$b ;; *) cost=0 ;; esac
      echo "$cost $doppler compare ${graph[$p]} --devices ${devices[$p]} ${hardware[$p]} --methods $m --seeds $seeds --budget $b --json-file $out/runs/$name.json" >>"$jobfile"
    done
  done
done
echo "$(wc -l <"$jobfile") compares, $jobs at a time" >&2
# The most expensive compares first (learned methods, largest budgets), so that the tail is short.
sort -k1,1nr "$jobfile" | cut -d' ' -f2- | xargs -P "$jobs" -I{} sh -c '{} >/dev/null 2>>'"$out"'/errors.log || echo "failed: {}" >>'"$out"'/errors.log'
python3 "$root/scripts/learned_tables.py" "$out/runs"
