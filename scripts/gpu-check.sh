#!/usr/bin/env bash
# On the GPU machine (no network, no apt), one command: unpacks the Debian packages of
# scripts/gpu-bundle.sh (.gpu/debs) into a scratch prefix (dpkg -x, never into /), configures the
# minimal + CUDA build (no torch, ONNX or MPI) in build-gpu, builds it with every core, runs the
# GPU checks and the CUDA engine's runs (cuda_engine below), and writes to OUT_DIR:
#   summary.json   GPU, driver, commit, each step's seconds and result, the checks' figures
#   summary.md     the same for a person
#   gpu-check.log  everything the steps printed
# Usage: DOPPLER_COMMIT=$(git rev-parse HEAD) scripts/gpu-check.sh OUT_DIR
# Exit 0 when every step passed, 1 otherwise (the summary says which). Must finish within
# 8 minutes, build included, so that a rerun fits the 15 minutes of device time: every command
# on the GPU is stopped DEADLINE seconds after the start (default 450; exit 124 in its step), and
# the summary is rewritten after each step, so that a hang or the device call's own time limit
# still leaves the steps that finished.
# It also runs on a CPU machine with nvcc: the build and the engine tests run, `doppler gpus`
# fails with "no CUDA driver or GPU" and the GPU tests skip (the summary then says FAILED).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${1:?usage: scripts/gpu-check.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-check.log
: >"$log"
steps=$out/steps.tsv
: >"$steps"
failed=0

DEADLINE=${DEADLINE:-450}
t_start=$(date +%s)

# limit CMD...: CMD, stopped (exit 124) when the deadline passes.
limit() {
  local left=$((t_start + DEADLINE - $(date +%s)))
  [ "$left" -gt 0 ] || { echo "past the ${DEADLINE} s deadline: $1 not run"; return 124; }
  timeout -k 5 "$left" "$@"
}

# step NAME CMD...: runs CMD (output to the log), records its seconds and exit code, and
# rewrites the summary.
step() {
  local name=$1
  shift
  local t0 rc
  t0=$(date +%s.%N)
  echo "== $name: $*" >>"$log"
  "$@" >>"$log" 2>&1
  rc=$?
  printf '%s\t%s\t%d\n' "$name" \
    "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$rc" >>"$steps"
  echo "gpu-check: $name: exit $rc ($(tail -1 "$steps" | cut -f2) s)" >&2
  [ "$rc" -eq 0 ] || failed=1
  summarize >/dev/null
  return "$rc"
}

S=$(mktemp -d)/prefix
. scripts/gpu-prefix.sh  # gpu_unpack, gpu_configure, gpu_library_path
. scripts/gpu-tools.sh   # gpu_tools
gpu_tools                # cmake, ninja and nvcc outside PATH
unpack() {
  gpu_unpack "$S"
}

configure() {
  rm -rf build-gpu
  gpu_configure build-gpu "$S" "$S" -DDOPPLER_WITH_TORCH=off
}

build() {
  cmake --build build-gpu -j "$(nproc)" --target doppler_cli test_cuda test_engine bench_cuda_gemm
}

info() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  g++ --version | head -1
  nvcc --version | tail -1
  echo "$(cmake --version | head -1) at $(command -v cmake), ninja $(ninja --version) at $(command -v ninja)"
  build-gpu/doppler --version
  limit build-gpu/doppler gpus --json >"$out/gpus.json"
}

# The green-context probe (scripts/gpu-bundle.sh's .gpu/probe, from ../shared/gpu), P = 4: its
# own evidence on partitions, cuBLAS on them, copies and events, whatever the backend does.
probe() {
  [ -f .gpu/probe/greenctx_probe.cu ] || { echo "no .gpu/probe: run scripts/gpu-bundle.sh"; return 1; }
  local nvcc
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$nvcc" -std=c++17 -O2 -DPROBE_ENTRY_POINTS -gencode=arch=compute_90,code=sm_90 \
    -Xlinker -rpath="$(dirname "$nvcc")/../lib64" .gpu/probe/greenctx_probe.cu \
    -o "$out/greenctx_probe" -lcublas || return 1
  limit timeout 90 "$out/greenctx_probe" 4 4096 256 | tee "$out/probe-p4.txt"
}

cuda_tests() {
  limit build-gpu/tests/test_cuda --gtest_output="json:$out/test_cuda.json"
}

# The CPU engine's tests on this machine's cores, the fake asynchronous backend's among them.
engine_tests() {
  limit build-gpu/tests/test_engine --gtest_brief=1 --gtest_output="json:$out/test_engine.json"
}

