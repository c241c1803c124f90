#!/usr/bin/env python3
"""Benchmarks of the Python binding (issue targets; docs/python.md):

1. ``Problem.simulate_many`` throughput against the C++ batch API (``doppler simulate
   --assignments ... --bench``, Simulator::makespans) on the same Llama layer, the same random
   assignments and the same thread count: target at least 90%.
2. ``doppler.env.PlacementEnv`` overhead: full ``plc`` episodes of the Llama layer with random
   actions (``action_space.sample()``), per episode and per step: target under 90 us per step.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_binding.py [--cli build/doppler]

Prints one JSON object. Timings are wall-clock on this machine; run it on an idle machine.
"""
import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import doppler
from doppler.env import PlacementEnv


def python_rate(problem, batch, threads, seconds):
    sims, t0 = 0, time.perf_counter()
    while True:
        problem.simulate_many(batch, threads=threads)
        sims += len(batch)
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return sims / elapsed


def cli_rate(cli, graph, batch, hardware, threads, seconds, tmp):
    lines = tmp / "a.jsonl"
    lines.write_text("".join(json.dumps(a.tolist()) + "\n" for a in batch))
    out = subprocess.run([cli, "--quiet", "simulate", str(graph), "--assignments", str(lines),
                          "--hardware", hardware, "-d", str(batch.max() + 1), "--bench",
                          str(seconds), "--threads", str(threads), "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["bench"]["simulations_per_second"]


def env_timing(problem, episodes):
    env = PlacementEnv(problem, mode="plc")
    env.reset(seed=0)
    times, steps = [], 0
    for _ in range(episodes):
        t0 = time.perf_counter()
        env.reset()
        done = False
        while not done:
            _, _, done, _, _ = env.step(env.action_space.sample())
            steps += 1
        times.append(time.perf_counter() - t0)
    per_episode = float(np.median(times))
    return per_episode, per_episode / problem.graph.num_ops


def main():
    ap = argparse.ArgumentParser(description="Python binding benchmarks")
    ap.add_argument("--cli", default="build/doppler")
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--hardware", default="v100")
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--episodes", type=int, default=200)
    args = ap.parse_args()
    g = doppler.generate("llama-layer", devices=args.devices)
    problem = doppler.Problem(g, args.devices, hardware=args.hardware)
    rng = np.random.default_rng(0)
    batch = rng.integers(0, args.devices, size=(args.batch, g.num_ops), dtype=np.int32)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        graph = tmp / "llama.json"
        g.save(str(graph))
        cpp = cli_rate(args.cli, graph, batch, args.hardware, args.threads, args.seconds, tmp)
    py = python_rate(problem, batch, args.threads, args.seconds)
    episode, step = env_timing(problem, args.episodes)
    print(json.dumps({
        "graph": f"llama-layer ({g.num_ops} ops, {args.devices} devices, {args.hardware})",
        "threads": args.threads,
        "simulate_many_per_second": round(py), "cpp_batch_per_second": round(cpp),
        "simulate_many_vs_cpp": round(py / cpp, 3),
        "env_episode_ms": round(1e3 * episode, 3), "env_step_us": round(1e6 * step, 2),
    }, indent=2))


if __name__ == "__main__":
    main()
