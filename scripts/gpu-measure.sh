#!/usr/bin/env bash
# Issue 49's simulator targets on the GPU machine, after scripts/gpu-check.sh built BUILD
# (build-gpu): calibrate the CUDA engine on P SM partitions with `--gpu-link pcie` and tensors
# stored as DTYPE (bf16 by default: `--gpu-dtype bf16`, GEMMs on Tensor Cores), then
# validate-sim with that profile on a Llama layer of 7B dimensions (dim 4096, 32 heads, FFN
# 11008, seq 2048) and on the paper's ffnn and chainmm sizes, all generated with DTYPE's sizes
# (target: Spearman >= 0.95, MAPE <= 10% on each). Writes OUT_DIR/profile.json, OUT_DIR/
# calibrate.json, OUT_DIR/validate-NAME.json, OUT_DIR/measure.md (the figures and each step's
# seconds) and OUT_DIR/gpu-measure.log. Exit 1 when a step failed.
#
#   scripts/gpu-measure.sh BUILD OUT_DIR          P=4 DTYPE=bf16 ASSIGNMENTS=30 REPEAT=5
#
# Its own device call (at most 10 minutes): about 1-2 minutes of calibration and 1-3 of
# validation, unmeasured before a GPU was lent.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: scripts/gpu-measure.sh BUILD OUT_DIR}
out=${2:?usage: scripts/gpu-measure.sh BUILD OUT_DIR}
D=$(cd "$BUILD" && pwd)/doppler
P=${P:-4}
DTYPE=${DTYPE:-bf16}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-measure.log
: >"$log"
gpu=(--backend cuda --gpu-partitions "$P" --gpu-link pcie --gpu-dtype "$DTYPE")
step_prefix="gpu-measure"
. "$here/scripts/gpu-steps.sh"  # run NAME CMD...

# validate NAME GRAPH: validate-sim of GRAPH on the GPU with the calibrated profile.
validate() {
  "$D" validate-sim "$2" --hardware "$out/profile.json" --devices "$P" "${gpu[@]}" \
    --assignments "${ASSIGNMENTS:-30}" --repeat "${REPEAT:-5}" --json >"$out/validate-$1.json"
}

run calibrate sh -c "'$D' calibrate --devices $P ${gpu[*]} -o '$out/profile.json' --json \
  >'$out/calibrate.json'"
run generate sh -c "'$D' -q generate llama-layer -p dim=4096 -p heads=32 -p ffn=11008 \
  -p seq=2048 -p vocab=32000 --dtype $DTYPE --devices $P -o '$out/llama7b-layer.json' &&
  '$D' -q generate ffnn --dtype $DTYPE --devices $P -o '$out/ffnn.json' &&
  '$D' -q generate chainmm --dtype $DTYPE --devices $P -o '$out/chainmm.json'"
for g in llama7b-layer ffnn chainmm; do
  run "validate-$g" validate "$g" "$out/$g.json"
done

{
  echo "# gpu-measure $(date -u +%FT%TZ): $P partitions, --gpu-link pcie, $DTYPE tensors"
  echo
  echo "| step | seconds | exit |"
  echo "|---|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "| graph | Spearman | MAPE | target met |"
  echo "|---|---:|---:|---|"
  for g in llama7b-layer ffnn chainmm; do
    /usr/bin/env python3 - "$out/validate-$g.json" "$g" <<'PY' || true
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print(f"| {sys.argv[2]} | - | - | no result |")
    sys.exit()
rho, mape = j.get("spearman"), j.get("mape")
ok = rho is not None and mape is not None and rho >= 0.95 and mape <= 0.10
print(f"| {sys.argv[2]} | {rho:.3f} | {100 * mape:.1f}% | {'yes' if ok else 'no'} |")
PY
  done
} >"$out/measure.md"
cat "$out/measure.md"
exit "$failed"
