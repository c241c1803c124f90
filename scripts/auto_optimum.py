#!/usr/bin/env python3
"""`auto` against proven optima (issue 51): small layered random DAGs (ops, devices and
transfer/compute ratios varied), each solved by `optimal` (branch and bound; only proven optima
are kept), then placed by `auto` (THREADS threads) and by local-search and multilevel:inner=dsc
(one thread each) at SECONDS seconds; prints the gap to the optimum per graph and the mean and
worst per method (Markdown), and writes OUT/rows.jsonl.

    scripts/auto_optimum.py [BUILD=build] [OUT=auto-optimum]
    env: SECONDS_BUDGET=1 THREADS=2 OPTIMAL_SECONDS=30 OPS="10 14 18" DEVICES="2 4 8"
         RATIOS="0.1 1 10" SEEDS="1"
"""
import json
import os
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
out = sys.argv[2] if len(sys.argv) > 2 else "auto-optimum"
doppler = os.path.join(build, "doppler")
env = os.environ.get
seconds = env("SECONDS_BUDGET", "1")
threads = env("THREADS", "2")
methods = [("auto", threads), ("local-search", "1"), ("multilevel:inner=dsc", "1")]
os.makedirs(out, exist_ok=True)


def place(graph, devices, method, extra):
    cmd = [doppler, "place", graph, "--devices", str(devices), "--method", method, "--json"] + extra
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


rows = []
for ops in env("OPS", "10 14 18").split():
    for p in env("DEVICES", "2 4 8").split():
        for ratio in env("RATIOS", "0.1 1 10").split():
            for seed in env("SEEDS", "1").split():
                name = f"dag-n{ops}-p{p}-r{ratio}-s{seed}"
                graph = os.path.join(out, name + ".json")
                if not os.path.exists(graph):
                    subprocess.run([doppler, "-q", "generate", "random-dag", "-p", f"ops={ops}",
                                    "-p", "width=4", "-p", f"ccr={1 / float(ratio):g}", "-p",
                                    f"seed={seed}", "--devices", p, "-o", graph],
                                   check=True, capture_output=True)
                opt = place(graph, p, f"optimal:seconds={env('OPTIMAL_SECONDS', '30')}",
                            ["--threads", "1"])
                if not opt.get("status", "").startswith("proven"):
                    print(f"{name}: optimum not proven ({opt.get('status')}), skipped",
                          file=sys.stderr)
                    continue
                row = {"graph": name, "optimum": opt["makespan"]}
                for m, t in methods:
                    r = place(graph, p, m, ["--time-budget", seconds, "--threads", t])
                    row[m] = r["makespan"]
                    if m == "auto":
                        row["auto_status"] = r.get("status", "")
                rows.append(row)
                print(name, " ".join(f"{m}={row[m] / row['optimum'] - 1:+.4f}" for m, _ in methods),
                      file=sys.stderr)

with open(os.path.join(out, "rows.jsonl"), "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
print(f"{len(rows)} graphs with proven optima; {seconds} s per run; auto on {threads} threads, "
      "the others on one\n")
print("| method | mean gap to optimum | worst gap | optimal on |")
print("|---|---:|---:|---:|")
for m, _ in methods:
    gaps = [r[m] / r["optimum"] - 1 for r in rows]
    hits = sum(g <= 1e-9 for g in gaps)
    print(f"| {m} | {100 * sum(gaps) / len(gaps):.2f}% | {100 * max(gaps):.2f}% | "
          f"{hits} / {len(gaps)} |")
