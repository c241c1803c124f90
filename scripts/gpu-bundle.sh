#!/usr/bin/env bash
# On a Debian 12 CPU machine: downloads (apt-get download, nothing installed) the Debian packages
# that the minimal + CUDA build needs on the GPU machine, which has no network and no apt:
# nlohmann-json, CLI11, fmt, spdlog, GoogleTest, Graphviz cgraph/cdt, OpenBLAS and its runtime,
# pkgconf, and zlib's headers for the torch build of scripts/gpu-sys.sh. They go to .gpu/debs
# (ignored by git; about 15 MiB); the device tool carries the folder (`carry: [".gpu"]`) and
# scripts/gpu-check.sh unpacks it there into a scratch prefix.
# Idempotent: a package already downloaded is not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES=(
  nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 libspdlog-dev libspdlog1.10 libgtest-dev
  libcgraph6 libcdt5 libgraphviz-dev
  libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0
  pkgconf-bin libpkgconf3 zlib1g-dev
)
mkdir -p .gpu/debs
cd .gpu/debs
missing=()
for p in "${PACKAGES[@]}"; do
  compgen -G "${p}_*.deb" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get download "${missing[@]}" >/dev/null 2>apt.err || {
    # The package lists may be missing on a fresh machine: refresh them once (as root).
    [ "$(id -u)" -eq 0 ] && apt-get update -qq && apt-get download "${missing[@]}" >/dev/null ||
      { cat apt.err >&2; echo "gpu-bundle: apt-get download failed" >&2; exit 1; }
  }
  rm -f apt.err
fi
count=$(ls ./*.deb | wc -l)
echo "gpu-bundle: $count packages, $(du -sh . | cut -f1) in .gpu/debs"

# The two ONNX rows of scripts/threads-check.sh (issue 51's many-thread figure), and two small
# models for gpu-check.sh, which the GPU machine's build cannot import: made here with the import of DOPPLER (default build/doppler)
# when it has one, without their weights, gzipped into .gpu/graphs. Skipped with a message
# otherwise.
cd ../..
D=${DOPPLER:-build/doppler}
if [ -x "$D" ] && "$D" import --help >/dev/null 2>&1; then
  # shellcheck source=scripts/large_graphs.sh
  source scripts/large_graphs.sh
  mkdir -p .gpu/graphs/src
  for g in gpt12 inception; do
    [ -f ".gpu/graphs/$g.json.gz" ] && continue
    # Placement needs the ops, costs and edges only: the weights ("constants") and the
    # executable descriptions (which load them) are dropped, from hundreds of MB to a few.
    large_graph "$g" .gpu/graphs/src "$D" >/dev/null &&
      /usr/bin/python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
g.pop("constants", None)
for n in g["nodes"]:
    n.pop("exec", None)
json.dump(g, sys.stdout, separators=(",", ":"))' ".gpu/graphs/src/$g.json" |
      gzip -9 >".gpu/graphs/$g.json.gz.tmp" &&
      mv ".gpu/graphs/$g.json.gz.tmp" ".gpu/graphs/$g.json.gz"
  done
  rm -rf .gpu/graphs/src
  echo "gpu-bundle: $(du -sh .gpu/graphs | cut -f1) in .gpu/graphs ($(ls .gpu/graphs | tr "\n" " "))"
  # Two small imported ONNX models with their weights (gpu-check.sh runs them on the GPU with
  # --verify): mobilenet_v3_small at 64 x 64 and the GPT block of tests/onnx/models.py.
  mkdir -p .gpu/models/src
  for m in mobilenet_v3_small gpt; do
    [ -f ".gpu/models/$m.json.gz" ] && continue
    /usr/bin/python3 tests/onnx/models.py export "$m" small ".gpu/models/src/$m" >/dev/null &&
      "$D" -q import ".gpu/models/src/$m/model.onnx" --devices 2 -o ".gpu/models/src/$m.json" &&
      gzip -9 -c ".gpu/models/src/$m.json" >".gpu/models/$m.json.gz.tmp" &&
      mv ".gpu/models/$m.json.gz.tmp" ".gpu/models/$m.json.gz"
  done
  rm -rf .gpu/models/src
  echo "gpu-bundle: $(du -sh .gpu/models | cut -f1) in .gpu/models ($(ls .gpu/models | tr "\n" " "))"
else
  echo "gpu-bundle: no $D with the ONNX import: .gpu/graphs and .gpu/models not made" \
    "(threads-check.sh skips gpt12 and inception, gpu-check.sh the ONNX models)"
fi

# The green-context probe of ../shared/gpu (partitions, %smid disjointness, cuBLAS per partition,
# copy bandwidths, events across partitions): gpu-check.sh builds and runs it beside the backend,
# evidence of its own when the backend fails. Skipped with a message when ../shared is absent.
probe=../shared/gpu/greenctx_probe.cu
if [ -f "$probe" ]; then
  mkdir -p .gpu/probe && cp "$probe" .gpu/probe/
  echo "gpu-bundle: .gpu/probe/greenctx_probe.cu"
else
  echo "gpu-bundle: no $probe: gpu-check.sh skips the probe"
fi
