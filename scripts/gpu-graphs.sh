# Sourced by scripts/gpu-table.sh and scripts/gpu-placements.sh: the graphs of issue 49's table,
# so that placements made on one machine fit the graphs generated on the other.
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
