#!/usr/bin/env python3
"""REINFORCE on doppler.env.PlacementEnv: a small PyTorch policy learns to place a graph.

The environment runs in ``plc`` mode: ops come in critical-path order and each action picks a
device. The policy scores every device from its 5 device features (scaled by the reference
makespan) and the op's 5 static node features with a small MLP; a softmax over devices gives the
action distribution. Training: batches of sampled episodes, reward = -makespan / reference
(critical-path = -1), baseline = the batch mean. At the end the greedy policy is compared with
random placement (uniform devices) and the critical-path placer.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/reinforce.py --seconds 40

Needs Debian's python3-torch.
"""
import argparse
import json
import sys
import time

import numpy as np
import torch

import doppler
from doppler.env import PlacementEnv


class DeviceScorer(torch.nn.Module):
    """Scores each device for the op being placed: MLP([device features, node features])."""

    def __init__(self, hidden=32):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(10, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))

    def forward(self, device_features, node_features):
        p = device_features.shape[0]
        x = torch.cat([device_features, node_features.expand(p, -1)], dim=1)
        return self.net(x).squeeze(1)


def step_input(obs, scale):
    dev = torch.from_numpy(obs["device_features"] / scale)
    node = torch.tensor(obs["node_features"][obs["op"]]).unsqueeze(0)
    return dev, node


def episode(env, model, scale, rng, greedy=False):
    """One episode; returns (reward, sum of log-probabilities, info)."""
    obs, _ = env.reset()
    logp, done = [], False
    while not done:
        logits = model(*step_input(obs, scale))
        dist = torch.distributions.Categorical(logits=logits)
        if greedy:
            a = int(torch.argmax(logits))
        else:
            a = int(torch.multinomial(dist.probs, 1, generator=rng))
            logp.append(dist.log_prob(torch.tensor(a)))
        obs, reward, done, _, info = env.step(a)
    return reward, (torch.stack(logp).sum() if logp else None), info


def random_makespans(problem, episodes, seed):
    rng = np.random.default_rng(seed)
    batch = rng.integers(0, problem.devices, size=(episodes, problem.graph.num_ops), dtype=np.int32)
    return problem.simulate_many(batch)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", help="graph file (default: a generated 60-op random DAG)")
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=40, help="training time limit (seconds)")
    ap.add_argument("--episodes", type=int, default=3000, help="training episodes at most")
    ap.add_argument("--batch", type=int, default=16, help="episodes per update")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    g = (doppler.load_graph(args.graph) if args.graph else
         doppler.generate("random-dag", devices=args.devices, ops=60, seed=args.seed + 1))
    problem = doppler.Problem(g, args.devices)
    env = PlacementEnv(problem, mode="plc")
    scale = env.reference_makespan
    model = DeviceScorer()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    rng = torch.Generator().manual_seed(args.seed)
    t0, done_episodes, curve = time.monotonic(), 0, []
    while done_episodes < args.episodes and time.monotonic() - t0 < args.seconds:
        rewards, logps = [], []
        for _ in range(args.batch):
            r, lp, _ = episode(env, model, scale, rng)
            rewards.append(r)
            logps.append(lp)
        rew = torch.tensor(rewards)
        adv = (rew - rew.mean()) / (rew.std() + 1e-8)
        loss = -(adv * torch.stack(logps)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        done_episodes += args.batch
        curve.append(float(rew.mean()))
        if sys.stderr.isatty():
            print(f"\repisodes {done_episodes}: mean reward {curve[-1]:.3f}", end="", file=sys.stderr)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    with torch.no_grad():
        _, _, info = episode(env, model, scale, rng, greedy=True)
    random = random_makespans(problem, 1000, args.seed)
    result = {
        "graph": g.name, "ops": g.num_ops, "devices": args.devices,
        "episodes": done_episodes, "train_seconds": time.monotonic() - t0,
        "agent_makespan": info["makespan"],
        "random_makespan_mean": float(random.mean()), "random_makespan_best": float(random.min()),
        "critical_path_makespan": env.reference_makespan,
        "agent_vs_random": info["makespan"] / float(random.mean()),
        "first_batch_reward": curve[0] if curve else None,
        "last_batch_reward": curve[-1] if curve else None,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{g.name}: {g.num_ops} ops on {args.devices} devices, {done_episodes} episodes in "
          f"{result['train_seconds']:.1f} s")
    print(f"  agent (greedy)   {info['makespan']:.4g}")
    print(f"  random (mean)    {random.mean():.4g}   best of 1000: {random.min():.4g}")
    print(f"  critical-path    {env.reference_makespan:.4g}")


if __name__ == "__main__":
    main()
