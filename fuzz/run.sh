#!/usr/bin/env bash
# make fuzz: builds the fuzz targets (AddressSanitizer + UndefinedBehaviorSanitizer; libFuzzer
# with clang-14 in build-fuzz/, and the checkpoint reader with GCC and a standalone mutation
# driver in build-fuzz-gcc/, see fuzz/CMakeLists.txt) and runs each for FUZZ_SECONDS seconds on
# its seeds, then prints one summary line per target (executions, executions per second,
# coverage). Exits 1 when a target finds a crash, a sanitizer report, a violated invariant or a
# timeout; the input is then in build-fuzz/artifacts/ (reproduce: fuzz_TARGET FILE).
#   fuzz/run.sh [SECONDS] [TARGET...]   targets: reference_text graph_json assignment
#                                                hardware_profile dot stg onnx checkpoint
#                                                (default: all)
# Seeds: fuzz/corpus/TARGET/ (small hand-written inputs), the reference graphs read at run time
# from ../shared/reference-graphs (or $DOPPLER_REFERENCE_GRAPHS), the shipped hardware profiles,
# JSON graphs and assignments made from the reference graphs and checkpoints written by the
# real writer (build-fuzz/seeds/). What the fuzzer finds accumulates in build-fuzz/corpus/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-${FUZZ_SECONDS:-60}}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(reference_text graph_json assignment hardware_profile dot stg onnx checkpoint)
clang_build=${FUZZ_BUILD:-build-fuzz}        # libFuzzer (clang-14)
gcc_build=${FUZZ_GCC_BUILD:-build-fuzz-gcc}  # standalone driver (GCC): the checkpoint reader
ref=${DOPPLER_REFERENCE_GRAPHS:-../shared/reference-graphs}
command -v clang++-14 >/dev/null || { echo "fuzz: clang++-14 not found: GCC driver only" >&2; clang_build=$gcc_build; }

build_of() { if [ "$1" = checkpoint ]; then echo "$gcc_build"; else echo "$clang_build"; fi; }

# Configure and build the binaries each build directory needs.
for b in $(for t in "${targets[@]}"; do build_of "$t"; done | sort -u); do
  if [ ! -f "$b/build.ninja" ]; then
    if [ "$b" = "$gcc_build" ]; then cc=gcc; cxx=g++; else cc=clang-14; cxx=clang++-14; fi
    CC=$cc CXX=$cxx cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DDOPPLER_FUZZ=ON -DDOPPLER_BUILD_TESTS=OFF -DDOPPLER_BUILD_BENCH=OFF >/dev/null
  fi
  binaries=(fuzz_make_seeds)
  for t in "${targets[@]}"; do [ "$(build_of "$t")" = "$b" ] && binaries+=("fuzz_$t"); done
  [[ " ${binaries[*]} " == *" fuzz_checkpoint "* ]] && binaries+=(fuzz_make_checkpoints)
  cmake --build "$b" -j "${JOBS:-$(nproc)}" --target "${binaries[@]}"
done

seeds=$clang_build/seeds
mkdir -p "$seeds" "$clang_build/artifacts" "$clang_build/logs" "$clang_build/dict"
if [ -d "$ref" ]; then
  "$(build_of "${targets[0]}")/fuzz/fuzz_make_seeds" "$ref" "$seeds"
else
  echo "fuzz: $ref is absent: no reference-graph seeds" >&2
fi
if [[ " ${targets[*]} " == *" checkpoint "* ]]; then
  "$gcc_build/fuzz/fuzz_make_checkpoints" "$seeds/checkpoint"
fi

status=0
for t in "${targets[@]}"; do
  build=$(build_of "$t")
  out=$clang_build  # corpora, artifacts, logs and dictionaries of every target
  dirs=("$out/corpus/$t")
  for d in "fuzz/corpus/$t" "$seeds/$t"; do [ -d "$d" ] && dirs+=("$d"); done
  opts=(-print_final_stats=1 -timeout=60 -rss_limit_mb=2048 "-max_total_time=$seconds"
        "-artifact_prefix=$out/artifacts/$t-")
  case $t in
    reference_text) [ -d "$ref" ] && dirs+=("$ref"); opts+=(-max_len=16384) ;;
    graph_json) opts+=(-max_len=65536) ;;
    assignment) opts+=(-max_len=16384) ;;
    hardware_profile) dirs+=(hardware); opts+=(-max_len=16384) ;;
    dot | stg) opts+=(-max_len=16384) ;;
    onnx) opts+=(-max_len=65536) ;;
    checkpoint) opts+=(-max_len=131072) ;;
    *) echo "fuzz: unknown target '$t'" >&2; exit 2 ;;
  esac
  if [ "$t" = reference_text ] || [ "$t" = dot ] || [ "$t" = stg ]; then
    cp "fuzz/dict/$t.dict" "$out/dict/$t.dict"
  elif [ -f "fuzz/dict/$t.dict" ]; then
    cat fuzz/dict/json_common.dict "fuzz/dict/$t.dict" >"$out/dict/$t.dict"
  fi
  [ -f "$out/dict/$t.dict" ] && opts+=("-dict=$out/dict/$t.dict")
  mkdir -p "$out/corpus/$t"
  log="$out/logs/$t.log"
  echo "fuzz: $t for ${seconds}s (log: $log)"
  rc=0
  # libtorch 1.13 keeps a few one-time allocations to the end: LeakSanitizer ignores those.
  LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS} \
    "$build/fuzz/fuzz_$t" "${opts[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
  # (grep -a: logs may hold raw bytes of inputs; no match is not an error)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -ao 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || true)
  [ -z "$cov" ] && cov=$(sed -n 's/^stat::\(distinct_outcomes\): */\1 /p' "$log")
  if [ "$rc" -eq 0 ]; then
    echo "fuzz: $t: clean, ${execs:-?} executions, ${rate:-?}/s, ${cov:-no coverage line}"
  else
    status=1
    echo "fuzz: $t: FAILED (exit $rc), ${execs:-?} executions; input in $out/artifacts/$t-*" >&2
    grep -aE 'ERROR|SUMMARY|violated|Test unit written' "$log" | head -20 >&2 || true
  fi
done
exit $status
