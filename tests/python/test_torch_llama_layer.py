"""scripts/torch_llama_layer.py, the PyTorch baseline of issue 49: on doppler's own tensors (saved
by `doppler execute --save`) PyTorch's layer gives the CPU engine's logits, and its GEMM FLOPs
are those of the generated graph's einsums."""
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import SOURCE, cli

SCRIPT = SOURCE / "scripts" / "torch_llama_layer.py"
SIZES = {"batch": 2, "seq": 16, "dim": 64, "heads": 4, "ffn": 96, "vocab": 50}
TENSORS = ["x", "attn_norm.g", "wq", "wk", "wv", "wo", "ffn_norm.g", "w1", "w3", "w2",
           "final_norm.g", "w_vocab"]


def script(*args, check=True):
    r = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                       text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"torch_llama_layer.py exited {r.returncode}: {r.stderr}")
    return r


def size_args():
    return [a for k, v in SIZES.items() for a in (f"--{k}", v)]


@pytest.fixture(scope="module")
def layer(tmp_path_factory):
    """A small llama-layer graph, run by the CPU engine on 2 devices with its tensors saved."""
    pytest.importorskip("torch")
    d = tmp_path_factory.mktemp("layer")
    params = [a for k, v in SIZES.items() for a in ("-p", f"{k}={v}")]
    cli("generate", "llama-layer", *params, "--dtype", "f32", "--devices", "2", "-o", d / "g.json")
    cli("place", d / "g.json", "--devices", "2", "--method", "critical-path", "-o", d / "a.json")
    saves = [a for n in TENSORS + ["logits", "y"] for a in ("--save", f"{n}={d / n}.npy")]
    cli("execute", d / "g.json", "-a", d / "a.json", "--repeat", "1", *saves)
    return d


def test_pytorch_gives_the_engines_logits_on_its_tensors(layer):
    """The logits (last token) and the block's output y (every token: the causal mask)."""
    out = layer / "torch-logits.npy"
    script(*size_args(), "--device", "cpu", "--dtype", "f32", "--attention", "math",
           "--weights", layer, "--logits", out, "--hidden", layer / "torch-y.npy",
           "--repeat", "1", "--warmup", "0")
    b, s, d, v = (SIZES[k] for k in ("batch", "seq", "dim", "vocab"))
    for name, shape in [("logits", (b, 1, v)), ("y", (b, s, d))]:
        ours, theirs = np.load(layer / f"{name}.npy"), np.load(layer / f"torch-{name}.npy")
        assert ours.shape == theirs.shape == shape
        assert np.abs(theirs).max() > 0.1  # not a degenerate layer
        np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-5 * np.abs(ours).max())


def test_a_changed_tensor_changes_the_logits(layer, tmp_path):
    """The comparison above can fail: one weight scaled by 1.5 moves the logits."""
    for n in TENSORS:
        (tmp_path / f"{n}.npy").write_bytes((layer / f"{n}.npy").read_bytes())
    wk = np.load(layer / "wk.npy")
    np.save(tmp_path / "wk.npy", wk * 1.5)
    script(*size_args(), "--device", "cpu", "--dtype", "f32", "--attention", "math",
           "--weights", tmp_path, "--logits", tmp_path / "l.npy", "--repeat", "1")
    assert np.abs(np.load(tmp_path / "l.npy") - np.load(layer / "logits.npy")).max() > 1e-3


def test_gemm_flops_are_the_graphs_einsum_flops(layer):
    pytest.importorskip("torch")
    r = json.loads(script(*size_args(), "--device", "cpu", "--dtype", "f32", "--repeat", "1",
                          "--matmul-precision", "medium", "--json").stdout)
    assert r["matmul_precision"] == "medium" and r["dtype"] == "f32"
    g = json.load(open(layer / "g.json"))
    einsum = sum(n["flops"] for n in g["nodes"] if n.get("exec", {}).get("op") == "einsum")
    assert r["gemm_flops"] == einsum
    assert r["median_s"] > 0 and r["sizes"] == SIZES


def test_bad_requests_exit_2_with_one_line(tmp_path):
    r = script("--dim", "64", "--heads", "5", check=False)
    assert r.returncode == 2 and "--heads 5 must divide --dim 64" in r.stderr
    pytest.importorskip("torch")
    r = script(*size_args(), "--device", "cpu", "--weights", tmp_path, check=False)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"torch_llama_layer: error: {tmp_path}/x.npy: No such file or directory"]
