"""The module follows Python habits (issue 52): pickling, paths, version, reprs, warnings, and
errors that name Python arguments rather than CLI flags."""
import multiprocessing
import pickle
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import SOURCE, cli_error


def test_version_is_the_projects(doppler):
    cmake = (SOURCE / "CMakeLists.txt").read_text()
    want = re.search(r"project\(doppler VERSION ([0-9.]+)", cmake).group(1)
    assert doppler.__version__ == want


def test_env_is_an_attribute_after_import_doppler():
    # A fresh interpreter: `import doppler` alone must make doppler.env usable.
    code = "import doppler; print(doppler.env.PlacementEnv.__name__)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "PlacementEnv", r.stderr


def _makespan_in_child(graph):
    import doppler

    return doppler.Problem(graph, 4).simulate(np.arange(graph.num_ops) % 4)


def test_graph_and_placement_pickle(doppler, dag_json):
    g = doppler.load_graph(dag_json)
    h = pickle.loads(pickle.dumps(g))
    assert (h.name, h.num_ops, h.num_edges) == (g.name, g.num_ops, g.num_edges)
    assert np.array_equal(h.edges, g.edges) and np.array_equal(h.compute_cost, g.compute_cost)
    assert np.array_equal(h.transfer_cost, g.transfer_cost) and h.names == g.names
    a = np.arange(g.num_ops) % 4
    want = doppler.Problem(g, 4).simulate(a)
    # multiprocessing (spawn: nothing shared but what pickles) simulates the same makespan.
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_makespan_in_child, (g,)) == want
    p = doppler.place(doppler.Problem(g, 4), "local-search", budget=500, seed=1, threads=1)
    q = pickle.loads(pickle.dumps(p))
    assert (q.makespan, q.calls, q.method, q.note, q.devices) == (
        p.makespan, p.calls, p.method, p.note, p.devices)
    assert np.array_equal(q.assignment, p.assignment) and q.curve == p.curve


def test_generated_graphs_with_flops_pickle(doppler):
    g = doppler.generate("llama-layer", devices=4)
    h = pickle.loads(pickle.dumps(g))
    assert np.array_equal(h.flops, g.flops) and np.array_equal(h.out_bytes, g.out_bytes)
    assert h.kinds == g.kinds and h.params == g.params
    a = np.arange(g.num_ops) % 4
    assert (doppler.Problem(h, 4, hardware="v100").simulate(a)
            == doppler.Problem(g, 4, hardware="v100").simulate(a))


def test_paths_are_accepted_everywhere(doppler, fork_dot, tmp_path):
    g = doppler.load_graph(Path(fork_dot))
    out = tmp_path / "fork.json"
    g.save(out)
    assert doppler.load_graph(out).num_ops == 6
    llama = doppler.generate("llama-layer", devices=2)
    by_file = doppler.Problem(llama, 2, hardware=SOURCE / "hardware" / "8xV100-NVLink.json")
    assert by_file.unit == "seconds" and by_file.hardware.endswith("8xV100-NVLink.json")


def test_unknown_extensions_are_refused_with_the_formats(doppler, fork_dot, tmp_path):
    csv = tmp_path / "graph.csv"
    csv.write_text(Path(fork_dot).read_text())
    with pytest.raises(ValueError, match=r"graph\.csv: unknown graph format '\.csv' \(graph files "
                                         r"are \.txt .*\.json .*\.dot or \.gv .*\.stg"):
        doppler.load_graph(csv)
    code, message = cli_error("info", csv)
    assert code == 2 and "unknown graph format '.csv'" in message
    g = doppler.load_graph(fork_dot)
    with pytest.raises(ValueError, match=r"cannot tell the format .* or pass format="):
        g.save(tmp_path / "out.xyz")
    g.save(tmp_path / "out.xyz", format="json")
    assert doppler.load_graph.__doc__ and "os.PathLike" in doppler.load_graph.__doc__


