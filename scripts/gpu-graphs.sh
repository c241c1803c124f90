# shellcheck shell=bash
# shellcheck disable=SC2034  # llama_sizes is read by the scripts that source this one
# Sourced by scripts/gpu-table.sh, gpu-placements.sh and gpu-sys.sh: the graphs of issue 49's
# table, so that placements made on one machine fit the graphs generated on the other.
# `gpu_graph D NAME DTYPE OUT`: graph NAME (chainmm, ffnn, llama-block, llama-layer) for 4
# devices with DTYPE tensors, written by the doppler binary D to OUT: the generators' default
# sizes, Llama at 7B dimensions (dim 4096, 32 heads, FFN 11008, seq 2048, vocab 32000). With
# DRY=1 small sizes (a CPU engine's), and `llama_sizes` (the scripts/torch_llama_layer.py flags
# of the same layer) follows.
llama=(-p dim=4096 -p heads=32 -p ffn=11008 -p seq=2048)
llama_sizes=(--dim 4096 --heads 32 --ffn 11008 --seq 2048)
chainmm=() ffnn=()
if [ "${DRY:-0}" = 1 ]; then
  llama=(-p dim=256 -p heads=4 -p ffn=512 -p seq=128)
  llama_sizes=(--dim 256 --heads 4 --ffn 512 --seq 128)
  chainmm=(-p n=512) ffnn=(-p batch=1024 -p hidden=2048)
fi

gpu_graph() {
  local D=$1 name=$2 dtype=$3 out=$4 params
  case $name in
    llama-block) params=("${llama[@]}") ;;
    llama-layer) params=("${llama[@]}" -p vocab=32000) ;;
    chainmm) params=("${chainmm[@]}") ;;
    ffnn) params=("${ffnn[@]}") ;;
    *) echo "gpu_graph: unknown graph '$name' (chainmm, ffnn, llama-block, llama-layer)" >&2; return 2 ;;
  esac
  "$D" -q generate "$name" "${params[@]}" --dtype "$dtype" --devices 4 -o "$out"
}

# graph_sum FILE: the SHA-256 of a graph file. Placements made for a graph keep it beside them
# (<dir>/<graph>/graph.sha256), and a run that measures them checks it against the graph it
# generated: a placement of another graph with the same op count would run without complaint.
graph_sum() {
  sha256sum "$1" | cut -d' ' -f1
}

# check_graph_sum DIR GRAPH: fails, saying why, when DIR/graph.sha256 exists and is not GRAPH's.
check_graph_sum() {
  [ -e "$1/graph.sha256" ] || return 0
  [ "$(cat "$1/graph.sha256")" = "$(graph_sum "$2")" ] && return 0
  echo "$1: placements made for another graph than $2 (graph.sha256 differs: other sizes, dtype or generator)"
  return 1
}
