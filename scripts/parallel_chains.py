#!/usr/bin/env python3
"""Parallel-chains task graphs in the Sinnen-group DOT format (issue 51's anytime check).

A source, K independent chains of L tasks each, and a sink: the family of the issue's example of
a search ending worse with more calls (a SAGA parallel-chains graph, transfer/compute ratio 5, on
8 processors). The structure follows that family; the weights are this script's own: task and
edge weights uniform in [0.1, 1], then every edge weight scaled so that the mean edge weight over
the mean task weight is RATIO. Deterministic for its seed.

    scripts/parallel_chains.py OUT_DIR [COUNT=10] [RATIO=5] [PROCESSORS=8] [SEED=1]

Writes OUT_DIR/chains_<i>.dot (i = 0..COUNT-1), K and L uniform in 2..5 per graph.
"""
import os
import random
import sys


def chains_graph(rng, ratio):
    """(tasks, edges): task weights by name, edges as (from, to, weight)."""
    k, length = rng.randint(2, 5), rng.randint(2, 5)
    tasks = {"src": rng.uniform(0.1, 1), "sink": rng.uniform(0.1, 1)}
    edges = []
    for c in range(k):
        prev = "src"
        for i in range(length):
            name = f"c{c}_{i}"
            tasks[name] = rng.uniform(0.1, 1)
            edges.append([prev, name, rng.uniform(0.1, 1)])
            prev = name
        edges.append([prev, "sink", rng.uniform(0.1, 1)])
    scale = ratio * (sum(tasks.values()) / len(tasks)) / (sum(e[2] for e in edges) / len(edges))
    for e in edges:
        e[2] *= scale
    return tasks, edges


def write_dot(path, name, tasks, edges, processors):
    lines = [f'digraph "{name}" {{', f"  Processors={processors};"]
    lines += [f'  "{t}" [Weight={w:.6g}];' for t, w in tasks.items()]
    lines += [f'  "{a}" -> "{b}" [Weight={w:.6g}];' for a, b, w in edges]
    lines.append("}")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__.strip())
    out = argv[1]
    count = int(argv[2]) if len(argv) > 2 else 10
    ratio = float(argv[3]) if len(argv) > 3 else 5.0
    processors = int(argv[4]) if len(argv) > 4 else 8
    rng = random.Random(int(argv[5]) if len(argv) > 5 else 1)
    os.makedirs(out, exist_ok=True)
    for i in range(count):
        tasks, edges = chains_graph(rng, ratio)
        write_dot(os.path.join(out, f"chains_{i}.dot"), f"chains_{i}", tasks, edges, processors)


if __name__ == "__main__":
    main(sys.argv)
