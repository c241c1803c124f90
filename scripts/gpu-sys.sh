#!/usr/bin/env bash
# Doppler-SYS on the GPU machine, the last row of issue 49's table. Builds the CLI with the
# machine's pip torch (DOPPLER_TORCH_ROOT: its CPU libraries only; fmt and spdlog unpacked into a
# prefix of their own, see scripts/gpu-prefix.sh; zlib's headers from the bundle, the machine's
# libz.so.1) and the CUDA backend in BUILD, then for each graph of the table
# (scripts/gpu-graphs.sh) and seed:
#   Stages I and II: imitation of critical-path, then REINFORCE on PROFILE's simulator for
#     BUDGET episodes (BUDGET simulator calls, the other methods' budget in
#     scripts/gpu-placements.sh), every (graph, seed) at once on the cores;
#   Stage III, one at a time on the GPU: REAL episodes, each the median of 3 runs on 4 SM
#     partitions (--gpu-link pcie, DTYPE tensors), from Stage II's weights;
#   the safeguard: Stage III's placement and Stage II's measured side by side (compare
#     --measure), the faster kept, so Doppler-SYS never ends slower than where it started.
# Writes OUT_DIR/<graph>/doppler-sys.seed-<s>.json and doppler-sys.json (the seed measured
# fastest) with graph.sha256 (the graph they were made for), the layout `SAVED=` of scripts/gpu-table.sh reads; OUT_DIR/sys.md (per graph and
# seed: Stage II and Stage III measured, which was kept), OUT_DIR/runs/ (the stages' logs and
# placements; checkpoints deleted) and OUT_DIR/gpu-sys.log. Exit 1 when a step failed.
#
#   scripts/gpu-sys.sh OUT_DIR
#     STEPS="build train" GRAPHS="chainmm ffnn llama-block llama-layer" SEEDS=3 BUDGET=4000
#     REAL=30 PROFILE=h100-sm4 DTYPE=bf16 BUILD=build-gpu-torch TORCH_ROOT=(torch_python's torch)
#
# Unmeasured on a GPU (none lent yet): the torch build is about 2 minutes on 16 cores, Stages I
# and II about 3 (12 runs on 16 cores), Stage III and the safeguard about 2; STEPS=build and
# STEPS=train split it into two device calls. Then measure it beside the other methods:
#   SAVED=docs/results/gpu/placements-h100-sm4:OUT_DIR METHODS=none \
#     scripts/gpu-table.sh build-gpu h100-sm4 DIR
# DRY=1 checks it on a CPU machine: small graphs, Stage III and the measurements on the CPU
# engine, BUILD an existing torch build (e.g. configured with
# -DDOPPLER_TORCH_ROOT=/usr/lib/python3/dist-packages/torch).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
here=$(pwd)
out=${1:?usage: scripts/gpu-sys.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-sys.log
: >"$log"
BUILD=${BUILD:-build-gpu-torch}
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac
STEPS=${STEPS:-build train}
GRAPHS=${GRAPHS:-chainmm ffnn llama-block llama-layer}
SEEDS=${SEEDS:-3}
DTYPE=${DTYPE:-bf16}
PROFILE=${PROFILE:-h100-sm4}
gpu=(--gpu-partitions 4 --gpu-link pcie --gpu-dtype "$DTYPE" --gpu-math bf16)
engine=(--engine cuda "${gpu[@]}") measure=(--backend cuda "${gpu[@]}")
if [ "${DRY:-0}" = 1 ]; then
  engine=(--engine cpu) measure=(--backend local) DTYPE=f32
fi
step_prefix="gpu-sys"
. scripts/gpu-steps.sh   # run NAME CMD...
. scripts/gpu-graphs.sh  # gpu_graph D NAME DTYPE OUT, graph_sum FILE
. scripts/gpu-prefix.sh  # gpu_unpack, gpu_configure, gpu_library_path
. scripts/gpu-tools.sh   # gpu_tools, torch_python
gpu_tools                # cmake, ninja and nvcc outside PATH
S=$BUILD.prefix/deps F=$BUILD.prefix/fmt
gpu_library_path "$S" "$F"  # for the build's link and the runs

# build: the prefixes, then the torch + CUDA configuration of the CLI in BUILD.
build() {
  local root zlib
  root=${TORCH_ROOT:-$("$(torch_python)" -c 'import os, torch; print(os.path.dirname(torch.__file__))')} ||
    { echo "no torch found: set TORCH_ROOT"; return 1; }
  zlib=$( (ldconfig -p 2>/dev/null || true) | awk '/libz\.so\.1 .*x86-64/ { print $NF; exit }')
  [ -n "$zlib" ] || { echo "no libz.so.1 in ldconfig's cache"; return 1; }
  rm -rf "$BUILD.prefix" && gpu_unpack "$S" "$F" || return 1
  gpu_configure "$BUILD" "$S" "$F" -DZLIB_INCLUDE_DIR="$S/usr/include" -DZLIB_LIBRARY="$zlib" \
    -DDOPPLER_WITH_TORCH=on -DDOPPLER_TORCH_ROOT="$root" &&
    cmake --build "$BUILD" -j "$(nproc)" --target doppler_cli
}

# simulated NAME SEED: Stages I and II of NAME's graph, seed SEED, in runs/NAME-SEED.
simulated() {
  local r=$out/runs/$1-$2 D=$BUILD/doppler
  rm -rf "$r" && mkdir -p "$r"
  gpu_graph "$D" "$1" "$DTYPE" "$r/graph.json" &&
    "$D" -q train "$r/graph.json" --stage il --hardware "$PROFILE" --seed "$2" -o "$r/il" \
      --json >"$r/il.json" &&
    "$D" -q train "$r/graph.json" --stage sim --init "$r/il" --hardware "$PROFILE" --seed "$2" \
      --episodes "${BUDGET:-4000}" -o "$r/sim" --json >"$r/sim.json"
}

# real NAME SEED: Stage III from Stage II's weights, then the safeguard; doppler-sys.seed-SEED.
real() {
  local r=$out/runs/$1-$2 D=$BUILD/doppler
  "$D" -q train "$r/graph.json" --stage real --init "$r/sim" --hardware "$PROFILE" --seed "$2" \
    --episodes "${REAL:-30}" --repeat 3 "${engine[@]}" -o "$r/real" --json >"$r/real.json" &&
    "$D" -q compare "$r/graph.json" --devices 4 --hardware "$PROFILE" --methods none \
      --saved "stage-ii=$r/sim/best.json" --saved "stage-iii=$r/real/best.json" --measure \
      "${measure[@]}" --json-file "$r/safeguard.json" >/dev/null &&
    python3 - "$r/safeguard.json" "$r" "$out/$1/doppler-sys.seed-$2.json" <<'PY'
import json, shutil, sys
j, run, dest = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
rows = {m["method"]: m["measured_median"] for m in j["methods"]}
kept = "stage-iii" if rows["stage-iii"] <= rows["stage-ii"] else "stage-ii"
shutil.copyfile(f"{run}/{'real' if kept == 'stage-iii' else 'sim'}/best.json", dest)
json.dump({"stage_ii": rows["stage-ii"], "stage_iii": rows["stage-iii"], "kept": kept},
          open(f"{run}/kept.json", "w"))
PY
}

# train: Stages I and II of every (graph, seed) at once (two threads each), then Stage III.
train() {
  local g s rc=0 width=$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))
  for g in $GRAPHS; do
    for ((s = 0; s < SEEDS; ++s)); do
      while [ "$(jobs -rp | wc -l)" -ge "$width" ]; do wait -n || rc=1; done
      simulated "$g" "$s" &
    done
  done
  while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || rc=1; done
  for g in $GRAPHS; do
    mkdir -p "$out/$g"
    graph_sum "$out/runs/$g-0/graph.json" >"$out/$g/graph.sha256"
    for ((s = 0; s < SEEDS; ++s)); do real "$g" "$s" || rc=1; done
  done
  rm -f "$out"/runs/*/*/ckpt.pt
  return "$rc"
}

