"""doppler.Policy (the shipped pretrained model) against the CLI's doppler method."""
import os

import numpy as np
import pytest

from conftest import cli_json


@pytest.fixture(scope="module")
def policy(doppler):
    if not os.path.exists(doppler.default_policy_path()):
        pytest.skip(f"no shipped model at {doppler.default_policy_path()}")
    return doppler.Policy.load()


def test_sample_equals_the_cli_doppler_method(doppler, policy, dag_json):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    s = policy.sample(problem, samples=4, seed=3)
    want = cli_json("place", dag_json, "-d", 4, "--method", "doppler:samples=4", "--seed", 3)
    assert isinstance(s, doppler.Placement)  # one result type with doppler.place
    assert s.makespan == want["makespan"]
    assert s.calls == 4 and s.method == "doppler"
    assert problem.simulate(s.assignment) == s.makespan
    got = doppler.place(problem, "doppler:samples=4", seed=3)
    assert got.makespan == s.makespan and np.array_equal(got.assignment, s.assignment)
    assert got.probabilities is None


def test_probabilities_are_distributions_that_chose_the_device(doppler, policy, dag_json):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    s = policy.sample(problem, samples=1, seed=0)  # the greedy rollout only
    p = s.probabilities
    decided = ~np.isnan(p).any(axis=1)
    assert decided.sum() > 0
    assert np.allclose(p[decided].sum(axis=1), 1, atol=1e-5)
    # Greedy: every decided op went to its most probable device.
    assert np.array_equal(p[decided].argmax(axis=1), s.assignment[decided])
    assert np.array_equal(policy.place(problem), s.assignment)


def test_bad_checkpoint_is_value_error(doppler, tmp_path):
    bad = tmp_path / "ckpt.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="ckpt.pt"):
        doppler.Policy.load(str(bad))


def test_sample_callback_stops_with_the_best_so_far(doppler, policy, dag_json):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    seen = []

    def stop_after_first(progress):
        seen.append((progress.calls, progress.makespan))
        return False

    s = policy.sample(problem, samples=64, seed=5, threads=1, callback=stop_after_first)
    # Rollouts run in waves of 2 x threads after the greedy one: the first report (after the
    # greedy rollout) stops sampling before the 63 sampled rollouts.
    assert seen and seen[0][0] == 1
    assert s.calls < 64
    assert s.makespan == min(m for _, m in seen) == problem.simulate(s.assignment)
    full = policy.sample(problem, samples=64, seed=5, threads=1)
    assert full.calls == 64 and full.makespan <= s.makespan
    # Waves do not change what is sampled: the same as without a callback that never stops.
    kept = policy.sample(problem, samples=64, seed=5, threads=1, callback=lambda p: None)
    assert kept.makespan == full.makespan and np.array_equal(kept.assignment, full.assignment)


def test_policy_and_paths(doppler, policy, tmp_path):
    from pathlib import Path

    again = doppler.Policy.load(Path(doppler.default_policy_path()))
    assert repr(again) == repr(policy) and repr(policy).startswith("<doppler.Policy ")
