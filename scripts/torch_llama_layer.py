#!/usr/bin/env python3
"""The Llama layer of `doppler generate llama-layer` in PyTorch: what a user would run instead of
a placement (issue 49's baseline, on the whole GPU). The same function as the generated graph
(src/workloads/llama_block.cpp, docs/exec.md): RMSNorm with a gain, Q/K/V projections to
[heads, head_dim], rotary embedding of adjacent pairs (theta 10000, position = token index),
causal softmax attention, output projection and residual, RMSNorm, SwiGLU FFN and residual, the
final RMSNorm of the last token and its vocabulary logits.

Time it (weights drawn like the generator's, seeded), in bf16 as a user would, or with f32
tensors and bf16 Tensor Core matmuls as doppler's engine runs `--gpu-math bf16`:
  torch_llama_layer.py --dim 4096 --heads 32 --ffn 11008 --seq 2048 --vocab 32000 \\
      --device cuda --dtype bf16 --repeat 20 --json
  torch_llama_layer.py ... --dtype f32 --matmul-precision medium
Compute doppler's layer (tensors saved by `doppler execute --save NAME=DIR/NAME.npy`; the
names are WEIGHTS below) and write its logits and its block's output y:
  torch_llama_layer.py --dim 64 ... --weights DIR --logits logits.npy --hidden y.npy

Prints one line (or one JSON object): device, dtype, attention kernel, the GEMM FLOPs of one
forward pass (2 per multiply-add, as doppler counts einsums) and the median seconds of --repeat
timed passes after --warmup untimed ones (CUDA events on a GPU). Exit 2 on a bad request.
"""
import argparse
import json
import math
import statistics
import sys
import time

# Every tensor of the layer, as the generator names it.
WEIGHTS = ["x", "attn_norm.g", "wq", "wk", "wv", "wo", "ffn_norm.g", "w1", "w3", "w2",
           "final_norm.g", "w_vocab"]
EPS = 1e-5       # RMSNorm epsilon (llama_block.hpp kEps)
THETA = 10000.0  # rotary base
MASKED = -1e9    # added to the scores of later tokens


def shapes(a):
    """The shape of every tensor of WEIGHTS for sizes `a`."""
    hd = a.dim // a.heads
    return {"x": (a.batch, a.seq, a.dim), "attn_norm.g": (a.dim,),
            "wq": (a.dim, a.heads, hd), "wk": (a.dim, a.heads, hd), "wv": (a.dim, a.heads, hd),
            "wo": (a.heads, hd, a.dim), "ffn_norm.g": (a.dim,), "w1": (a.dim, a.ffn),
            "w3": (a.dim, a.ffn), "w2": (a.ffn, a.dim), "final_norm.g": (a.dim,),
            "w_vocab": (a.dim, a.vocab)}


def scales(a):
    """(scale, offset) of each tensor's values: offset + scale * u, u uniform in [-1, 1)."""
    w = 1 / math.sqrt(a.dim)
    s = {"x": (1, 0), "wq": (w, 0), "wk": (w, 0), "wv": (w, 0), "wo": (w, 0), "w1": (w, 0),
         "w3": (w, 0), "w2": (1 / math.sqrt(a.ffn), 0), "w_vocab": (w, 0)}
    for g in ("attn_norm.g", "ffn_norm.g", "final_norm.g"):
        s[g] = (0.1, 1)
    return s


def load_tensors(torch, a, device, dtype):
    """The layer's tensors: read from a.weights (.npy files) or drawn with seed a.seed."""
    out = {}
    if a.weights:
        import numpy as np

        for name, shape in shapes(a).items():
            path = f"{a.weights}/{name}.npy"
            try:
                t = torch.from_numpy(np.load(path))
            except OSError as e:
                raise ValueError(f"{path}: {e.strerror or e}") from None
            if tuple(t.shape) != shape:
                raise ValueError(f"{path}: shape {tuple(t.shape)}, expected {shape}")
            out[name] = t.to(device=device, dtype=dtype)
        return out
    gen = torch.Generator(device="cpu").manual_seed(a.seed)
    for name, shape in shapes(a).items():
        scale, offset = scales(a)[name]
        u = torch.rand(shape, generator=gen) * 2 - 1
        out[name] = (offset + scale * u).to(device=device, dtype=dtype)
    return out


def rotary_tables(torch, a, device, dtype):
    """cos and sin of the rotary angles, [seq, 1, head_dim / 2] (pair p of position s)."""
    hd = a.dim // a.heads
    freq = THETA ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    angle = torch.arange(a.seq, dtype=torch.float64)[:, None] * freq[None, :]
    return (angle.cos()[:, None, :].to(device, dtype), angle.sin()[:, None, :].to(device, dtype))


