"""doppler.from_torch: the graph of import_onnx on the same export made by hand; the example."""
import json
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from conftest import SOURCE


def test_import_doppler_imports_neither_torch_nor_networkx(tmp_path):
    r = subprocess.run([sys.executable, "-c", "import sys, doppler; print(sorted(m for m in "
                        "('torch', 'torchvision', 'networkx', 'onnx') if m in sys.modules))"],
                       cwd=tmp_path, capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def small_cnn(torch):
    """Two convolutions, a pool and a linear layer, on 16 x 16 RGB images."""

    class SmallCnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
            self.fc = torch.nn.Linear(16 * 8 * 8, 10)

        def forward(self, image):
            x = torch.relu(self.conv1(image))
            x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
            return self.fc(x.flatten(1))

    torch.manual_seed(0)
    return SmallCnn()


def export_by_hand(torch, model, x, path):
    """What from_torch documents: opset 14, constant folding, inputs named after forward's."""
    torch.onnx.export(model, (x,), str(path), opset_version=14, do_constant_folding=True,
                      input_names=["image"])
    return path


def test_from_torch_equals_import_onnx_of_the_same_export(doppler, torch, tmp_path):
    model = small_cnn(torch)
    x = torch.randn(2, 3, 16, 16)
    got = doppler.from_torch(model, x, devices=4)
    want = doppler.import_onnx(str(export_by_hand(torch, model, x, tmp_path / "SmallCnn.onnx")),
                               devices=4, dtype="f32")
    assert got.name == want.name == "SmallCnn"
    assert (got.num_ops, got.num_edges) == (want.num_ops, want.num_edges)
    assert got.num_ops > 10
    assert got.names == want.names
    assert any(n.startswith("image[") for n in got.names)  # the input, named after forward's
    assert got.kinds == want.kinds
    assert np.array_equal(got.edges, want.edges)
    assert np.array_equal(got.flops, want.flops)
    assert np.array_equal(got.out_bytes, want.out_bytes)
    assert got.flops.sum() > 0
    p_got = doppler.Problem(got, 4, hardware="v100")
    p_want = doppler.Problem(want, 4, hardware="v100")
    assert p_got.lower_bound == p_want.lower_bound > 0
    for method in ("heft", "critical-path", "round-robin"):
        assert doppler.place(p_got, method).makespan == doppler.place(p_want, method).makespan
    a = np.random.default_rng(1).integers(0, 4, size=(16, got.num_ops))
    assert np.array_equal(p_got.simulate_many(a), p_want.simulate_many(a))


def test_devices_and_dtype_reach_the_importer(doppler, torch, tmp_path):
    model = small_cnn(torch)
    x = torch.randn(1, 3, 16, 16)
    path = export_by_hand(torch, model, x, tmp_path / "SmallCnn.onnx")
    got = doppler.from_torch(model, (x,), devices=2, dtype="f16",
                             input_shapes={"image": [1, 3, 16, 16]})
    want = doppler.import_onnx(str(path), devices=2, dtype="f16")
    assert got.num_ops == want.num_ops
    assert np.array_equal(got.out_bytes, want.out_bytes)
    assert got.num_ops < doppler.from_torch(model, x, devices=4).num_ops


def test_module_mode_is_kept_and_the_temporary_file_removed(doppler, torch, tmp_path,
                                                             monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    model = small_cnn(torch).train()
    doppler.from_torch(model, torch.randn(1, 3, 16, 16), devices=2)
    assert model.training
    assert list(scratch.iterdir()) == []


def test_import_errors_name_the_module_and_leave_no_file(doppler, torch, tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    class Determinant(torch.nn.Module):
        def forward(self, x):
            return torch.det(x.reshape(4, 2, 2))  # ONNX Det: not an op the importer lowers

    with pytest.raises(ValueError, match=r"^from_torch\(Determinant\): .*Det") as e:
        doppler.from_torch(Determinant(), torch.randn(2, 8), devices=2)
    assert str(scratch) not in str(e.value)
    assert list(scratch.iterdir()) == []
    with pytest.raises(ValueError, match="example_inputs"):
        doppler.from_torch(Determinant(), [1.0, 2.0])


def test_a_language_model_imports_from_its_token_ids(doppler, torch):
    """nn.Embedding (a Gather of the token ids) and the vocabulary head: the head's FLOPs, the
    lookups' none; the ids, generated as rows of the table, place and simulate."""

    class TinyLm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = torch.nn.Embedding(500, 32)
            self.head = torch.nn.Linear(32, 500)

        def forward(self, ids):
            return self.head(self.tokens(ids))

    torch.manual_seed(0)
    ids = torch.randint(0, 500, (2, 16))
    g = doppler.from_torch(TinyLm().eval(), ids, devices=4)
    kinds = dict(zip(*np.unique(g.kinds, return_counts=True)))
    assert kinds.get("select", 0) >= 1  # the lookups (gather blocks)
    tokens = 2 * 16
    assert g.flops.sum() == 2 * tokens * 32 * 500 + tokens * 500  # the head and its bias
    problem = doppler.Problem(g, 4, hardware="v100")
    p = doppler.place(problem, "heft")
    assert problem.simulate(p.assignment) == p.makespan > 0


def test_example_places_a_torchvision_model(doppler, torch):
    pytest.importorskip("torchvision")
    example = SOURCE / "examples" / "python" / "place_torchvision.py"
    r = subprocess.run([sys.executable, str(example), "--seconds", "2", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["model"], out["devices"], out["hardware"]) == ("resnet18", 4, "v100")
    assert out["ops"] > 100
    assert sum(out["ops_per_device"]) == out["ops"]
    assert 0 < out["lower_bound"] <= out["makespan"]
    assert out["method"] == "auto"
