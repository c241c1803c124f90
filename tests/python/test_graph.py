"""doppler.Graph and its constructors against the CLI and hand-computed values."""
import json

import numpy as np
import pytest

from conftest import cli, cli_error, cli_json


def test_dot_file_loads_with_its_weights(doppler, fork_dot):
    g = doppler.load_graph(str(fork_dot))
    assert (g.num_ops, g.num_edges) == (6, 7)
    # DOT nodes are numbered in file order: a b c d e f = 0..5.
    assert g.edges.tolist() == [[0, 1], [0, 2], [0, 3], [1, 4], [2, 4], [3, 5], [4, 5]]
    assert g.compute_cost.tolist() == [3, 4, 2, 6, 1, 2]
    assert g.transfer_cost.tolist() == [5, 1, 2, 3, 2, 4, 1]
    assert g.kinds == ["other"] * 6
    info = cli_json("info", fork_dot)
    assert g.num_ops == info["nodes"] and g.num_edges == info["edges"]
    assert g.compute_cost.sum() == info["total_work"] == 18


def test_topological_order_and_lower_bound(doppler, fork_dot):
    g = doppler.load_graph(str(fork_dot))
    pos = {int(v): i for i, v in enumerate(g.topological_order())}
    assert sorted(pos) == list(range(6))
    assert all(pos[u] < pos[v] for u, v in g.edges.tolist())
    # Compute-only critical path a-d-f = 3 + 6 + 2 = 11; the work over 2 devices is 9.
    assert g.lower_bound(2) == 11
    assert g.lower_bound(2) == cli_json("place", fork_dot, "-d", 2)["lower_bound"]


def test_bad_file_is_value_error_with_the_cli_message(doppler, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not a graph\n")
    code, message = cli_error("info", bad)
    assert code == 2
    with pytest.raises(ValueError) as e:
        doppler.load_graph(str(bad))
    assert str(e.value) == message
    assert str(bad) in message and ":1" in message
    with pytest.raises(ValueError, match="missing.json"):
        doppler.load_graph(str(tmp_path / "missing.json"))


def test_generate_equals_the_cli(doppler, tmp_path):
    out = tmp_path / "g.json"
    cli("generate", "random-dag", "-p", "ops=200", "-p", "seed=5", "--devices", "8", "-o", out)
    want = doppler.load_graph(str(out))
    got = doppler.generate("random-dag", devices=8, ops=200, seed=5)
    assert got.num_ops == want.num_ops == 200
    assert np.array_equal(got.edges, want.edges)
    assert np.array_equal(got.compute_cost, want.compute_cost)
    assert np.array_equal(got.transfer_cost, want.transfer_cost)
    llama = doppler.generate("llama-layer", devices=4)
    assert llama.num_ops == cli_json("generate", "llama-layer", "--devices", 4)["nodes"]
    assert llama.flops.sum() > 0
    assert "random-dag" in doppler.workloads()


def test_generate_errors_match_the_cli(doppler):
    code, message = cli_error("generate", "random-dag", "-p", "nope=3", "--json")
    assert code == 2
    with pytest.raises(ValueError) as e:
        doppler.generate("random-dag", nope=3)
    assert str(e.value) == message
    with pytest.raises(ValueError, match="no-such-workload"):
        doppler.generate("no-such-workload")


def test_graph_from_arrays_and_save_round_trip(doppler, tmp_path):
    g = doppler.graph_from_arrays([1.0, 2.0, 3.0], [[0, 1], [1, 2]], [4.0, 5.0], name="chain")
    assert (g.num_ops, g.num_edges, g.name) == (3, 2, "chain")
    path = tmp_path / "chain.json"
    g.save(str(path))
    back = doppler.load_graph(str(path))
    assert np.array_equal(back.edges, g.edges)
    assert back.transfer_cost.tolist() == [4.0, 5.0]
    assert json.loads(path.read_text())  # a JSON document
    with pytest.raises(ValueError, match="cycle"):
        doppler.graph_from_arrays([1, 1], [[0, 1], [1, 0]], [1, 1])
    with pytest.raises(ValueError, match="one cost per edge"):
        doppler.graph_from_arrays([1, 1], [[0, 1]], [1, 2])


def test_from_networkx_numbers_ops_in_node_order(doppler):
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    G.add_node("load", weight=2.0)
    G.add_node("mm", weight=5.0)
    G.add_node("out", weight=1.0)
    G.add_edge("load", "mm", weight=3.0)
    G.add_edge("mm", "out", weight=4.0)
    g = doppler.from_networkx(G)
    assert g.compute_cost.tolist() == [2, 5, 1]
    p = doppler.Problem(g, 2)
    # All on one device: 2 + 5 + 1; mm alone on device 1: 2 + 3 + 5 + 4 + 1.
    assert p.simulate(np.array([0, 0, 0])) == 8
    assert p.simulate(np.array([0, 1, 0])) == 15
    G.add_edge("out", "load")
    with pytest.raises(ValueError, match="no 'weight' attribute"):
        doppler.from_networkx(G)
    with pytest.raises(ValueError, match="directed"):
        doppler.from_networkx(nx.Graph())
