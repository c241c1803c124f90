"""Doppler: device placement of dataflow graphs, from Python.

A thin binding over the C++ library (no placement logic lives in Python)::

    import doppler
    g = doppler.generate("llama-layer", devices=4)
    problem = doppler.Problem(g, devices=4, hardware="v100")
    p = doppler.place(problem, "local-search", budget=2000, seed=1)
    print(p.makespan, problem.simulate(p.assignment))

Bad input raises ValueError with a one-line message naming the problem (the CLI reports the same
problem; remedies name Python arguments here). Simulation and placement release the GIL; Ctrl-C
interrupts long calls (KeyboardInterrupt). Makespans are in ``problem.unit``: seconds with a hardware profile, the
reference model's abstract units without one.
"""
from ._doppler import (  # noqa: F401  (re-exported API)
    __version__,
    Graph,
    Placement,
    Progress,
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
from .networkx_io import from_networkx, to_networkx  # noqa: F401  (re-exported API)
from .torch_import import from_torch  # noqa: F401  (re-exported API)

from . import env  # noqa: F401,E402  (doppler.env.PlacementEnv after `import doppler`)

__all__ = [
    "__version__", "Graph", "Placement", "Progress", "Policy", "Problem", "default_policy_path", "from_networkx", "from_torch", "generate",
    "graph_from_arrays", "import_onnx", "load_graph", "methods", "place", "to_networkx", "workloads",
]

