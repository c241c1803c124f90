#!/usr/bin/env bash
# Per-episode training time and inference (greedy placement) time of Doppler, Placeto and GDP on
# the four reference graphs (when ../shared/reference-graphs exists) and on generated random DAGs
# of 100 to 5,000 ops, 4 devices, reference model: the paper's scalability figure
# (docs/baselines.md). Everything runs single-threaded, one measurement at a time.
#
#  - Doppler: `doppler train --stage sim --episodes E` (Stage II episodes: encoders, N-step
#    rollout, simulation, update); inference: `doppler place --method doppler --policy CKPT`.
#  - GDP: `doppler train --method gdp --episodes E` (one-shot episodes); inference: `doppler place
#    --method gdp:policy=CKPT`.
#  - Placeto: `doppler train --method placeto --calls S+2` runs the first S steps of an episode
#    (one step = the full embedding recomputed + one simulation; every step of an episode costs
#    the same), the per-episode time is reported pro rata (x N / S) when N > S; inference:
#    `doppler place --method placeto:policy=CKPT` (N forward passes), measured in full up to
#    PLACETO_INFER_MAX ops and otherwise extrapolated from S greedy steps' worth (marked ~).
# Inference times include loading the checkpoint and building the graph tensors.
#
# Usage: scripts/scalability.sh [BUILD_DIR] [OUT_DIR]
# Environment: SIZES ("100 500 1000 2000 5000"), EPISODES (3), PLACETO_STEPS (200),
#              PLACETO_INFER_MAX (2000), DEVICES (4), SEED (1).
set -euo pipefail
build=${1:-build}
out=${2:-scalability}
sizes=${SIZES:-"100 500 1000 2000 5000"}
episodes=${EPISODES:-3}
psteps=${PLACETO_STEPS:-200}
pinfer=${PLACETO_INFER_MAX:-2000}
devices=${DEVICES:-4}
seed=${SEED:-1}
doppler="$build/doppler"
shared="$(cd "$(dirname "$0")/.." && pwd)/../shared/reference-graphs"
mkdir -p "$out/graphs" "$out/runs"

json() {  # file key
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

measure() {  # name graph
  local name=$1 graph=$2 r="$out/runs/$1"
  local ops
  ops=$("$doppler" info "$graph" --devices "$devices" --json | python3 -c \
    'import json,sys; j=json.load(sys.stdin); print(j.get("placed_ops", j.get("nodes")))')
  # Doppler
  "$doppler" train "$graph" --devices "$devices" --stage sim --episodes "$episodes" --seed "$seed" \
    --checkpoint-every 0 -o "$r-doppler" --json >"$r-doppler.train.json" 2>/dev/null
  "$doppler" place "$graph" --devices "$devices" --method doppler --policy "$r-doppler/ckpt.pt" \
    --json >"$r-doppler.place.json" 2>/dev/null
  # GDP
  "$doppler" train "$graph" --devices "$devices" --method gdp --episodes "$episodes" --calls 0 \
    --seed "$seed" -o "$r-gdp" --json >"$r-gdp.train.json" 2>/dev/null
  "$doppler" place "$graph" --devices "$devices" --method "gdp:policy=$r-gdp/ckpt.pt" \
    --json >"$r-gdp.place.json" 2>/dev/null
  # Placeto: S steps (2 more calls: the initial and the greedy placement's evaluations)
  "$doppler" train "$graph" --devices "$devices" --method placeto --calls $((psteps + 2)) \
    --seed "$seed" -o "$r-placeto" --json >"$r-placeto.train.json" 2>/dev/null
  local decided pinf
  decided=$(json "$r-placeto.train.json" decisions_per_episode)
  if [ "$decided" -le "$pinfer" ]; then
    "$doppler" place "$graph" --devices "$devices" --method "placeto:policy=$r-placeto/ckpt.pt" \
      --json >"$r-placeto.place.json" 2>/dev/null
    pinf=$(json "$r-placeto.place.json" placement_seconds)
  else  # the trainer's greedy placement is a full episode of forward passes: use its time
    pinf=$(json "$r-placeto.train.json" greedy_seconds)
  fi
  python3 - "$name" "$decided" "$r" "$pinf" <<'PY' | tee -a "$out/scalability.md"
import json, sys
name, decided, r, pinf = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
def j(suffix, key):
    return json.load(open(f"{r}-{suffix}.json"))[key]
def s(x):
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"
cells = [name, str(decided),
         s(j("doppler.train", "seconds_per_episode")), s(j("placeto.train", "seconds_per_episode")),
         s(j("gdp.train", "seconds_per_episode")),
         s(j("doppler.place", "placement_seconds")), s(pinf), s(j("gdp.place", "placement_seconds"))]
print("| " + " | ".join(cells) + " |")
PY
}

{
  echo "Per-episode training time and inference time, $devices devices, reference model,"
  echo "single-threaded ($(nproc) cores, one run at a time). Placeto's training time per episode is"
  echo "measured over its first $psteps steps and scaled to the N steps of a full episode."
  echo
  echo "| graph | decided ops N | Doppler train/ep | Placeto train/ep | GDP train/ep | Doppler infer | Placeto infer | GDP infer |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
} | tee "$out/scalability.md"

if [ -d "$shared" ]; then
  for g in gdp_chain_mm_112nodes gdp_ffnn_192nodes gdp_transformer_block_215nodes \
    gdp_full_transformer_layer_261nodes; do
    measure "$g" "$shared/$g.txt"
  done
fi
for n in $sizes; do
  g="$out/graphs/random-dag-$n.json"
  [ -f "$g" ] || "$doppler" generate random-dag -p ops="$n" -p seed="$seed" -o "$g" >/dev/null
  measure "random-dag-$n" "$g"
done
