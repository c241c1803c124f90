#!/usr/bin/env bash
# The distillation ablation of docs/pretraining.md: from the v1 model, 2 rounds of 200 DAgger
# updates on a 240-problem pool of the shipped spec, changing one setting at a time: the label
# search of round 1 (policy-guided doppler-search or local-search), the policy-gradient term
# (--pg-weight 0 or 0.5), DAgger's mixture (--expert-mix 0, 0.5, 1), the learning rate (3e-4,
# 1e-4) and the networks that imitate (both, SEL, PLC); and the model before distillation against
# the same labels. Prints one table row per run and round from its log.jsonl (round evaluations).
# Usage: scripts/distill_ablation.sh [BUILD] [OUT]
# Environment: INIT (default runs/v1-pretrained.pt: the model before distillation, e.g. from
# git show <rev>:models/doppler-pretrained.pt), REFERENCE_GRAPHS (../shared/reference-graphs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-runs/ablation}
init=${INIT:-runs/v1-pretrained.pt}
ref=${REFERENCE_GRAPHS:-../shared/reference-graphs}
mkdir -p "$out"
python3 -c "import json,sys; s=json.load(open('models/pretrain-spec.json')); s['pool']=240; json.dump(s, open(sys.argv[1], 'w'))" "$out/spec.json"
held=()
for g in gdp_chain_mm_112nodes gdp_ffnn_192nodes gdp_transformer_block_215nodes \
         gdp_full_transformer_layer_261nodes; do
  [ -f "$ref/$g.txt" ] && held+=(--held-out "$ref/$g.txt")
done
while read -r name args; do
  [ -f "$out/$name/log.jsonl" ] && [ "$(wc -l <"$out/$name/log.jsonl")" = 400 ] && continue
  rm -rf "${out:?}/$name"
  # shellcheck disable=SC2086
  "$build/doppler" pretrain -o "$out/$name" --spec "$out/spec.json" "${held[@]}" --init "$init" \
    --il-updates 0 --rounds 2 --round-updates 200 --label-budget 2000 --batch 4 --rollouts 4 \
    --temperature 1 --eval-every 0 --eval-budget 20000 --eval-pool 32 --seed 1 $args \
    >"$out/$name.out" 2>&1
done <<'RUNS'
policy-labels --distill doppler-search --expert-mix 0.5
local-search-labels --distill local-search --expert-mix 0.5
policy-labels+pg --distill doppler-search --expert-mix 0.5 --pg-weight 0.5
policy-labels,mix=0 --distill doppler-search --expert-mix 0
policy-labels,mix=1 --distill doppler-search --expert-mix 1
policy-labels,lr=1e-4 --distill doppler-search --expert-mix 0.5 --lr 1e-4 --lr-end 1e-5
policy-labels,nets=sel --distill doppler-search --expert-mix 0.5 --distill-nets sel
policy-labels,nets=plc --distill doppler-search --expert-mix 0.5 --distill-nets plc
RUNS
# The model before distillation, evaluated against the same round-0 labels (one update at a
# learning rate of 1e-12).
if [ ! -f "$out/v1-no-distillation/log.jsonl" ]; then
  rm -rf "$out/v1-no-distillation"
  "$build/doppler" pretrain -o "$out/v1-no-distillation" --spec "$out/spec.json" "${held[@]}" \
    --init "$init" --il-updates 0 --distill local-search --rounds 1 --round-updates 1 \
    --label-budget 2000 --lr 1e-12 --lr-end 1e-12 --batch 4 --rollouts 4 --temperature 1 \
    --eval-every 0 --eval-budget 20000 --eval-pool 32 --seed 1 >"$out/v1-no-distillation.out" 2>&1
fi
python3 scripts/distill_tables.py "$out"/*/log.jsonl