# The engine on the GPU (issue 49): a Llama layer placed by critical-path on P = 1 (the whole
# GPU), 2 and 4 SM partitions, `execute --backend cuda --verify` (every node against the CPU
# engine), beside the CPU engine on the same placement (this machine's cores); then the
# engine's own cost per op with empty kernels on the whole GPU; on 4 partitions tf32 / bf16
# Tensor Core GEMMs, bf16 tensors (--gpu-dtype bf16), and copies staged through the host or
# paced to NVLink and PCIe. Each run's JSON is kept.
cuda_engine() {
  local d="limit build-gpu/doppler" g=$out/llama-layer.json rc=0
  $d -q generate llama-layer -p dim=1024 -p heads=16 -p ffn=2048 -p seq=512 -p vocab=2000 \
    --devices 4 -o "$g" || return 1
  for p in 1 2 4; do
    $d -q place "$g" --devices "$p" --method critical-path -o "$out/assignment-$p.json" || return 1
    $d execute "$g" -a "$out/assignment-$p.json" --backend cuda --verify --repeat 5 --json \
      >"$out/execute-cuda-$p.json" || rc=1
    $d execute "$g" -a "$out/assignment-$p.json" --repeat 3 --json >"$out/execute-cpu-$p.json" || rc=1
  done
  for m in tf32 bf16; do  # Tensor Core GEMMs on 4 partitions
    $d execute "$g" -a "$out/assignment-4.json" --backend cuda --gpu-math "$m" --verify \
      --repeat 5 --json >"$out/execute-cuda-4-$m.json" || rc=1
  done
  $d execute "$g" -a "$out/assignment-4.json" --backend cuda --gpu-dtype bf16 --verify \
    --repeat 5 --json >"$out/execute-cuda-4-bf16-tensors.json" || rc=1
  for l in host nvlink pcie; do  # what a copy between partitions costs
    $d execute "$g" -a "$out/assignment-4.json" --backend cuda --gpu-link "$l" --verify \
      --repeat 5 --json >"$out/execute-cuda-4-$l.json" || rc=1
  done
  $d execute "$g" -a "$out/assignment-1.json" --backend cuda --kernels empty --repeat 5 --json \
    >"$out/execute-cuda-empty.json" || rc=1
  return $rc
}

# Issue 49's GEMM targets (bench/cuda/gemm_throughput.cpp): chains of 4096^3 GEMMs through the
# engine on one of 4 partitions against cuBLAS alone on it (>= 80%), and on all 4 at once against
# cuBLAS alone on the whole GPU (>= 90%), with f32 and bf16 (Tensor Core) math on f32 tensors,
# and on bf16 tensors.
gemm_targets() {
  local rc=0 m
  for m in f32 bf16; do
    limit build-gpu/bench_cuda_gemm --partitions 4 --gpu-math "$m" --json >"$out/gemm-$m.json" ||
      rc=1
  done
  limit build-gpu/bench_cuda_gemm --partitions 4 --gpu-dtype bf16 --json \
    >"$out/gemm-bf16-tensors.json" || rc=1
  return $rc
}

