"""doppler.from_networkx and doppler.to_networkx on small hand-made graphs, expected by hand."""
import json

import numpy as np
import pytest

nx = pytest.importorskip("networkx")


def diamond():
    """load -> (left, right) -> join, string labels, given out of alphabetical order."""
    G = nx.DiGraph(name="diamond")
    G.add_node("load", weight=2.0)
    G.add_node("right", weight=4.0)
    G.add_node("left", weight=3.0)
    G.add_node("join", weight=1.0)
    G.add_edge("load", "left", weight=5.0)
    G.add_edge("load", "right", weight=6.0)
    G.add_edge("left", "join", weight=7.0)
    G.add_edge("right", "join", weight=8.0)
    return G


def test_labels_become_op_names_in_node_order(doppler):
    g = doppler.from_networkx(diamond())
    assert g.names == ["load", "right", "left", "join"]
    assert g.name == "diamond"
    assert g.compute_cost.tolist() == [2, 4, 3, 1]
    # Edges sorted by (src, dst) over the ids 0 load, 1 right, 2 left, 3 join.
    assert g.edges.tolist() == [[0, 1], [0, 2], [1, 3], [2, 3]]
    assert g.transfer_cost.tolist() == [6, 5, 8, 7]
    p = doppler.Problem(g, 2)
    # One device: 2 + 4 + 3 + 1 = 10.
    assert p.simulate(np.array([0, 0, 0, 0])) == 10
    # right alone on device 1: load 0..2; right starts after the transfer (2 + 6 = 8), ends 12;
    # left 2..5 on device 0; join waits for right's data (12 + 8 = 20) and ends at 21.
    assert p.simulate(np.array([0, 1, 0, 0])) == 21


def test_non_string_labels_are_named_by_str(doppler):
    G = nx.DiGraph()
    G.add_node(3, weight=1)
    G.add_node(("mm", 0), weight=2)
    G.add_edge(3, ("mm", 0), weight=1)
    g = doppler.from_networkx(G, name="mixed")
    assert g.names == ["3", "('mm', 0)"]
    assert g.name == "mixed"


def test_other_attribute_names(doppler):
    G = nx.DiGraph()
    G.add_node("a", c=1.5, weight=100)
    G.add_node("b", c=2.5, weight=100)
    G.add_edge("a", "b", t=0.5, weight=100)
    g = doppler.from_networkx(G, compute="c", transfer="t")
    assert g.compute_cost.tolist() == [1.5, 2.5]
    assert g.transfer_cost.tolist() == [0.5]
    assert g.name == "networkx"  # G has no name


def test_multidigraph_parallel_edges_sum_their_transfers(doppler):
    G = nx.MultiDiGraph()
    G.add_node("x", weight=1)
    G.add_node("y", weight=2)
    G.add_node("z", weight=3)
    G.add_edge("x", "y", weight=2)  # two tensors from x to y
    G.add_edge("x", "y", weight=3)
    G.add_edge("y", "z", weight=4)
    g = doppler.from_networkx(G)
    assert g.num_edges == 2
    assert g.edges.tolist() == [[0, 1], [1, 2]]
    assert g.transfer_cost.tolist() == [5, 4]  # 2 + 3
    p = doppler.Problem(g, 2)
    # y alone on device 1: x 0..1, both tensors arrive at 1 + 5 = 6, y 6..8, z at 8 + 4 = 12..15.
    assert p.simulate(np.array([0, 1, 0])) == 15


def test_empty_and_undirected_graphs_are_refused(doppler):
    with pytest.raises(ValueError, match="no nodes"):
        doppler.from_networkx(nx.DiGraph())
    with pytest.raises(ValueError, match="directed"):
        doppler.from_networkx(nx.Graph([(1, 2)]))


def test_a_cycle_names_the_users_nodes(doppler):
    G = diamond()
    G.add_edge("join", "load", weight=1.0)
    with pytest.raises(ValueError) as e:
        doppler.from_networkx(G)
    message = str(e.value)
    assert message.startswith("from_networkx: ")
    assert "cycle" in message
    assert "load" in message and "join" in message


