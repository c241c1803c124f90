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
    Problem,
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

from . import _doppler, env  # noqa: F401,E402  (doppler.env.PlacementEnv after `import doppler`)

__all__ = [
    "__version__", "Graph", "Placement", "Progress", "Policy", "Problem", "default_policy_path", "from_networkx", "from_torch", "generate",
    "graph_from_arrays", "import_onnx", "load_graph", "methods", "place", "to_networkx", "workloads",
]

# The learned part of the module (libtorch) is loaded on first use: by the first place() of a
# learned method (or of 'auto', which may use one), or by naming one of these.
_LEARNED = ("Policy", "default_policy_path")


def __getattr__(name):
    """doppler.Policy and doppler.default_policy_path, from doppler._doppler_learn."""
    if name not in _LEARNED:
        raise AttributeError(f"module 'doppler' has no attribute '{name}'")
    try:
        learned = _doppler._load_learned()
    except RuntimeError as e:  # a package without its learned part, or libtorch not found
        raise ImportError(str(e)) from None
    value = getattr(learned, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LEARNED))
