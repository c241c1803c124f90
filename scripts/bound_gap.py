#!/usr/bin/env python3
"""How far the lower bound with transfers lies below proven optima (docs/scale.md): small
random DAGs of the 20,000-op DAG's generator (ccr 1), each solved by `optimal` (branch and
bound); prints one Markdown row per graph with a proven optimum and the mean gap.

    scripts/bound_gap.py [BUILD=build] [OUT=bound-gap]
    env: OPTIMAL_SECONDS=30 SEEDS="1 2 3 4 5"
"""
import json
import os
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
out = sys.argv[2] if len(sys.argv) > 2 else "bound-gap"
doppler = os.path.join(build, "doppler")
seconds = os.environ.get("OPTIMAL_SECONDS", "30")
seeds = os.environ.get("SEEDS", "1 2 3 4 5").split()
# (ops, width, density, devices)
shapes = [(18, 6, 0.8, 6), (22, 6, 0.8, 6), (24, 8, 0.6, 8), (30, 8, 0.6, 8)]
os.makedirs(out, exist_ok=True)


def run(*args):
    return subprocess.run([doppler, *args], check=True, capture_output=True, text=True).stdout


print("| graph | devices | longest path (ops) | bound with transfers (/1e10) | optimum (/1e10) | gap |")
print("|---|---:|---:|---:|---:|---:|")
gaps = []
for ops, width, density, p in shapes:
    for seed in seeds:
        name = f"dag-n{ops}-w{width}-s{seed}"
        graph = os.path.join(out, name + ".json")
        if not os.path.exists(graph):
            run("-q", "generate", "random-dag", "-p", f"ops={ops}", "-p", f"width={width}", "-p",
                f"density={density}", "-p", "ccr=1", "-p", f"seed={seed}", "--devices", str(p),
                "-o", graph)
        r = json.loads(run("place", graph, "--devices", str(p), "--method",
                           f"optimal:seconds={seconds}", "--json", "--threads", "1"))
        if not r.get("status", "").startswith("proven"):
            print(f"{name}: optimum not proven ({r.get('status')}), skipped", file=sys.stderr)
            continue
        info = json.loads(run("info", graph, "--devices", str(p), "--json"))
        bound, opt = r["lower_bound_with_transfers"], r["makespan"]
        gaps.append(max(0.0, opt / bound - 1))  # equal up to rounding: 0
        path = info.get("critical_path_ops", "-")
        print(f"| {name} | {p} | {path} | {bound / 1e10:.4g} | {opt / 1e10:.4g} | "
              f"{100 * gaps[-1]:.1f}% |")
if gaps:
    print(f"\n{len(gaps)} proven optima; mean gap {100 * sum(gaps) / len(gaps):.1f}%, "
          f"largest {100 * max(gaps):.1f}%")
