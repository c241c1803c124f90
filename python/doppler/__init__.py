"""Doppler: device placement of dataflow graphs, from Python.

A thin binding over the C++ library (no placement logic lives in Python)::

    import doppler
    g = doppler.generate("llama-layer", devices=4)
    problem = doppler.Problem(g, devices=4, hardware="v100")
    p = doppler.place(problem, "local-search", budget=2000, seed=1)
    print(p.makespan, problem.simulate(p.assignment))

Bad input raises ValueError with the same one-line message as the CLI. Simulation and placement
release the GIL. Makespans are in ``problem.unit``: seconds with a hardware profile, the
reference model's abstract units without one.
"""
from ._doppler import (  # noqa: F401  (re-exported API)
    Graph,
    Placement,
    Policy,
    Problem,
    default_policy_path,
    generate,
    graph_from_arrays,
    import_onnx,
    load_graph,
    methods,
    place,
    workloads,
)

__all__ = [
    "Graph", "Placement", "Policy", "Problem", "default_policy_path", "from_networkx", "generate",
    "graph_from_arrays", "import_onnx", "load_graph", "methods", "place", "workloads",
]


def from_networkx(G, compute="weight", transfer="weight", name=None):
    """A reference-model Graph from a networkx DiGraph.

    Ops are numbered in ``G``'s node order (``list(G.nodes)``); node attribute ``compute`` is an
    op's compute cost and edge attribute ``transfer`` the cost of moving an edge's data to
    another device (paid only when its ends are on different devices), both in the reference
    model's abstract units. A missing attribute raises ValueError naming the node or edge.
    """
    import numpy as np

    if not G.is_directed():
        raise ValueError("from_networkx: the graph must be directed (a networkx DiGraph)")
    index = {v: i for i, v in enumerate(G.nodes)}
    comp = np.empty(len(index))
    for v, i in index.items():
        if compute not in G.nodes[v]:
            raise ValueError(f"from_networkx: node {v!r} has no '{compute}' attribute")
        comp[i] = G.nodes[v][compute]
    edges = np.empty((G.number_of_edges(), 2), dtype=np.int64)
    cost = np.empty(G.number_of_edges())
    for k, (u, v, data) in enumerate(G.edges(data=True)):
        if transfer not in data:
            raise ValueError(f"from_networkx: edge ({u!r}, {v!r}) has no '{transfer}' attribute")
        edges[k] = (index[u], index[v])
        cost[k] = data[transfer]
    return graph_from_arrays(comp, edges, cost, name if name is not None else (G.name or "networkx"))
