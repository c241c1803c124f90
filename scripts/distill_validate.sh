#!/usr/bin/env bash
# The validation set of docs/pretraining.md "Distillation": used to choose between candidate
# models (e.g. the rounds of expert iteration, scripts/pretrain.sh step 3); the held-out reference
# graphs are never used for that. Twelve problems near the training distribution
# (models/pretrain-spec.json) but not in its pool: random DAGs with seeds the pool does not draw,
# and workloads with parameters between the spec's grid values (the grid's own combinations are all
# in the 1,200-problem pool). Prints, per model, the greedy placement's and the best of 64 samples'
# makespans relative to ETF on each problem and their means.
# Usage: scripts/distill_validate.sh [--pick] [BUILD] MODEL [MODEL ...]   (paths without commas)
#   --pick: the table goes to stderr and stdout gets one line, the model with the lowest mean of
#   the greedy and best-of-64 means (the first on ties).
set -euo pipefail
cd "$(dirname "$0")/.."
pick=0
if [ "${1:-}" = --pick ]; then pick=1; shift; fi
build=build
if [ -d "${1:-}" ]; then build=$1; shift; fi
[ $# -gt 0 ] || { echo "usage: scripts/distill_validate.sh [--pick] [BUILD] MODEL [MODEL ...]" >&2; exit 2; }
dir=runs/distill-validation-12
mkdir -p "$dir"
python3 - "$build/doppler" "$dir" "$pick" "$@" <<'PY'
import json, os, subprocess, sys
doppler, d, pick, models = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
# (name, devices, hardware options, generator and its parameters): one row per problem.
problems = [
    ("a", 8, [], "random-dag -p ops=300 -p width=16 -p ccr=2 -p seed=1000123"),
    ("b", 4, [], "random-dag -p ops=800 -p width=40 -p ccr=0.5 -p seed=1000077"),
    ("c", 12, [], "random-dag -p ops=1500 -p width=48 -p density=0.1 -p ccr=5 -p seed=1004242"),
    ("d", 16, [], "random-dag -p ops=120 -p width=8 -p ccr=0.2 -p seed=1000099"),
    ("e", 6, ["--hardware", "a100"], "random-dag -p ops=500 -p width=24 -p ccr=1 -p seed=1002024"),
    ("f", 3, [], "random-dag -p ops=200 -p width=6 -p density=0.3 -p ccr=8 -p seed=1000555"),
    ("g", 5, ["--hardware", "v100"], "llama-layer -p seq=2048 -p dim=3072"),
    ("h", 8, ["--hardware", "h100"], "llama-layer -p seq=3072 -p dim=2048"),
    ("i", 3, ["--hardware", "h100"], "llama-block -p seq=2048 -p dim=3072 --training"),
    ("j", 6, ["--hardware", "a100"], "ffnn -p batch=16384 -p hidden=24576 --training"),
    ("k", 6, [], "chainmm -p n=6144"),
    ("l", 3, ["--hardware", "v100"], "chainmm -p n=12288")]
for g, p, _, gen in problems:
    path = f"{d}/{g}.json"
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        subprocess.run([doppler, "generate", *gen.split(), "--devices", str(p), "-o", path],
                       stdout=subprocess.DEVNULL, check=True)
def makespan(g, p, hw, method):
    out = subprocess.run([doppler, "place", f"{d}/{g}.json", "--devices", str(p), *hw,
                          "--method", method, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["makespan"]
table = sys.stderr if pick else sys.stdout
etf = {g: makespan(g, p, hw, "etf") for g, p, hw, _ in problems}
print("| model | " + " | ".join(f"{g} greedy / K=64" for g, *_ in problems) + " | mean |",
      file=table)
print("|---" * (len(problems) + 2) + "|", file=table)
scores = []
for m in models:
    g1 = [makespan(g, p, hw, f"doppler:policy={m},samples=1") / etf[g] for g, p, hw, _ in problems]
    g64 = [makespan(g, p, hw, f"doppler:policy={m},samples=64") / etf[g] for g, p, hw, _ in problems]
    cells = " | ".join(f"{a:.3f} / {b:.3f}" for a, b in zip(g1, g64))
    mean1, mean64 = sum(g1) / len(g1), sum(g64) / len(g64)
    print(f"| {m} | {cells} | {mean1:.3f} / {mean64:.3f} |", file=table, flush=True)
    scores.append((mean1 + mean64) / 2)
if pick:
    print(models[scores.index(min(scores))])
PY
