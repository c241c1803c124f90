#!/usr/bin/env python3
"""Anytime check (issue 51): every search's mean makespan over seeds must not rise as its budget
grows. Runs `doppler compare` per (graph, budget) with every method of METHODS on one thread and
prints, per graph and method, the mean at each budget and whether it ever rose (Markdown).

    scripts/anytime_results.py [BUILD=build] GRAPH[:DEVICES[:HARDWARE]]...
    env: METHODS="local-search,multilevel,multilevel:inner=dsc" CALLS="1000 4000 20000 200000"
         SECONDS_LIST="" (e.g. "1 10 60": also time budgets) SEEDS=5 FIRST_SEED=0
         RAW_DIR="" (a folder: keep each `compare --json` output there, per graph and budget)
"""
import json
import os
import subprocess
import sys

build = sys.argv[1]
doppler = os.path.join(build, "doppler")
env = os.environ.get
methods = env("METHODS", "local-search,multilevel,multilevel:inner=dsc")
budgets = [("--budget", c) for c in env("CALLS", "1000 4000 20000 200000").split()]
budgets += [("--time-budget", s) for s in env("SECONDS_LIST", "").split()]
seeds = env("SEEDS", "5")
first_seed = env("FIRST_SEED", "0")


def label(flag, value):
    return f"{int(value) // 1000}k calls" if flag == "--budget" else f"{value} s"


print("| graph | method | " + " | ".join(label(f, v) for f, v in budgets) + " | rises |")
print("|---|---|" + "---:|" * len(budgets) + "---|")
for spec in sys.argv[2:]:
    parts = spec.split(":")
    path = parts[0]
    devices = parts[1] if len(parts) > 1 else "4"
    hardware = parts[2] if len(parts) > 2 else ""
    name = os.path.basename(path).rsplit(".", 1)[0]
    means = {}
    for flag, value in budgets:
        cmd = [doppler, "compare", path, "--devices", devices, "--methods", methods, "--seeds",
               seeds, "--first-seed", first_seed, "--threads", "1", "--json", flag, value]
        if hardware:
            cmd += ["--hardware", hardware]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        if env("RAW_DIR"):
            os.makedirs(env("RAW_DIR"), exist_ok=True)
            with open(os.path.join(env("RAW_DIR"), f"{name}-{devices}-{flag[2:]}-{value}.json"), "w") as f:
                f.write(out)
        j = json.loads(out)
        # ms for hardware models; / 1e10 for the reference graphs' large units, raw for DOT
        # task graphs (single-digit weights)
        big = max(m["mean"] for m in j["methods"]) > 1e6
        scale = 1e3 if j["unit"] != "reference" else (1e-10 if big else 1)
        for m in j["methods"]:
            means.setdefault(m["method"], []).append(m["mean"] * scale)
    for m, xs in means.items():
        rises = [label(*budgets[i + 1]) for i in range(len(xs) - 1) if xs[i + 1] > xs[i] * (1 + 1e-9)]
        print(f"| {name} ({devices}) | {m} | " + " | ".join(f"{x:.4g}" for x in xs) +
              f" | {', '.join(rises) if rises else 'no'} |")
