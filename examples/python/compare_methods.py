#!/usr/bin/env python3
"""Compare placement methods on one graph over seeds and plot their makespans (matplotlib).

Every method gets the same simulator-call budget; deterministic methods run once. Prints one row
per method (mean, std, best, seconds) and writes a bar chart with the std as error bars and the
lower bound as a line.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/compare_methods.py \
        --workload random-dag --devices 8 --budget 5000 --seeds 3 --plot makespans.png
"""
import argparse
import json
import statistics

import doppler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--graph", help="graph file (.txt, .json, .dot, .stg)")
    src.add_argument("--workload", default="random-dag", help="workload to generate")
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--hardware", help="hardware profile (default: the reference model)")
    ap.add_argument("--methods", default="round-robin,critical-path,heft,local-search,multilevel")
    ap.add_argument("--budget", type=int, default=5000, help="simulator calls per search method")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--plot", help="write the chart to this file (PNG, SVG, PDF)")
    ap.add_argument("--json", action="store_true", help="print one JSON object per method")
    args = ap.parse_args()

    g = doppler.load_graph(args.graph) if args.graph else doppler.generate(
        args.workload, devices=args.devices)
    problem = doppler.Problem(g, args.devices, hardware=args.hardware)
    deterministic = {m["name"]: m["deterministic"] for m in doppler.methods()}
    rows = []
    for method in args.methods.split(","):
        seeds = 1 if deterministic.get(method.split(":")[0], False) else args.seeds
        runs = [doppler.place(problem, method, budget=args.budget, seed=s) for s in range(seeds)]
        ms = [r.makespan for r in runs]
        rows.append({"method": method, "seeds": seeds, "mean": statistics.fmean(ms),
                     "std": statistics.stdev(ms) if seeds > 1 else 0.0, "best": min(ms),
                     "seconds": statistics.fmean(r.seconds for r in runs),
                     "evaluations": max(r.evaluations for r in runs)})
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        print(f"{g.name}: {g.num_ops} ops, {args.devices} devices, unit {problem.unit}, "
              f"lower bound {problem.lower_bound:.4g}")
        print(f"{'method':<16}{'mean':>12}{'std':>10}{'best':>12}{'seconds':>9}")
        for r in rows:
            print(f"{r['method']:<16}{r['mean']:>12.4g}{r['std']:>10.3g}{r['best']:>12.4g}"
                  f"{r['seconds']:>9.2f}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(1.2 * len(rows) + 2, 4))
        ax.bar([r["method"] for r in rows], [r["mean"] for r in rows],
               yerr=[r["std"] for r in rows], capsize=4, color="#4c72b0")
        ax.axhline(problem.lower_bound, color="k", linestyle="--", label="lower bound")
        ax.set_ylabel(f"makespan ({problem.unit})")
        ax.set_title(f"{g.name}: {g.num_ops} ops on {args.devices} devices, budget {args.budget}")
        ax.legend()
        fig.autofmt_xdate()
        fig.tight_layout()
        fig.savefig(args.plot)


if __name__ == "__main__":
    main()