def _dynamic_matmul(tmp_path):
    """A one-MatMul ONNX model whose input x has a dynamic batch dimension."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 6])
    w = numpy_helper.from_array(np.full((8, 6), 0.5, dtype=np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "dyn.onnx"
    onnx.save(model, str(path))
    return path


def test_dynamic_onnx_inputs_name_input_shapes(doppler, tmp_path):
    path = _dynamic_matmul(tmp_path)
    with pytest.raises(ValueError) as e:
        doppler.import_onnx(path)
    text = str(e.value)
    assert "dimension 0 ('batch') is dynamic" in text
    assert "input_shapes={'x': " in text and "--input" not in text
    code, message = cli_error("import", path, "-d", 4, "-o", tmp_path / "g.json")
    assert code == 2 and "--input x:DIMS" in message
    assert message.split(" is dynamic")[0] == text.split(" is dynamic")[0]  # the same problem
    g = doppler.import_onnx(path, input_shapes={"x": [4, 8]})
    assert g.flops.sum() == 2 * 4 * 8 * 6
    # The same default device count as generate (4).
    assert g.num_ops == doppler.import_onnx(path, devices=4, input_shapes={"x": [4, 8]}).num_ops
    assert g.num_ops != doppler.import_onnx(path, devices=1, input_shapes={"x": [4, 8]}).num_ops


def test_errors_name_python_arguments_not_flags(doppler, tmp_path):
    path = tmp_path / "flops.json"  # FLOPs and bytes, no reference costs
    path.write_text('{"format": "doppler-graph", "version": 1, "nodes": [{"flops": 1e9, '
                    '"out_bytes": 1e6}, {"flops": 2e9}], "edges": [[0, 1]]}')
    g = doppler.load_graph(path)
    assert not g.has_reference_costs
    with pytest.raises(ValueError) as e:
        doppler.Problem(g, 4)
    assert "hardware=" in str(e.value) and "--hardware" not in str(e.value)
    code, message = cli_error("place", path, "-d", 4)
    assert code == 2 and "pass --hardware PROFILE" in message
    # The problem is worded alike; only the remedy differs.
    assert message.split(":")[0] == str(e.value).split(":")[0]


def test_a_profile_pricing_reference_costs_only_warns(doppler, fork_dot):
    g = doppler.load_graph(fork_dot)  # reference costs, no FLOPs or bytes
    with pytest.warns(UserWarning, match="reference costs only .* fixed overhead alone"):
        problem = doppler.Problem(g, 2, hardware="v100")
    # What the warning is about: 18 reference units of work cost microseconds of overhead.
    assert problem.simulate([0] * 6) < 1e-3 and doppler.Problem(g, 2).simulate([0] * 6) == 18
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doppler.Problem(g, 2)  # the reference model: no warning
        doppler.Problem(doppler.generate("llama-layer", devices=2), 2, hardware="v100")


def test_a_profile_calibrated_without_a_graphs_kernels_warns(doppler, tmp_path):
    profile = tmp_path / "some.json"  # a calibration of chosen kernels left silu out
    profile.write_text('{"format": "doppler-hardware", "version": 1, "name": "some", "device": '
                       '{"peak_flops": {"f32": 1e9}}, "count": 2, "topology": {"kind": '
                       '"all-to-all", "link": {"bandwidth": 1e9}}, "calibration_source": '
                       '{"kernels_left_out": ["silu", "cosh"]}}')
    g = doppler.generate("llama-layer", devices=2)
    with pytest.warns(UserWarning, match=r"calibrated without kernels .*: silu \(\d+ ops\);"):
        doppler.Problem(g, 2, hardware=profile)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doppler.Problem(doppler.generate("chainmm", devices=2), 2, hardware=profile)  # einsums


def test_reprs_are_readable(doppler, fork_dot):
    problem = doppler.Problem(doppler.load_graph(fork_dot), 2)
    p = doppler.place(problem, "heft")
    assert re.fullmatch(r"<doppler\.Placement heft: makespan [0-9.]+ on 2 devices, \d+ calls, "
                        r"[0-9.e-]+ s>", repr(p)), repr(p)
    env = doppler.env.PlacementEnv(problem, mode="plc")
    assert repr(env) == ("<doppler.env.PlacementEnv mode='plc': 6 ops on 2 devices, 2 actions, "
                         "0 steps taken>")
