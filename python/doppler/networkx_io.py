"""networkx graphs to and from doppler.Graph: from_networkx and to_networkx.

networkx is imported only by to_networkx (from_networkx only calls the graph's own methods), so
`import doppler` works without it.
"""
import math

from ._doppler import graph_from_arrays


def _cost(value, what, attr):
    """A finite-or-not float from an attribute value; ValueError naming `what` otherwise."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"from_networkx: {what} has a non-numeric '{attr}' attribute "
                         f"({value!r})") from None


def from_networkx(G, compute="weight", transfer="weight", name=None):
    """A reference-model Graph from a networkx DiGraph or MultiDiGraph.

    Ops are numbered in ``G``'s node order (``list(G.nodes)``) and named ``str(label)``
    (``Graph.names``; errors name them too). Node attribute ``compute`` is an op's compute cost
    and edge attribute ``transfer`` the cost of moving an edge's data to another device (paid only
    when its ends are on different devices), both in the reference model's abstract units.

    A MultiDiGraph's parallel edges u -> v become one edge whose transfer cost is the SUM of
    theirs: each carries its own tensor, and moving both costs both.

    Raises ValueError for an undirected or empty graph, a missing or non-numeric attribute (naming
    the node or edge), and what the library refuses (a cycle, a negative or non-finite cost),
    naming the nodes by their labels.
    """
    import numpy as np

    if not G.is_directed():
        raise ValueError("from_networkx: the graph must be directed (a networkx DiGraph or "
                         "MultiDiGraph)")
    if G.number_of_nodes() == 0:
        raise ValueError("from_networkx: the graph has no nodes")
    nodes = list(G.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    comp = np.empty(len(nodes))
    for i, v in enumerate(nodes):
        data = G.nodes[v]
        if compute not in data:
            raise ValueError(f"from_networkx: node {v!r} has no '{compute}' attribute")
        comp[i] = _cost(data[compute], f"node {v!r}", compute)
    cost = {}  # (src, dst) -> summed transfer cost, in G's edge order
    for u, v, data in G.edges(data=True):  # a MultiDiGraph yields each parallel edge
        if transfer not in data:
            raise ValueError(f"from_networkx: edge ({u!r}, {v!r}) has no '{transfer}' attribute")
        key = (index[u], index[v])
        cost[key] = cost.get(key, 0.0) + _cost(data[transfer], f"edge ({u!r}, {v!r})", transfer)
    edges = np.array(list(cost), dtype=np.int64).reshape(-1, 2)
    transfer_cost = np.fromiter(cost.values(), dtype=float, count=len(cost))
    try:
        return graph_from_arrays(comp, edges, transfer_cost,
                                 name if name is not None else (G.name or "networkx"),
                                 names=[str(v) for v in nodes])
    except ValueError as e:
        message = str(e)
        prefix = "graph_from_arrays: "
        if message.startswith(prefix):
            raise ValueError("from_networkx: " + message[len(prefix):]) from None
        raise


def to_networkx(graph):
    """A networkx DiGraph of a doppler.Graph.

    Node keys are the op names (``graph.names``) when they are all distinct, else the op ids
    0..N-1. Node attributes: ``id`` (the op id), ``kind``, ``flops``, ``out_bytes`` and
    ``compute`` (the reference compute cost; absent where the graph has none). Edge attribute:
    ``transfer`` (the reference transfer cost; absent where none). The graph's name is
    ``G.graph["name"]``. ``from_networkx(to_networkx(g), compute="compute",
    transfer="transfer")`` gives back g's ops, names, costs and edges.
    """
    import networkx as nx

    names = list(graph.names)
    keys = names if len(set(names)) == len(names) else list(range(graph.num_ops))
    G = nx.DiGraph(name=graph.name)
    compute, flops, out_bytes, kinds = graph.compute_cost, graph.flops, graph.out_bytes, graph.kinds
    for i, key in enumerate(keys):
        attrs = {"id": i, "kind": kinds[i], "flops": float(flops[i]),
                 "out_bytes": float(out_bytes[i])}
        if not math.isnan(compute[i]):
            attrs["compute"] = float(compute[i])
        G.add_node(key, **attrs)
    for (src, dst), t in zip(graph.edges.tolist(), graph.transfer_cost.tolist()):
        G.add_edge(keys[src], keys[dst], **({} if math.isnan(t) else {"transfer": t}))
    return G