case " $STEPS " in *" build "*) run build build || exit 1 ;; esac
case " $STEPS " in *" train "*) run train train ;; esac

python3 - "$out" $GRAPHS <<'PY' >"$out/sys.md"
import json, pathlib, shutil, sys
out, graphs = pathlib.Path(sys.argv[1]), sys.argv[2:]
print("| graph | seed | Stage II measured | Stage III measured | kept |")
print("|---|---:|---:|---:|---|")
for g in graphs:
    best = None
    for k in sorted(out.glob(f"runs/{g}-*/kept.json")):
        j, seed = json.loads(k.read_text()), k.parent.name.rsplit("-", 1)[1]
        t = min(j["stage_ii"], j["stage_iii"])
        print(f"| {g} | {seed} | {j['stage_ii'] * 1e3:.3f} ms | {j['stage_iii'] * 1e3:.3f} ms "
              f"| {j['kept']} |")
        if best is None or t < best[0]:
            best = (t, seed)
    if best:  # the best seed's copy, as compare --assignments-dir writes one
        shutil.copyfile(out / g / f"doppler-sys.seed-{best[1]}.json", out / g / "doppler-sys.json")
PY
cat "$out/sys.md"
{
  echo
  echo "| step | seconds | exit |"
  echo "|---|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >>"$out/sys.md"
exit "$failed"
