# shellcheck shell=bash
# The large graphs of the scale and parallel results (sourced by scale_results.sh and
# parallel_results.sh): large_graph NAME OUT DOPPLER makes OUT/NAME.json when missing and prints
# "file devices hardware" (hardware - for the reference model). Names: dag20k, dag2k,
# llama7b-fwd, llama7b-train, gpt12 (exported by scripts/export_gpt12.py with Debian's
# python3-torch, ~20 s), inception (inception_v3 batch 1 exported by tests/onnx/models.py).
large_graph() {
  local name=$1 out=$2 d=$3 here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  local f=$out/$name.json
  case $name in
    dag20k)
      [ -f "$f" ] || $d -q generate random-dag -p ops=20000 -p seed=1 --devices 8 -o "$f" >&2
      echo "$f 64 -" ;;
    dag2k)
      [ -f "$f" ] || $d -q generate random-dag -p ops=2000 -p seed=1 --devices 8 -o "$f" >&2
      echo "$f 8 -" ;;
    llama7b-fwd)
      [ -f "$f" ] || $d -q generate llama -p size=7b --devices 8 -o "$f" >&2
      echo "$f 8 h100" ;;
    llama7b-train)
      [ -f "$f" ] || $d -q generate llama -p size=7b --training --devices 16 -o "$f" >&2
      echo "$f 16 h100x16" ;;
    gpt12)
      [ -f "$out/gpt12.onnx" ] || /usr/bin/python3 "$here/scripts/export_gpt12.py" "$out/gpt12.onnx" >&2
      [ -f "$f" ] || $d -q import "$out/gpt12.onnx" --devices 8 -o "$f" >&2
      echo "$f 8 v100" ;;
    inception)
      [ -f "$out/inception/model.onnx" ] ||
        /usr/bin/python3 "$here/tests/onnx/models.py" export inception_v3 b1 "$out/inception" >/dev/null
      [ -f "$f" ] || $d -q import "$out/inception/model.onnx" --devices 8 -o "$f" >&2
      echo "$f 8 v100" ;;
    *) echo "unknown graph $name" >&2; return 2 ;;
  esac
}
