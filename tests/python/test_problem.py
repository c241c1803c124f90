"""doppler.Problem and doppler.place against the CLI on the same inputs."""
import json

import numpy as np
import pytest

from conftest import cli, cli_error, cli_json


def cli_place(graph, devices, method, tmp_path, *extra):
    out = tmp_path / f"{method.replace(':', '_').replace(',', '_')}.json"
    j = cli_json("place", graph, "-d", devices, "--method", method, "-o", out, *extra)
    return j, np.array(json.loads(out.read_text())["device_of"])


@pytest.mark.parametrize("method", ["critical-path", "heft", "round-robin", "multilevel"])
def test_place_equals_the_cli(doppler, dag_json, tmp_path, method):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    want, assignment = cli_place(dag_json, 4, method, tmp_path, "--seed", 2, "--budget", 3000)
    got = doppler.place(problem, method, seed=2, budget=3000)
    assert got.makespan == want["makespan"]
    assert np.array_equal(got.assignment, assignment)
    assert got.evaluations == want["evaluations"]
    assert got.method == method
    assert problem.simulate(got.assignment) == got.makespan


def test_local_search_under_a_budget_equals_the_cli(doppler, dag_json, tmp_path):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    want, assignment = cli_place(dag_json, 4, "local-search", tmp_path, "--seed", 7, "--budget", 1500)
    got = doppler.place(problem, "local-search", budget=1500, seed=7)
    assert got.makespan == want["makespan"] and np.array_equal(got.assignment, assignment)
    assert got.evaluations <= 1500
    assert got.makespan <= doppler.place(problem, "round-robin").makespan


def test_hardware_profiles_and_units(doppler, tmp_path):
    g = doppler.generate("llama-layer", devices=4)
    path = tmp_path / "llama.json"
    g.save(str(path))
    code, message = cli_error("place", path, "-d", 4, "--hardware", "no-such-profile")
    assert code == 2
    with pytest.raises(ValueError) as e:
        doppler.Problem(g, 4, hardware="no-such-profile")
    assert str(e.value) == message
    problem = doppler.Problem(g, 4, hardware="v100")
    assert problem.unit == "seconds"
    want, assignment = cli_place(path, 4, "heft", tmp_path, "--hardware", "v100")
    got = doppler.place(problem, "heft")
    assert got.makespan == pytest.approx(want["makespan"], rel=1e-12)
    assert np.array_equal(got.assignment, assignment)
    assert problem.lower_bound == pytest.approx(want["lower_bound"], rel=1e-12)


def test_simulate_many_equals_simulate_and_the_cli(doppler, dag_json, tmp_path):
    g = doppler.load_graph(str(dag_json))
    problem = doppler.Problem(g, 4)
    rng = np.random.default_rng(0)
    batch = rng.integers(0, 4, size=(40, g.num_ops), dtype=np.int32)
    many = problem.simulate_many(batch)
    assert many.tolist() == [problem.simulate(a) for a in batch]
    assert problem.simulate_many(batch, threads=1).tolist() == many.tolist()
    a = tmp_path / "a.json"
    a.write_text(json.dumps({"format": "doppler-assignment", "version": 1, "devices": 4,
                             "device_of": batch[0].tolist()}))
    assert cli_json("simulate", dag_json, "-a", a)["makespan"] == many[0]


def test_schedule_is_a_valid_dataflow_schedule(doppler, fork_dot):
    g = doppler.load_graph(str(fork_dot))
    problem = doppler.Problem(g, 2)
    a = np.array([0, 1, 0, 0, 1, 0])
    s = problem.schedule(a)
    assert s["makespan"] == problem.simulate(a) == s["finish"].max()
    assert np.allclose(s["finish"] - s["start"], g.compute_cost)
    cost = dict(zip(map(tuple, g.edges.tolist()), g.transfer_cost))
    for (u, v), c in cost.items():
        arrive = s["finish"][u] + (c if a[u] != a[v] else 0)
        assert s["start"][v] >= arrive - 1e-12


def test_bad_assignments_and_methods_are_value_errors(doppler, dag_json):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    with pytest.raises(ValueError):
        problem.simulate(np.zeros(3, dtype=np.int32))
    with pytest.raises(ValueError):
        problem.simulate(np.full(problem.graph.num_ops, 9))
    code, message = cli_error("place", dag_json, "-d", 4, "--method", "no-such-method")
    assert code == 2
    with pytest.raises(ValueError) as e:
        doppler.place(problem, "no-such-method")
    assert str(e.value) in message
    with pytest.raises(ValueError, match="budget"):
        doppler.place(problem, "local-search", budget=-1)
    names = [m["name"] for m in doppler.methods()]
    assert {"heft", "local-search", "doppler", "multilevel"} <= set(names)


def test_place_defaults_to_auto_with_threads_and_a_curve(doppler, dag_json, tmp_path):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    want, assignment = cli_place(dag_json, 4, "auto", tmp_path, "--budget", 2000, "--threads", 2)
    got = doppler.place(problem, budget=2000, threads=2)
    assert got.method == "auto" and "; best " in got.note
    assert np.array_equal(got.assignment, assignment) and got.makespan == want["makespan"]
    curve = got.curve
    assert curve and all(b[2] < a[2] for a, b in zip(curve, curve[1:]))
    assert curve[-1][2] >= got.makespan
    with pytest.raises(ValueError):
        doppler.place(problem, threads=-1)


def test_place_with_lanes_matches_the_cli(doppler, dag_json, tmp_path):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    args = ("--budget", 2000, "--threads", 2, "--lanes", 2)
    want, assignment = cli_place(dag_json, 4, "local-search", tmp_path, *args)
    got = doppler.place(problem, "local-search", budget=2000, threads=2, lanes=2)
    assert want["lanes"] == 2
    assert np.array_equal(got.assignment, assignment) and got.makespan == want["makespan"]
    with pytest.raises(ValueError, match="lanes"):
        doppler.place(problem, lanes=-1)
