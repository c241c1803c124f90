#!/usr/bin/python3
"""Paired seed-by-seed ratios of `doppler compare` results against their first method.

Usage: scripts/paired_ratios.py RESULT.json [RESULT.json ...]

Each RESULT.json is a `doppler compare --json-file` output whose methods ran on the same seeds.
For every method after the first, prints one Markdown row per file: the ratio of the mean
makespans, and the mean over seeds of the per-seed ratio with its standard error (the spread of
the paired difference, which the seeds' own spread does not blur).
"""
import json
import math
import os
import sys


def paired(xs, base):
    """Mean and standard error of the per-seed ratios xs[i] / base[i]."""
    r = [x / b for x, b in zip(xs, base)]
    mean = sum(r) / len(r)
    if len(r) < 2:
        return mean, float("nan")
    var = sum((x - mean) ** 2 for x in r) / (len(r) - 1)
    return mean, math.sqrt(var / len(r))


def rows(path):
    """The Markdown rows of one compare result (one per method after the first)."""
    with open(path) as f:
        d = json.load(f)
    methods = d["methods"]
    base = methods[0]
    for m in methods[1:]:
        if m["seeds"] != base["seeds"]:
            raise ValueError(f"{path}: {m['method']} ran other seeds than {base['method']}")
        mean, se = paired(m["makespans"], base["makespans"])
        ratio = sum(m["makespans"]) / sum(base["makespans"])
        yield (f"| {os.path.basename(path)} | {d['devices']} | {d['budget_evaluations']} | {len(m['seeds'])} "
               f"| `{m['method']}` | {ratio:.3f} | {mean:.3f} +- {se:.3f} |")


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("| file | devices | calls | seeds | method | mean / first's mean | per-seed ratio |")
    print("|---|---:|---:|---:|---|---:|---:|")
    try:
        for path in argv[1:]:
            for row in rows(path):
                print(row)
    except (OSError, KeyError, ValueError, json.JSONDecodeError) as e:
        print(f"paired_ratios.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
