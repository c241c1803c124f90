#!/usr/bin/env bash
# Issue 49's table on the GPU machine, after scripts/gpu-check.sh built BUILD (build-gpu, no
# torch) and scripts/gpu-measure.sh calibrated PROFILE (its profile.json: 4 partitions, PCIe-paced
# copies, DTYPE tensors). For each graph (chainmm, ffnn, llama-block, llama-layer: the
# generators' sizes, Llama at 7B dimensions with seq 2048; tensors stored as DTYPE, bf16 by
# default: `--gpu-dtype bf16`, the graphs generated with its sizes):
#   1. `doppler compare` of the paper's torch-free methods (critical-path, etf, enumopt,
#      local-search, multilevel) on PROFILE's simulator, each search with the same simulator-call
#      budget, SEEDS seeds; every placement then measured on 4 SM partitions (`--measure
#      --backend cuda --gpu-link pcie`: interleaved runs, medians with 95% intervals). Placements
#      made elsewhere, the learned methods' from a CPU machine with the same profile, join as
#      rows: SAVED/<graph>/<method>.seed-<s>.json (`compare --assignments-dir` writes them;
#      SAVED may list several folders, colon-separated: scripts/gpu-placements.sh's and
#      scripts/gpu-sys.sh's). METHODS=none measures only those (the simulated column then is
#      PROFILE's, the profile they were placed on).
#   2. llama-layer only: the measured winner's placement run again with `peer` and `pcie` links,
#      beside the same layer in PyTorch on the whole GPU (scripts/torch_llama_layer.py) in bf16,
#      as a user would run it (and, with DTYPE=f32, with f32 tensors and bf16 Tensor Core
#      matmuls, as our engine then runs it).
# Writes OUT_DIR/table-<graph>.json (compare's JSON), OUT_DIR/torch*.json, OUT_DIR/table.md and
# OUT_DIR/gpu-table.log; exit 1 when a step failed.
#
#   scripts/gpu-table.sh BUILD PROFILE OUT_DIR
#     GRAPHS="chainmm ffnn llama-block llama-layer" BUDGET=20000 SEEDS=3 DTYPE=bf16 MATH=bf16
#     SAVED=DIR[:DIR...] METHODS=critical-path,etf,enumopt,local-search,multilevel|none
#
# Its own device call; unmeasured before a GPU was lent (the searches take about a minute per
# graph on 16 cores, the measurements one to three). DRY=1 checks the script on a CPU machine:
# small sizes, the CPU engine, PyTorch on the CPU in f32.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: scripts/gpu-table.sh BUILD PROFILE OUT_DIR}
PROFILE=${2:?usage: scripts/gpu-table.sh BUILD PROFILE OUT_DIR}
out=${3:?usage: scripts/gpu-table.sh BUILD PROFILE OUT_DIR}
D=$(cd "$BUILD" && pwd)/doppler
GRAPHS=${GRAPHS:-chainmm ffnn llama-block llama-layer}
METHODS=${METHODS:-critical-path,etf,enumopt,local-search,multilevel}
IFS=: read -ra saved_dirs <<<"${SAVED:-}"  # folders of placements made elsewhere
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-table.log
: >"$log"
DTYPE=${DTYPE:-bf16}
gpu=(--backend cuda --gpu-partitions 4 --gpu-dtype "$DTYPE" --gpu-math "${MATH:-bf16}")
torch=(--device cuda --dtype bf16)
if [ "${DRY:-0}" = 1 ]; then
  gpu=(--backend local)
  torch=(--device cpu --dtype f32)
  DTYPE=f32  # the CPU engine stores f32
fi
. "$here/scripts/gpu-tools.sh"  # torch_python
step_prefix="gpu-table"
. "$here/scripts/gpu-steps.sh"  # run NAME CMD...
. "$here/scripts/gpu-graphs.sh"  # gpu_graph, check_graph_sum, llama_sizes

# link KIND: sets `linked` to the flags that make copies between partitions cost KIND (none with
# DRY=1).
link() {
  linked=()
  [ "${DRY:-0}" = 1 ] || linked=(--gpu-link "$1")
}

