"""doppler.import_onnx against `doppler import` and an independent FLOP count of the same file."""
import subprocess
import sys

import numpy as np
import pytest

from conftest import SOURCE, cli, cli_error

MODELS = SOURCE / "tests" / "onnx" / "models.py"


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    out = tmp_path_factory.mktemp("mlp")
    subprocess.run([sys.executable, str(MODELS), "export", "mlp", "small", str(out)], check=True,
                   capture_output=True)
    return out / "model.onnx"


def test_import_equals_the_cli_and_counts_the_flops(doppler, mlp, tmp_path):
    got = doppler.import_onnx(str(mlp), devices=2)
    out = tmp_path / "g.json"
    cli("import", mlp, "--devices", 2, "-o", out)
    want = doppler.load_graph(str(out))
    assert (got.num_ops, got.num_edges) == (want.num_ops, want.num_edges)
    assert np.array_equal(got.edges, want.edges)
    assert np.array_equal(got.flops, want.flops)
    flops = float(subprocess.run([sys.executable, str(MODELS), "onnx-flops", str(mlp)],
                                 check=True, capture_output=True, text=True).stdout)
    assert got.flops.sum() == pytest.approx(flops, rel=1e-12)
    problem = doppler.Problem(got, 2, hardware="v100")
    assert doppler.place(problem, "heft").makespan > problem.lower_bound > 0


def test_bad_model_is_the_clis_value_error(doppler, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    code, message = cli_error("import", bad, "--devices", 2, "-o", tmp_path / "g.json")
    assert code == 2
    with pytest.raises(ValueError) as e:
        doppler.import_onnx(str(bad), devices=2)
    assert str(e.value) == message


def test_generated_weights_keep_the_graph_and_match_the_cli(doppler, mlp, tmp_path):
    embedded = doppler.import_onnx(str(mlp), devices=2)
    generated = doppler.import_onnx(str(mlp), devices=2, weights="generated")
    assert np.array_equal(generated.edges, embedded.edges)
    assert np.array_equal(generated.flops, embedded.flops)
    out = tmp_path / "g.json"
    cli("import", mlp, "--devices", 2, "-o", out, "--weights", "generated")
    generated.save(str(tmp_path / "p.json"))
    # the weights are blocks of generated values, not constants: a far smaller file
    assert (tmp_path / "p.json").stat().st_size == out.stat().st_size
    embedded.save(str(tmp_path / "e.json"))
    assert out.stat().st_size * 4 < (tmp_path / "e.json").stat().st_size
    with pytest.raises(ValueError, match="weights must be embedded or generated"):
        doppler.import_onnx(str(mlp), devices=2, weights="random")


def test_whole_ops_match_the_cli(doppler, mlp, tmp_path):
    whole = doppler.import_onnx(str(mlp), devices=4, partition="whole")
    one = doppler.import_onnx(str(mlp), devices=1)
    assert whole.num_ops == one.num_ops < doppler.import_onnx(str(mlp), devices=4).num_ops
    out = tmp_path / "w.json"
    cli("import", mlp, "--devices", 4, "--partition", "whole", "-o", out)
    assert doppler.load_graph(str(out)).num_ops == whole.num_ops
    with pytest.raises(ValueError, match="partition must be auto or whole"):
        doppler.import_onnx(str(mlp), devices=4, partition="coarse")
