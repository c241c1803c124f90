# shellcheck shell=bash
# Sourced by the scripts that run on the GPU machine (gpu-check.sh, gpu-sys.sh, gpu-table.sh),
# whose image documents cmake, ninja, nvcc and a Python with torch (a venv at /opt/torch/.venv)
# but not that they are on PATH.
# `gpu_tools`: appends to PATH the folder of each of cmake, ninja and nvcc that PATH lacks, from
# the torch venv's bin (TORCH_VENV, default /opt/torch/.venv) or /usr/local/cuda/bin; appended,
# so that python3 stays the one PATH had.
# `torch_python`: prints the first of $PYTHON, python3, the venv's python3 and /usr/bin/python3
# that imports torch; a one-line error on stderr and status 1 when none does.
gpu_venv_bin=${TORCH_VENV:-/opt/torch/.venv}/bin

gpu_tools() {
  local t d
  for t in cmake ninja nvcc; do
    command -v "$t" >/dev/null && continue
    for d in "$gpu_venv_bin" /usr/local/cuda/bin; do
      if [ -x "$d/$t" ]; then
        PATH=$PATH:$d
        break
      fi
    done
  done
  export PATH
}

torch_python() {
  local p
  for p in ${PYTHON:+"$PYTHON"} python3 "$gpu_venv_bin/python3" /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null; then
      command -v "$p"
      return 0
    fi
  done
  echo "no Python that imports torch (tried ${PYTHON:+$PYTHON, }python3, $gpu_venv_bin/python3, /usr/bin/python3): set PYTHON" >&2
  return 1
}