# table NAME: compare's methods and the saved placements of NAME, measured on the GPU.
table() {
  local saved=() f m d tag=@saved
  [ "$METHODS" = none ] && tag=  # measuring only saved placements: their own names
  for d in "${saved_dirs[@]}"; do check_graph_sum "$d/$1" "$out/$1.json" || return 1; done
  for d in "${saved_dirs[@]}"; do
    for f in "$d/$1"/*.json; do
      [ -e "$f" ] || continue  # a folder without this graph's placements
      m=$(basename "$f" .json)
      [ -e "${f%.json}.seed-0.json" ] && continue  # a best-seed copy beside the seeds' files
      saved+=(--saved "${m%.seed-*}$tag=$f")
    done
  done
  mkdir -p "$out/assignments-$1"
  link pcie
  "$D" compare "$out/$1.json" --devices 4 --hardware "$PROFILE" --methods "$METHODS" \
    --budget "${BUDGET:-20000}" --seeds "${SEEDS:-3}" --threads 1 "${saved[@]}" \
    --assignments-dir "$out/assignments-$1" --measure "${gpu[@]}" "${linked[@]}" \
    --json-file "$out/table-$1.json" --markdown
}

# versus_torch: llama-layer's measured winner with peer and pcie links, and PyTorch's layer.
versus_torch() {
  local best stem l a d py
  best=$("${PYTHON:-python3}" -c "import json,sys; print(json.load(open(sys.argv[1]))['measured']['fastest'])" \
    "$out/table-llama-layer.json") || return 1
  stem=$(echo "$best" | sed 's/[^A-Za-z0-9_-]/_/g')
  a=$out/assignments-llama-layer/$stem.json
  if [ ! -e "$a" ]; then  # a saved row won: its best seed's file, in whichever SAVED folder
    for d in "${saved_dirs[@]}"; do [ -e "$d/llama-layer/${best%@saved}.json" ] && a=$d/llama-layer/${best%@saved}.json; done
  fi
  for l in peer pcie; do
    link "$l"
    "$D" execute "$out/llama-layer.json" -a "$a" "${gpu[@]}" \
      "${linked[@]}" --repeat 11 --json >"$out/ours-$l.json" || return 1
  done
  py=$(torch_python) || return 1
  "$py" "$here/scripts/torch_llama_layer.py" "${llama_sizes[@]}" --vocab 32000 "${torch[@]}" \
    --repeat 20 --json >"$out/torch.json" || return 1
  [ "$DTYPE" = f32 ] || return 0
  # like for like with f32 tensors: bf16 Tensor Core matmuls (the engine's --gpu-math bf16)
  "$py" "$here/scripts/torch_llama_layer.py" "${llama_sizes[@]}" --vocab 32000 \
    "${torch[@]:0:2}" --dtype f32 --matmul-precision medium --repeat 20 --json \
    >"$out/torch-f32-medium.json"
}

for g in $GRAPHS; do
  run "generate-$g" gpu_graph "$D" "$g" "$DTYPE" "$out/$g.json" && run "table-$g" table "$g"
done
case " $GRAPHS " in *" llama-layer "*) run versus-torch versus_torch ;; esac

"${PYTHON:-python3}" - "$out" $GRAPHS >"$out/table.md" <<'PY'
import json, os, sys
out, graphs = sys.argv[1], sys.argv[2:]
print("| graph | method | simulated | measured median | 95% interval | runs |")
print("|---|---|---:|---:|---|---:|")
for g in graphs:
    try:
        j = json.load(open(f"{out}/table-{g}.json"))
    except (OSError, ValueError):
        print(f"| {g} | (no result) | | | | |")
        continue
    for r in j["methods"]:
        iv = r["measured_interval"]
        print(f"| {g} | {r['method']} | {r['mean'] * 1e3:.2f} ms | {r['measured_median'] * 1e3:.2f} ms "
              f"| {iv['low'] * 1e3:.2f} .. {iv['high'] * 1e3:.2f} ms | {iv['runs']} |")
    m = j["measured"]
    print(f"| {g} | fastest: {m['fastest']} ({'significant' if m['significant'] else 'not significant'}) "
          f"| Spearman {m['spearman']:.2f} | | | |")
try:
    ts = [json.load(open(f"{out}/{f}.json")) for f in ("torch", "torch-f32-medium")
          if os.path.exists(f"{out}/{f}.json")]
    print()
    for t in ts:
        print(f"PyTorch {t['torch']} on the whole {t['device']} ({t['dtype']} tensors, matmul "
              f"precision {t['matmul_precision']}, {t['attention']} attention): "
              f"{t['median_s'] * 1e3:.2f} ms")
    for link in ("peer", "pcie"):
        o = json.load(open(f"{out}/ours-{link}.json"))
        print(f"ours, 4 partitions, {link} links: {o['makespan_median'] * 1e3:.2f} ms = "
              + ", ".join(f"{o['makespan_median'] / t['median_s']:.2f} x PyTorch "
                          f"{t['dtype']}/{t['matmul_precision']}" for t in ts))
except (OSError, ValueError, KeyError) as e:
    print(f"\n(no PyTorch comparison: {e})")
PY
{
  echo
  echo "| step | seconds | exit |"
  echo "|---|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >>"$out/table.md"
cat "$out/table.md"
exit "$failed"
