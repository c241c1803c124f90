"""doppler.env.PlacementEnv: episodes against the simulator, masks, invalid actions."""
import numpy as np
import pytest


@pytest.fixture()
def problem(doppler, dag_json):
    return doppler.Problem(doppler.load_graph(str(dag_json)), 4)


def run_random_episode(env, seed):
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        valid = np.flatnonzero(obs["action_mask"])
        assert valid.size > 0
        if obs["phase"] == 0:  # select: exactly the ops whose predecessors are all placed
            placed = obs["placed"] >= 0
            ready = np.array([not placed[v] for v in range(len(placed))])
            for u, v in obs["edge_index"].T:
                if not placed[u]:
                    ready[v] = False
            assert np.array_equal(obs["candidates"].astype(bool), ready)
            assert np.array_equal(valid, np.flatnonzero(ready))
        else:
            assert obs["placed"][obs["op"]] == -1
        obs, reward, done, truncated, info = env.step(rng.choice(valid))
        assert not truncated
        total += reward
        steps += 1
        if not done:
            assert reward == 0
    return total, steps, info


@pytest.mark.parametrize("mode", ["plc", "sel_plc"])
def test_episode_makespan_is_the_simulators(doppler, problem, mode):
    from doppler.env import PlacementEnv

    env = PlacementEnv(problem, mode=mode)
    n = problem.graph.num_ops
    reward, steps, info = run_random_episode(env, seed=4)
    assert steps == (n if mode == "plc" else 2 * n)
    assert info["makespan"] == problem.simulate(info["assignment"])
    assert info["reference_makespan"] == doppler.place(problem, "critical-path").makespan
    assert reward == pytest.approx(-info["makespan"] / info["reference_makespan"], rel=1e-12)
    assert sorted(info["order"].tolist()) == list(range(n))
    assert env.observation_space["node_features"].shape == (n, 5)
    assert env.action_space.n == (4 if mode == "plc" else max(n, 4))


def test_plc_mode_follows_the_critical_path_order(doppler, fork_dot):
    from doppler.env import PlacementEnv

    problem = doppler.Problem(doppler.load_graph(str(fork_dot)), 2)
    env = PlacementEnv(problem, mode="plc")
    obs, _ = env.reset()
    ops, done = [], False
    while not done:
        ops.append(int(obs["op"]))
        assert obs["device_features"].shape == (2, 5)
        obs, reward, done, _, info = env.step(0)
    # b-levels (a, b, c, d, e, f = 0..5): a 19, b 11, d 12, c 6, e 4, f 2.
    assert ops == [0, 3, 1, 2, 4, 5]
    assert info["makespan"] == 18  # one device: the total work
    assert reward == pytest.approx(-18 / env.reference_makespan)


def test_invalid_actions_raise(doppler, problem):
    from doppler.env import PlacementEnv

    env = PlacementEnv(problem, mode="sel_plc")
    obs, _ = env.reset()
    blocked = int(np.flatnonzero(obs["candidates"] == 0)[0])
    with pytest.raises(ValueError, match="not a candidate"):
        env.step(blocked)
    env.step(int(np.flatnonzero(obs["candidates"])[0]))
    with pytest.raises(ValueError, match="device 7"):
        env.step(7)
    with pytest.raises(ValueError, match="mode"):
        PlacementEnv(problem, mode="nope")


def test_spaces_sample_valid_actions(doppler, problem):
    from doppler.env import PlacementEnv

    env = PlacementEnv(problem, mode="sel_plc")
    obs, _ = env.reset(seed=1)
    done = False
    while not done:
        a = env.action_space.sample(mask=obs["action_mask"])
        assert obs["action_mask"][a] == 1
        obs, _, done, _, _ = env.step(a)
    assert env.observation_space["placed"].contains(obs["placed"])
