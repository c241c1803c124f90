# Sourced by scripts/gpu-check.sh and scripts/gpu-sys.sh on the GPU machine: `gpu_unpack S [F]`
# unpacks the Debian packages of scripts/gpu-bundle.sh (.gpu/debs) into the prefix S (dpkg -x, or
# ar + tar where dpkg is absent; never into /). With F, fmt's and spdlog's packages go to the
# prefix F instead, so that S/usr/include (nlohmann-json and the rest, on the torch units'
# include path) holds no fmt to shadow the one a pip torch ships with its headers.
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
