#!/usr/bin/env bash
# Where the simulator misses the CPU engine (issue 26): the demo workload (Llama layer, seq 256,
# dim 256, f32, 2 devices), calibrated twice (microbenchmarks; + the graph's own kernels), then
# HEFT's placement and everything-on-device-0 are simulated and executed (21 runs, traces of the
# median run) and compared op by op with scripts/trace_compare.py. Run it on an idle machine.
#
#   scripts/engine_gap.sh [BUILD=build] [OUT=engine-gap]
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-engine-gap}
D=$BUILD/doppler
mkdir -p "$OUT"
$D generate llama-layer -p seq=256 -p dim=256 -p heads=4 -p ffn=512 -p vocab=1024 --dtype f32 \
  --devices 2 -o "$OUT/g.json" >/dev/null
$D calibrate --devices 2 -o "$OUT/hw.json" >/dev/null
$D calibrate --devices 2 --graph "$OUT/g.json" -o "$OUT/hw_graph.json" >/dev/null
$D place "$OUT/g.json" --devices 2 --hardware "$OUT/hw.json" --method heft -o "$OUT/heft.json" >/dev/null
/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
a = json.load(open(f"{sys.argv[1]}/heft.json"))
json.dump({"format": "doppler-assignment", "version": 1, "devices": 2,
           "device_of": [0] * len(a["device_of"])}, open(f"{sys.argv[1]}/one.json", "w"))
PY
for a in heft one; do
  for hw in hw hw_graph; do
    $D simulate "$OUT/g.json" -a "$OUT/$a.json" --hardware "$OUT/$hw.json" --json \
      --trace "$OUT/sim_${a}_$hw.json" >"$OUT/simsum_${a}_$hw.json"
  done
  $D execute "$OUT/g.json" -a "$OUT/$a.json" --repeat 21 --json --trace "$OUT/exec_$a.json" \
    >"$OUT/execsum_$a.json"
done
/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for a in ("heft", "one"):
    ex = json.load(open(f"{out}/execsum_{a}.json"))
    ci = ex["makespan_median_interval"]
    line = (f"{a}: measured median {ex['makespan_median'] * 1e3:.3f} ms "
            f"[{ci['low'] * 1e3:.3f}, {ci['high'] * 1e3:.3f}]")
    for hw in ("hw", "hw_graph"):
        s = json.load(open(f"{out}/simsum_{a}_{hw}.json"))
        line += f"; simulated ({hw}) {s['makespan'] * 1e3:.3f} ms"
    print(line)
PY
echo "--- HEFT, op by op (simulated with the graph-fitted profile)"
/usr/bin/python3 scripts/trace_compare.py "$OUT/g.json" "$OUT/exec_heft.json" "$OUT/sim_heft_hw_graph.json"