# Imported ONNX models (scripts/gpu-bundle.sh's .gpu/models, weights inside) on 2 partitions with
# --verify: every node against the CPU engine on this machine.
onnx_models() {
  local d="limit build-gpu/doppler" rc=0 f m
  ls .gpu/models/*.json.gz >/dev/null || { echo "no .gpu/models: run scripts/gpu-bundle.sh"; return 1; }
  for f in .gpu/models/*.json.gz; do
    m=$(basename "$f" .json.gz)
    gunzip -c "$f" >"$out/$m.json" || return 1
    $d -q place "$out/$m.json" --devices 2 --method critical-path -o "$out/assignment-$m.json" || return 1
    $d execute "$out/$m.json" -a "$out/assignment-$m.json" --backend cuda --verify --repeat 3 \
      --json >"$out/execute-cuda-$m.json" || rc=1
  done
  return $rc
}

# summarize: summary.json and summary.md from the steps so far and the files they left; also
# printed (step() calls it after every step, quietly).
summarize() {
  python3 - "$out" "$steps" "${DOPPLER_COMMIT:-unknown}" "$(nproc)" <<'PY'
import json, os, sys, datetime
out, steps_file, commit, cores = sys.argv[1:5]
steps = []
for line in open(steps_file):
    name, secs, rc = line.rstrip("\n").split("\t")
    steps.append({"step": name, "seconds": float(secs), "exit": int(rc)})
gpus = []
if os.path.exists(f"{out}/gpus.json"):
    try:
        gpus = json.load(open(f"{out}/gpus.json"))["gpus"]
    except (ValueError, KeyError):
        pass
tests = []
if os.path.exists(f"{out}/test_cuda.json"):
    for suite in json.load(open(f"{out}/test_cuda.json")).get("testsuites", []):
        for t in suite.get("testsuite", []):
            status = "failed" if t.get("failures") else ("skipped" if t.get("result") == "SKIPPED" else "passed")
            tests.append({"test": f"{suite['name']}.{t['name']}", "status": status,
                          "seconds": float(str(t.get("time", "0")).rstrip("s") or 0)})
engine = []  # the cuda_engine step's runs
for name in ["cuda-1", "cpu-1", "cuda-2", "cpu-2", "cuda-4", "cpu-4", "cuda-4-tf32",
             "cuda-4-bf16", "cuda-4-bf16-tensors", "cuda-4-host", "cuda-4-nvlink", "cuda-4-pcie",
             "cuda-empty",
             "cuda-mobilenet_v3_small", "cuda-gpt"]:
    path = f"{out}/execute-{name}.json"
    try:
        j = json.load(open(path))
    except (OSError, ValueError):
        continue
    engine.append({"run": name, "devices": j.get("devices"), "engine": j.get("engine"),
                   "kernels": j.get("kernels"), "makespan_median_s": j.get("makespan_median"),
                   "gflops_per_s": j.get("gflops_per_s"), "ops": j.get("ops"),
                   "seconds_per_op": j["makespan_median"] / j["ops"] if j.get("ops") else None,
                   "verify": j.get("verify")})
probe = None  # the green-context probe's report (text)
if os.path.exists(f"{out}/probe-p4.txt"):
    probe = open(f"{out}/probe-p4.txt").read()
gemm = []  # the gemm_targets step's measurements
for m in ["f32", "bf16", "bf16-tensors"]:
    try:
        gemm.append(json.load(open(f"{out}/gemm-{m}.json")))
    except (OSError, ValueError):
        pass
summary = {
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "commit": commit, "host_cores": int(cores),
    "gpu": gpus[0]["name"] if gpus else None, "gpus": gpus,
    "steps": steps, "total_seconds": round(sum(s["seconds"] for s in steps), 1),
    "cuda_tests": tests,
    "engine": engine,
    "gemm": gemm,
    "probe_p4": probe,
    "ok": all(s["exit"] == 0 for s in steps) and not any(t["status"] == "failed" for t in tests),
}
json.dump(summary, open(f"{out}/summary.json", "w"), indent=2)
md = [f"# gpu-check {summary['date']}", "",
      f"GPU: {summary['gpu'] or 'none'}; commit {commit}; {cores} cores; "
      f"total {summary['total_seconds']} s; {'ok' if summary['ok'] else 'FAILED'}", "",
      "| step | seconds | exit |", "|---|---:|---:|"]
md += [f"| {s['step']} | {s['seconds']:.1f} | {s['exit']} |" for s in steps]
md += ["", "| CUDA test | result | seconds |", "|---|---|---:|"]
md += [f"| {t['test']} | {t['status']} | {t['seconds']:.2f} |" for t in tests]
md += ["", "| engine run | devices | median makespan (s) | GFLOP/s | verify (max rel. error) |",
       "|---|---:|---:|---:|---|"]
for e in engine:
    v = e["verify"]
    md.append(f"| {e['run']} | {e['devices']} | {e['makespan_median_s']} | "
              f"{e['gflops_per_s']:.1f} | {v['max_relative_error'] if v else '-'} |")
md += ["", "| GEMM target (4 partitions) | math | tensors | cuBLAS TFLOP/s | engine TFLOP/s | ratio | target |",
       "|---|---|---|---:|---:|---:|---|"]
for g in gemm:
    for key, what in [("one_partition", "one partition vs cuBLAS on it"),
                      ("all_partitions", "all partitions vs cuBLAS on the whole GPU")]:
        t = g[key]
        md.append(f"| {what} | {g['math']} | {g.get('dtype', 'f32')} | {t['cublas_tflops']:.1f} | "
                  f"{t['engine_tflops']:.1f} | "
                  f"{t['ratio']:.3f} | {t['target']} {'met' if t['met'] else 'NOT met'} |")
if probe:
    md += ["", "Green-context probe, P = 4:", "", "```", probe.rstrip(), "```"]
open(f"{out}/summary.md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
}

gpu_library_path "$S" "$S"
export PATH=$PATH:$S/usr/bin
step unpack unpack && step configure configure && step build build && {
  step gpus info
  step probe probe
  step cuda_tests cuda_tests
  step engine_tests engine_tests
  step cuda_engine cuda_engine
  step gemm_targets gemm_targets
  step onnx_models onnx_models
}

summarize
echo "gpu-check: $(( $(date +%s) - t_start )) s in all; summary in $out" >&2
exit "$failed"
