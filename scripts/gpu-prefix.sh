# shellcheck shell=bash
# Sourced by scripts/gpu-check.sh and scripts/gpu-sys.sh on the GPU machine: `gpu_unpack S [F]`
# unpacks the Debian packages of scripts/gpu-bundle.sh (.gpu/debs) into the prefix S (dpkg -x, or
# ar + tar where dpkg is absent; never into /). With F, fmt's and spdlog's packages go to the
# prefix F instead, so that S/usr/include (nlohmann-json and the rest, on the torch units'
# include path) holds no fmt to shadow the one a pip torch ships with its headers.
# `gpu_configure BUILD S F [ARGS...]` (below) configures a build against them, and
# `gpu_library_path S F` puts their libraries on LD_LIBRARY_PATH.
gpu_unpack() {
  local s=$1 f=${2:-$1} deb dest
  ls .gpu/debs/*.deb >/dev/null || { echo "no .gpu/debs: run scripts/gpu-bundle.sh first"; return 1; }
  mkdir -p "$s" "$f"
  for deb in .gpu/debs/*.deb; do
    case $(basename "$deb") in libfmt*|libspdlog*) dest=$f ;; *) dest=$s ;; esac
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" "$dest"
    else
      ar p "$deb" data.tar.xz | tar -xJ -C "$dest"
    fi || return 1
  done
}

# gpu_configure BUILD S F [ARGS...]: configures BUILD against the prefixes S and F of gpu_unpack
# (Release, no ccache; ONNX and MPI off, Graphviz and CUDA on for Hopper, no benchmarks), then
# ARGS (the torch component and its dependencies).
gpu_configure() {
  local build=$1 s=$2 f=$3 l=$2/usr/lib/x86_64-linux-gnu pc
  shift 3
  pc=$(command -v pkg-config || echo "$s/usr/bin/pkgconf")
  PKG_CONFIG_LIBDIR=$l/pkgconfig:$s/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$s \
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDOPPLER_CCACHE=OFF \
    -DCMAKE_PREFIX_PATH="$s/usr;$f/usr" -DPKG_CONFIG_EXECUTABLE="$pc" \
    -DOPENBLAS_LIBRARY="$l/openblas-pthread/libopenblas.so" \
    -DOPENBLAS_INCLUDE_DIR="$s/usr/include/x86_64-linux-gnu/openblas-pthread" \
    -DDOPPLER_WITH_ONNX=off -DDOPPLER_WITH_MPI=off -DDOPPLER_WITH_GRAPHVIZ=on \
    -DDOPPLER_WITH_CUDA=on -DDOPPLER_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
}

# gpu_library_path S F: exports LD_LIBRARY_PATH with the libraries of the prefixes S and F, for
# the link (the linker resolves the prefix libraries' own dependencies, libgfortran under
# OpenBLAS, through it) and for the runs (the binaries' RUNPATH names only their direct ones).
gpu_library_path() {
  local l=$1/usr/lib/x86_64-linux-gnu
  export LD_LIBRARY_PATH=$l:$l/openblas-pthread:$2/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
