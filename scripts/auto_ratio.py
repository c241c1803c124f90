#!/usr/bin/env python3
"""`auto` on N threads against the best one-thread method, from scripts/equal_seconds.sh's run
files (docs/results/parallel.md): per time budget, the mean ratio over graphs, the worst graph
and how many are at most 1.005; `--rows` lists every graph, with the standard deviations over
seeds of `auto` and of the best method (as a share of the best method's mean) when the runs had
several seeds.

    auto_ratio.py OUT... [--rows]
"""
import glob
import json
import os
import re
import sys


def ratios(outs):
    """seconds -> [(graph, auto / best one-thread method, that method)]"""
    by_t = {}
    for out in outs:
        for path in sorted(glob.glob(os.path.join(out, "*-auto*.json"))):
            m = re.match(r"(.+)-([0-9.]+)s-auto\d+\.json$", os.path.basename(path))
            one = m and os.path.join(out, f"{m.group(1)}-{m.group(2)}s.json")
            if not one or not os.path.exists(one):
                continue
            auto = json.load(open(path))["methods"][0]["mean"]
            single = [r for r in json.load(open(one))["methods"] if r["method"] != "auto"]
            best = min(single, key=lambda r: r["mean"])
            auto_sd = json.load(open(path))["methods"][0].get("std", 0) / best["mean"]
            by_t.setdefault(float(m.group(2)), []).append(
                (m.group(1), auto / best["mean"], re.sub(r"policy=[^,]*,?", "", best["method"]),
                 auto_sd, best.get("std", 0) / best["mean"]))
    return by_t


def main():
    outs = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not outs:
        sys.exit(__doc__)
    print("| budget | graphs | mean ratio | worst graph | graphs at most 1.005 |")
    print("|---|---:|---:|---|---:|")
    by_t = ratios(outs)
    for t, rows in sorted(by_t.items()):
        worst = max(rows, key=lambda r: r[1])
        mean = sum(r[1] for r in rows) / len(rows)
        ok = sum(r[1] <= 1.005 for r in rows)
        print(f"| {t:g} s | {len(rows)} | {mean:.3f} | {worst[1]:.3f} ({worst[0]}) | {ok} / {len(rows)} |")
    if "--rows" in sys.argv:
        for t, rows in sorted(by_t.items()):
            print(f"\n{t:g} s:")
            for g, r, m, auto_sd, best_sd in rows:
                spread = f", sd auto {100 * auto_sd:.1f}%, best {100 * best_sd:.1f}%" if best_sd else ""
                print(f"  {g:45s} {r:.3f}  (best one-thread: {m}{spread})")


if __name__ == "__main__":
    main()