def make_forward(torch, a, t, attention):
    """The forward pass of the layer on tensors `t`: logits [batch, 1, vocab], and with
    hidden=True also the block's output y [batch, seq, dim]."""
    F = torch.nn.functional
    hd = a.dim // a.heads
    cos, sin = rotary_tables(torch, a, t["x"].device, t["x"].dtype)
    mask = torch.full((a.seq, a.seq), MASKED, device=t["x"].device, dtype=t["x"].dtype).triu(1)

    def rms(x, g):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * g

    def rotate(x):  # [b, s, h, e]: pairs (2p, 2p + 1) turned by position s's angle
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), -1).flatten(-2)

    def attend(q, k, v):  # [b, s, h, e] -> [b, s, h, e]
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        if attention == "sdpa":
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask, -1)
            o = p @ v
        return o.transpose(1, 2)

    def forward(hidden=False):
        x = t["x"]
        xn = rms(x, t["attn_norm.g"])
        q, k, v = (torch.einsum("bsd,dhe->bshe", xn, t[w]) for w in ("wq", "wk", "wv"))
        o = attend(rotate(q), rotate(k), v)
        h1 = x + torch.einsum("bshe,hed->bsd", o, t["wo"])
        hn = rms(h1, t["ffn_norm.g"])
        y = h1 + (F.silu(hn @ t["w1"]) * (hn @ t["w3"])) @ t["w2"]
        logits = rms(y[:, -1:, :], t["final_norm.g"]) @ t["w_vocab"]
        return (logits, y) if hidden else logits

    return forward


def gemm_flops(a):
    """FLOPs of the layer's matrix products (2 per multiply-add; the attention's in full)."""
    tokens = a.batch * a.seq
    proj = 4 * 2 * tokens * a.dim * a.dim
    attn = 2 * 2 * a.batch * a.seq * a.seq * a.dim
    ffn = 3 * 2 * tokens * a.dim * a.ffn
    return proj + attn + ffn + 2 * a.batch * a.dim * a.vocab


def time_passes(torch, forward, a, device):
    """Seconds of each of a.repeat passes after a.warmup untimed ones."""
    for _ in range(a.warmup):
        forward()
    times = []
    for _ in range(a.repeat):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            forward()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
        else:
            t0 = time.perf_counter()
            forward()
            times.append(time.perf_counter() - t0)
    return times


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in [("batch", 1), ("seq", 2048), ("dim", 4096), ("heads", 32),
                          ("ffn", 11008), ("vocab", 32000)]:
        p.add_argument(f"--{name}", type=int, default=default, help=f"(default {default})")
    p.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (default cuda)")
    p.add_argument("--dtype", choices=["bf16", "f32"], default="bf16", help="(default bf16)")
    p.add_argument("--attention", choices=["auto", "sdpa", "math"], default="auto",
                   help="sdpa (fused, torch >= 2.0), math (softmax of the masked scores); "
                        "auto: sdpa where torch has it")
    p.add_argument("--matmul-precision", choices=["highest", "high", "medium"], default="highest",
                   help="f32 matmuls: highest (f32), high (TF32 Tensor Cores) or medium (bf16 "
                        "Tensor Cores: operands rounded, f32 accumulation, as doppler's "
                        "--gpu-math bf16 with f32 tensors); default highest")
    p.add_argument("--compile", action="store_true", help="torch.compile the forward pass")
    p.add_argument("--repeat", type=int, default=20, help="timed passes (default 20)")
    p.add_argument("--warmup", type=int, default=3, help="untimed passes first (default 3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the drawn weights (default 0)")
    p.add_argument("--weights", help="folder of the tensors as NAME.npy (doppler execute --save)")
    p.add_argument("--logits", help="write the logits of one pass here (.npy, f32)")
    p.add_argument("--hidden", help="write the block's output y of one pass here (.npy, f32)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    for name in ("batch", "seq", "dim", "heads", "ffn", "vocab", "repeat"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    if a.warmup < 0:
        p.error("--warmup must be at least 0")
    if a.dim % a.heads or (a.dim // a.heads) % 2:
        p.error(f"--heads {a.heads} must divide --dim {a.dim} into an even head size")
    return a


def main(argv):
    a = parse(argv)
    import torch

    torch.set_float32_matmul_precision(a.matmul_precision)
    try:
        device = torch.device(a.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"--device {a.device}: torch sees no CUDA GPU")
        dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float32
        attention = a.attention
        if attention == "auto":
            attention = "sdpa" if hasattr(torch.nn.functional, "scaled_dot_product_attention") \
                else "math"
        t = load_tensors(torch, a, device, dtype)
    except ValueError as e:
        print(f"torch_llama_layer: error: {e}", file=sys.stderr)
        return 2
    forward = make_forward(torch, a, t, attention)
    with torch.inference_mode():
        if a.logits or a.hidden:
            import numpy as np

            logits, y = forward(hidden=True)
            for path, v in ((a.logits, logits), (a.hidden, y)):
                if path:
                    np.save(path, v.float().cpu().numpy())
        if a.compile:
            forward = torch.compile(forward)
        times = time_passes(torch, forward, a, device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    r = {"device": name, "dtype": a.dtype, "matmul_precision": a.matmul_precision,
         "attention": attention, "compiled": a.compile,
         "torch": torch.__version__, "gemm_flops": gemm_flops(a), "repeat": a.repeat,
         "median_s": statistics.median(times), "min_s": min(times),
         "sizes": {k: getattr(a, k) for k in ("batch", "seq", "dim", "heads", "ffn", "vocab")}}
    r["gemm_tflops_per_s"] = r["gemm_flops"] / r["median_s"] * 1e-12
    if a.json:
        print(json.dumps(r))
    else:
        print(f"{name}, {a.dtype}, {attention} attention: median {r['median_s'] * 1e3:.3f} ms "
              f"of {a.repeat} passes, {r['gemm_tflops_per_s']:.1f} GEMM TFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