def test_a_negative_cost_names_the_node_or_edge(doppler):
    G = diamond()
    G.nodes["left"]["weight"] = -3.0
    with pytest.raises(ValueError, match=r"^from_networkx: .*negative.*'left'"):
        doppler.from_networkx(G)
    G = diamond()
    G.edges["left", "join"]["weight"] = -1.0
    with pytest.raises(ValueError, match=r"^from_networkx: .*'left' -> 'join'"):
        doppler.from_networkx(G)


def test_missing_and_non_numeric_attributes_name_the_node_or_edge(doppler):
    G = diamond()
    del G.nodes["right"]["weight"]
    with pytest.raises(ValueError, match=r"node 'right' has no 'weight' attribute"):
        doppler.from_networkx(G)
    G = diamond()
    G.nodes["right"]["weight"] = "fast"
    with pytest.raises(ValueError, match=r"node 'right' has a non-numeric 'weight' attribute"):
        doppler.from_networkx(G)
    G = diamond()
    del G.edges["load", "left"]["weight"]
    with pytest.raises(ValueError, match=r"edge \('load', 'left'\) has no 'weight' attribute"):
        doppler.from_networkx(G)


def test_to_networkx_keys_attributes_and_round_trip(doppler):
    g = doppler.from_networkx(diamond())
    H = doppler.to_networkx(g)
    assert isinstance(H, nx.DiGraph)
    assert H.graph["name"] == "diamond"
    assert list(H.nodes) == ["load", "right", "left", "join"]
    assert H.nodes["left"]["compute"] == 3.0
    assert H.nodes["left"]["id"] == 2
    assert H.nodes["left"]["kind"] == g.kinds[2]
    assert H.nodes["left"]["flops"] == g.flops[2]
    assert H.nodes["left"]["out_bytes"] == g.out_bytes[2]
    assert {(u, v): d["transfer"] for u, v, d in H.edges(data=True)} == {
        ("load", "left"): 5.0, ("load", "right"): 6.0, ("left", "join"): 7.0,
        ("right", "join"): 8.0}
    back = doppler.from_networkx(H, compute="compute", transfer="transfer")
    assert back.names == g.names
    assert back.name == g.name
    assert back.compute_cost.tolist() == g.compute_cost.tolist()
    assert back.edges.tolist() == g.edges.tolist()
    assert back.transfer_cost.tolist() == g.transfer_cost.tolist()


def test_to_networkx_uses_ids_when_names_repeat(doppler):
    g = doppler.graph_from_arrays([1, 2, 3], [[0, 1], [0, 2]], [4, 5], names=["mm", "mm", "add"])
    H = doppler.to_networkx(g)
    assert list(H.nodes) == [0, 1, 2]
    assert [H.nodes[v]["compute"] for v in H] == [1, 2, 3]
    assert {(u, v): d["transfer"] for u, v, d in H.edges(data=True)} == {(0, 1): 4, (0, 2): 5}


def test_to_networkx_leaves_out_absent_reference_costs(doppler, tmp_path):
    # A graph priced by FLOPs and bytes: op a and the edge have no reference cost, b has one.
    path = tmp_path / "nocost.json"
    path.write_text(json.dumps({
        "format": "doppler-graph", "version": 1, "name": "nocost",
        "nodes": [{"id": 0, "name": "a", "kind": "einsum", "flops": 1e9, "out_bytes": 4e6},
                  {"id": 1, "name": "b", "kind": "elementwise", "flops": 1e6, "out_bytes": 8e6,
                   "compute_cost": 2.0}],
        "edges": [[0, 1]]}))
    H = doppler.to_networkx(doppler.load_graph(str(path)))
    assert dict(H.nodes(data=True)) == {
        "a": {"id": 0, "kind": "einsum", "flops": 1e9, "out_bytes": 4e6},
        "b": {"id": 1, "kind": "elementwise", "flops": 1e6, "out_bytes": 8e6, "compute": 2.0}}
    assert list(H.edges(data=True)) == [("a", "b", {})]
    assert H.graph["name"] == "nocost"
