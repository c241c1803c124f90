#!/usr/bin/env bash
# The validation set of docs/pretraining.md "Distillation": six problems drawn by hand from the
# training distribution (models/pretrain-spec.json) but not in the pool, never held out and never
# trained on, used to choose between candidate models (the held-out reference graphs are not used
# for that). Prints, per model, the greedy placement's and the best of 64 samples' makespans
# relative to ETF on each problem and their means.
# Usage: scripts/distill_validate.sh [BUILD] MODEL [MODEL ...]   (MODEL paths without commas)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [ -d "${1:-}" ]; then build=$1; shift; fi
dir=runs/distill-validation
mkdir -p "$dir"
gen() { [ -s "$dir/$1.json" ] || "$build/doppler" generate "${@:2}" -o "$dir/$1.json" >/dev/null; }
gen a random-dag -p ops=300 -p width=16 -p ccr=2 -p seed=123 --devices 8
gen b llama-layer -p seq=1024 -p dim=2048 --devices 5
gen c ffnn --training --devices 6
gen d random-dag -p ops=800 -p width=40 -p ccr=0.5 -p seed=77 --devices 4
gen e llama-block -p seq=1024 -p dim=4096 --training --devices 3
gen f chainmm -p n=8192 --devices 6
python3 - "$build/doppler" "$dir" "$@" <<'PY'
import json, subprocess, sys
doppler, d, models = sys.argv[1], sys.argv[2], sys.argv[3:]
problems = [("a", 8, []), ("b", 5, ["--hardware", "v100"]), ("c", 6, ["--hardware", "a100"]),
            ("d", 4, []), ("e", 3, ["--hardware", "h100"]), ("f", 6, [])]
def makespan(g, p, hw, method):
    out = subprocess.run([doppler, "place", f"{d}/{g}.json", "--devices", str(p), *hw,
                          "--method", method, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["makespan"]
etf = {g: makespan(g, p, hw, "etf") for g, p, hw in problems}
print("| model | " + " | ".join(f"{g} greedy / K=64" for g, _, _ in problems) + " | mean |")
print("|---" * (len(problems) + 2) + "|")
for m in models:
    g1 = [makespan(g, p, hw, f"doppler:policy={m},samples=1") / etf[g] for g, p, hw in problems]
    g64 = [makespan(g, p, hw, f"doppler:policy={m},samples=64") / etf[g] for g, p, hw in problems]
    cells = " | ".join(f"{a:.3f} / {b:.3f}" for a, b in zip(g1, g64))
    print(f"| {m} | {cells} | {sum(g1) / len(g1):.3f} / {sum(g64) / len(g64):.3f} |")
PY
