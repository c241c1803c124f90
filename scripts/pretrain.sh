#!/usr/bin/env bash
# Produces the shipped pretrained policy models/doppler-pretrained.pt (docs/pretraining.md):
# `doppler pretrain` over models/pretrain-spec.json with the reference implementation's four
# graphs (4 devices) held out, then the weights alone exported. Resumable: run it again after an
# interruption and it continues from RUN/ckpt.pt.
#   scripts/pretrain.sh [RUN_DIR]     (default: runs/pretrain)
# Environment: DOPPLER (the binary; default build/doppler), REFERENCE_GRAPHS (default
# ../shared/reference-graphs), RANKS (> 1: data-parallel under mpirun).
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${1:-runs/pretrain}
DOPPLER=${DOPPLER:-build/doppler}
REF=${REFERENCE_GRAPHS:-../shared/reference-graphs}
RANKS=${RANKS:-1}
HELD=()
for g in gdp_chain_mm_112nodes gdp_ffnn_192nodes gdp_transformer_block_215nodes \
         gdp_full_transformer_layer_261nodes; do
  if [ -f "$REF/$g.txt" ]; then HELD+=(--held-out "$REF/$g.txt"); fi
done
[ ${#HELD[@]} -gt 0 ] || echo "pretrain.sh: $REF is absent: no held-out evaluation" >&2
LAUNCH=()
[ "$RANKS" -gt 1 ] && LAUNCH=(mpirun --allow-run-as-root --oversubscribe -np "$RANKS")
if [ -f "$RUN/ckpt.pt" ]; then
  "${LAUNCH[@]}" "$DOPPLER" pretrain --resume "$RUN" --export models/doppler-pretrained.pt
else
  "${LAUNCH[@]}" "$DOPPLER" pretrain -o "$RUN" --spec models/pretrain-spec.json "${HELD[@]}" \
    --il-updates 200 --updates 12000 --batch 4 --rollouts 8 --lr 1e-3 --lr-end 3e-5 \
    --temperature 2 --eval-every 250 --checkpoint-every 50 --seed 1 \
    --export models/doppler-pretrained.pt
fi
