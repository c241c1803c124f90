#!/usr/bin/python3
"""End-to-end ONNX test models for `doppler import` (tests/onnx/test_onnx_e2e.cpp).

Run with Debian's /usr/bin/python3 (python3-torch 1.13, python3-onnx 1.12, python3-numpy):

    python3 models.py export NAME SIZE OUTDIR   # OUTDIR/model.onnx, x.npy, y.npy, flops.json
    python3 models.py onnx-flops MODEL.onnx [OP ...]  # FLOPs of an ONNX file, a line per OP
                                                      # (an op type, or all: every node; default all)
    python3 models.py op-types MODEL.onnx       # op types with counts, one per line
    python3 models.py list                      # the models and sizes

Models (deterministic: torch.manual_seed(0) for the weights, seed 1 for the input):

    mlp      Linear-ReLU-Linear-ReLU-Linear on x [batch, d0]
    encoder  torch.nn.TransformerEncoderLayer(d, h, ff, dropout=0, batch_first=True), eval mode,
             on x [B, S, d]
    resnet18 resnet50 mobilenet_v3_small inception_v3 vit_b_16 swin_t
             torchvision 0.14 models (vit_b_16 small: 2 of its 12 encoder layers; swin_t:
             flops.json's einsum_flops are PyTorch's profiler's matrix-product FLOPs, which
             include the F.linear calls and attention products no module hook sees) (weights=None, seeded; inception without aux logits) on
             [batch, 3, image, image]: sizes small (batch 1, 64 x 64; inception 80 x 80), b1 and
             b32 (224 x 224; inception 299 x 299); flops.json adds conv_flops = 2 x the Conv2d (and
             Conv3d) multiply-adds counted by forward hooks (no bias: the exporter folds BatchNorm into
             the convolutions, adding a bias the module does not have)
    lraspp_mobilenet_v3_large fcn_resnet50
             torchvision's segmentation models (weights=None, weights_backbone=None, seeded),
             their "out" (class scores per pixel, bilinear Resize back to the input's size); the
             sizes of the vision models (small: batch 1, 64 x 64)
    video    a small 3-D CNN (3-D convolutions: strided, grouped, depthwise and dilated in time;
             BatchNorm3d; ceil-mode max and average 3-D pools; global average pooling) on clips
             [batch, 3, frames, image, image]; small: batch 2, 8 frames of 32 x 32
    unet3d   a two-level 3-D U-Net written out (3x3x3 conv pairs with InstanceNorm3d, 3-D max
             pooling; up by ConvTranspose3d of kernel 2 and of kernel 3 (overlapping taps); skip
             connections concatenated; a trilinear Upsample; width 8, 3 classes) on volumes
             [batch, 1, depth, image, image]; small: batch 1, 16 x 32 x 32
    r3d_18 mc3_18 r2plus1d_18
             torchvision's video ResNets (weights=None, seeded) on one 16-frame clip of 112 x 112
             (size b1 only: for docs/results, not the tests)
    detect   YOLOv5's Detect layer decoding its boxes in place (ScatterND of computed tensors:
             slice assignment), 3 anchors, 3 classes, stride 8, on feature maps x [B, C, ny, nx]
    focus    YOLOv5's Focus stem (strided Slices), a conv and a classifier, averaged over the image
             and its mirror image (torch.flip: Slices of step -1); small: batch 1, 32 x 32
    unet     a two-level U-Net written out (3x3 conv pairs with GroupNorm, max pooling; up by a
             2x2 stride-2 ConvTranspose2d, nearest and bilinear Upsample; skip connections
             concatenated; width 8, 4 classes); small: batch 1, 32 x 32
    speech   a Whisper-style audio encoder: Conv1d (mels -> d, 3) and Conv1d (d -> d, 3, stride
             2) with GELU over a mel spectrogram x [B, mels, T], positional embeddings, a
             pre-LayerNorm TransformerEncoderLayer (GELU, FFN 4d) on T / 2 frames, a LayerNorm
    masked   self-attention under a key padding mask computed from the input (Less, Not, And,
             GreaterOrEqual and Where of computed tensors; masked_fill(-inf)), on x [B, S, d]
    gpt      a GPT-style decoder block written out: pre-LayerNorm, causal self-attention (a
             constant boolean causal mask applied with masked_fill(-inf)), GELU MLP of width 4d,
             residual connections, on x [B, S, d]
    lstm     an LSTM language model: token embeddings, a two-layer nn.LSTM (batch first), the
             vocabulary head, on token ids x [B, S] in [0, V)
    gru      a bidirectional nn.GRU encoder (batch first, linear_before_reset) on x [B, S, d]:
             its outputs and final states each projected back to d and added
    lm       a whole small language model: token and position embeddings (nn.Embedding: Gather
             of the token ids), one gpt block, a final LayerNorm and the vocabulary head, on
             token ids x [B, S] (int64 in the model, whole numbers in x.npy) in [0, V)

`export` writes the model with torch.onnx.export (opset 14, do_constant_folding=True, static
shapes, input "x", output "y"), the seeded input x.npy, PyTorch's output y.npy (float32) and
flops.json = {"einsum_flops": N, "params": n}, where N is counted from the module's own sizes,
not from the ONNX file: 2*M*N*K for every linear layer applied to M rows, and for attention
2*B*h*S*S*(d/h) for Q K^T plus the same for (softmax) V.

`onnx-flops` counts the FLOPs of any ONNX file independently of Doppler, with the shapes of
onnx.shape_inference.infer_shapes and these conventions (per output element unless said):

    MatMul               2*K per output element (2*M*N*K; K = the first operand's last extent)
    Gemm                 2*M*N*K, plus 1 per output element for the bias C when present;
                         1 more per output element when alpha != 1, and when beta != 1 with a
                         computed C (a constant C is scaled at import)
    Add Sub Mul Div Pow Sqrt Neg Relu Erf Tanh   1
    Einsum               2 per point of the iteration space (the product of every label's extent)
    Conv                 2 * (input channels per group) * KH * KW (3-D: * KD), plus 1 with a bias
    ConvTranspose        2 * (output channels per group) * KH * KW (3-D: * KD) per INPUT
                         element (its true multiply-adds when no padding crops them), plus 1 per
                         output with a bias; 3-D, when two depth taps reach a depth ((KD - 1) *
                         dilation + 1 > stride): KD - 1 more per output (the taps' sums)
    Resize Upsample      0 (mode nearest), 9 (mode linear); 5-D linear with a new depth: 3 more
                         per element of [N, C, D', H, W] (the depth resized first)
    MaxPool AveragePool  KH * KW; 3-D: KD * KH * KW, plus KD - 1 (MaxPool: the depth taps'
                         maxima) or KD when KD > 1 (AveragePool: their sum and the division)
    GlobalAveragePool    1 per input element, plus 1 per output element (the scale)
    GlobalMaxPool        1 per input element
    BatchNormalization   2 (multiply and add)
    Clip                 2
    HardSigmoid          4
    HardSwish            5
    Sigmoid              4
    Gelu                 5
    Softmax              5 (max, subtract, exp, sum, divide)
    LogSoftmax           6 (Softmax's and the log)
    LeakyRelu            2
    Elu                  4
    Softplus             3
    Abs Log              1
    Reciprocal Floor Ceil Round Sign Sin Cos Tan Asin Acos Atan Sinh Cosh IsNaN IsInf Mod   1
    Selu Celu            5
    ReduceL1             2 per input element; ReduceLogSumExp 4 per input, 2 per output element
    PRelu                2
    Max Min              1 per output element and operand after the first
    TopK                 2 * (the axis's extent) per output element (Values and Indices, each k
                         comparisons per input element)
    Trilu                1 (a 0/1 mask)
    ReduceMean           1 per input element, plus 1 per output element (the scale)
    ReduceSum ReduceMax  1 per input element
    ReduceMin            2 per input element (negate, max), plus 1 per output element (negate)
    ReduceSumSquare      2 per input element; ReduceL2 the same plus 1 per output element
    ArgMax ArgMin        1 per input element; 2 (the negation first)
    LayerNormalization   per element 1 (sum) + 1 (subtract the mean) + 2 (sum of squares)
                         + 1 (normalise) + 1 (gain) + 1 (bias); per normalised row 1 (the scale
                         of the mean) + 3 (the reciprocal square root)
    InstanceNormalization  as LayerNormalization, a row per (batch, channel)
    Transpose Reshape Flatten Squeeze Unsqueeze Concat Split Slice Gather Cast Identity
    Constant Shape ConstantOfShape Expand   0
    ScatterND            0 (slice assignment); with a reduction 1 per element of the updates
    LRN                  size + 5 (the channel window's sum; square, scale, add, power, product)
    Where                (constant condition) 2 per element when one branch is computed (the
                         computed branch times a 0/1 mask, plus the constant branch's values),
                         3 when both are (two masked products and their sum); 1 with a
                         computed condition (a select)
    Equal Less Greater LessOrEqual GreaterOrEqual And Or Xor Not   1 (of computed operands)
    LSTM GRU RNN         per direction, with S steps, batch B, hidden H, input I, G gates (4, 3,
                         1) and e = B*H: G*2*S*B*H*I (input projections), G*S*B*H with a bias
                         B, then per step G*(2*e*H + e) (recurrent products and their adds)
                         plus, with a(f) the FLOPs of activation f on e elements (the table above):
                         LSTM 3 a(f) + a(g) + a(h) + 4e, 6e more with peepholes P;
                         GRU 2 a(f) + a(g) + 4e, e more with linear_before_reset and a bias;
                         RNN a(f); and 2e per clipped activation with clip (LSTM 5, GRU 3, RNN 1)

A node whose inputs are all constants (initializers, Constant outputs, outputs of other such
nodes, and Shape outputs, which are static) counts 0: the importer folds it. Any other op type
is an error, so that no FLOPs are silently missed.
"""

import json
import math
import os
import sys

SIZES = {
    "mlp": {
        "small": {"batch": 64, "dims": [128, 256, 256, 64]},
        "large": {"batch": 128, "dims": [512, 1024, 1024, 256]},
    },
    "encoder": {
        "small": {"B": 2, "S": 16, "d": 64, "h": 4, "ff": 128},
        "large": {"B": 2, "S": 64, "d": 256, "h": 8, "ff": 1024},
    },
    "gpt": {
        "small": {"B": 2, "S": 16, "d": 64, "h": 4},
        "large": {"B": 2, "S": 64, "d": 256, "h": 8},
    },
    "speech": {
        "small": {"B": 2, "mels": 16, "T": 32, "d": 64, "h": 4},
        "large": {"B": 2, "mels": 80, "T": 128, "d": 256, "h": 8},
    },
    "masked": {
        "small": {"B": 2, "S": 16, "d": 64, "h": 4},
        "large": {"B": 2, "S": 64, "d": 256, "h": 8},
    },
    "lm": {
        "small": {"B": 2, "S": 16, "d": 64, "h": 4, "V": 300},
        "large": {"B": 2, "S": 64, "d": 256, "h": 8, "V": 4000},
    },
    "lstm": {
        "small": {"B": 2, "S": 8, "d": 32, "H": 48, "V": 100},
        "large": {"B": 8, "S": 32, "d": 256, "H": 512, "V": 2000},
    },
    "gru": {
        "small": {"B": 2, "S": 8, "d": 32, "H": 24},
        "large": {"B": 8, "S": 32, "d": 256, "H": 256},
    },
    "detect": {
        "small": {"B": 1, "C": 16, "ny": 8, "nx": 8},
        "large": {"B": 2, "C": 64, "ny": 20, "nx": 20},
    },
}
# torchvision models (python3-torchvision, weights=None: seeded random weights), input
# [batch, 3, image, image]; "small" for tests, "b1"/"b32" at 224 x 224 for the results
# (inception_v3 takes 299 x 299 there, and at least 75 x 75).
VISION = {
    "resnet18": {"small": (1, 64)}, "resnet50": {"small": (1, 64)},
    "mobilenet_v3_small": {"small": (1, 64)}, "inception_v3": {"small": (1, 80)},
    "vit_b_16": {"small": (1, 64)}, "swin_t": {"small": (1, 64)},
}
# Segmentation models, whose decoders upsample: torchvision's LR-ASPP (MobileNetV3-large
# backbone, bilinear Resize) and FCN (ResNet-50, bilinear Resize), and a small U-Net written out
# here (ConvTranspose2d and nearest and bilinear Upsample in its decoder); their output is the
# per-pixel class scores, [batch, classes, image, image].
SEGMENTATION = {"lraspp_mobilenet_v3_large": {"small": (1, 64)},
                "fcn_resnet50": {"small": (1, 64)}, "unet": {"small": (1, 32)},
                "focus": {"small": (1, 32)}}
VISION.update(SEGMENTATION)
for _name, _sizes in VISION.items():
    _image = 299 if _name == "inception_v3" else 224
    _sizes.update({"b1": (1, _image), "b32": (32, _image)})
    SIZES[_name] = {k: {"batch": b, "image": i} for k, (b, i) in _sizes.items()}
# Video models on clips [batch, 3, frames, image, image] (3-D convolutions): a small 3-D CNN
# written out here (size small only) and torchvision's video ResNets (b1: one 16-frame clip of
# 112 x 112, the size they were trained at); and a 3-D U-Net on volumes [batch, 1, depth, image,
# image] (frames: the depth).
VIDEO = {"video": {"small": (2, 8, 32)}, "unet3d": {"small": (1, 16, 32)},
         "r3d_18": {"b1": (1, 16, 112)},
         "mc3_18": {"b1": (1, 16, 112)}, "r2plus1d_18": {"b1": (1, 16, 112)}}
for _name, _sizes in VIDEO.items():
    SIZES[_name] = {k: {"batch": b, "frames": t, "image": i} for k, (b, t, i) in _sizes.items()}
VISION.update(VIDEO)
# The tests' ViT-B/16 has 2 of its 12 encoder layers (identical layers; the whole model's 345 MB
# of weights took 63 s of the test suite to export, import, load and run).
SIZES["vit_b_16"]["small"]["layers"] = 2

# FLOPs per output element of the elementwise ops.
ELEMENTWISE = {
    "Add": 1, "Sub": 1, "Mul": 1, "Div": 1, "Pow": 1, "Sqrt": 1, "Neg": 1, "Relu": 1,
    "Erf": 1, "Tanh": 1, "Sigmoid": 4, "Gelu": 5, "Softmax": 5,
    "Clip": 2, "HardSigmoid": 4, "HardSwish": 5, "BatchNormalization": 2,
    "LeakyRelu": 2, "Elu": 4, "Softplus": 3, "Abs": 1, "Log": 1, "LogSoftmax": 6,
    "Equal": 1, "Less": 1, "Greater": 1, "LessOrEqual": 1, "GreaterOrEqual": 1, "And": 1,
    "Or": 1, "Xor": 1, "Not": 1, "CumSum": 1, "Trilu": 1, "Reciprocal": 1, "Floor": 1,
    "Ceil": 1, "Round": 1, "Sign": 1, "Sin": 1, "Cos": 1, "PRelu": 2, "Tan": 1, "Asin": 1,
    "Acos": 1, "Atan": 1, "Sinh": 1, "Cosh": 1, "IsNaN": 1, "IsInf": 1, "Mod": 1, "Selu": 5,
    "Celu": 5,
}
# Resize and Upsample: nearest copies (0), linear interpolates (9 per output element).
RESIZE = {"nearest": 0, "linear": 9}
# Data movement and shape ops: no FLOPs.
FREE = {
    "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
    "Gather", "GatherElements", "Cast", "Identity", "Constant", "Shape", "ConstantOfShape", "Expand",
    "Dropout", "Pad",
}


def fail(message):
    print(f"models.py: {message}", file=sys.stderr)
    sys.exit(2)


# --- the models ----------------------------------------------------------------------------


def build(name, size):
    """(module in eval mode, example input, einsum FLOPs counted from the sizes)."""
    import torch
    from torch import nn

    if name not in SIZES:
        fail(f"unknown model '{name}' (known: {', '.join(SIZES)})")
    if size not in SIZES[name]:
        fail(f"unknown size '{size}' (known: {', '.join(SIZES[name])})")
    p = SIZES[name][size]
    torch.manual_seed(0)
    if name in VISION:
        module, shape, flops = vision_model(name, p["batch"], p["image"], p.get("layers"),
                                            p.get("frames"))
    elif name == "mlp":
        dims, batch = p["dims"], p["batch"]
        layers = []
        for i in range(len(dims) - 1):
            layers.append(nn.Linear(dims[i], dims[i + 1]))
            if i + 2 < len(dims):
                layers.append(nn.ReLU())
        module = nn.Sequential(*layers)
        shape = [batch, dims[0]]
        flops = sum(2 * batch * dims[i] * dims[i + 1] for i in range(len(dims) - 1))
    elif name == "encoder":
        B, S, d, h, ff = p["B"], p["S"], p["d"], p["h"], p["ff"]
        module = nn.TransformerEncoderLayer(d, h, dim_feedforward=ff, dropout=0.0,
                                            batch_first=True)
        shape = [B, S, d]
        tokens = B * S
        flops = (2 * tokens * d * 3 * d            # in-projection (Q, K, V)
                 + 2 * (2 * B * h * S * S * (d // h))  # Q K^T and P V
                 + 2 * tokens * d * d              # out-projection
                 + 2 * tokens * d * ff + 2 * tokens * ff * d)  # feed-forward
    elif name == "speech":
        B, T, d, h = p["B"], p["T"], p["d"], p["h"]
        module = SpeechEncoder(p["mels"], d, h, T // 2)
        shape = [B, p["mels"], T]
        tokens, S = B * T // 2, T // 2
        flops = (2 * tokens * d * 3 * d + 2 * (2 * B * h * S * S * (d // h))
                 + 2 * tokens * d * d + 2 * tokens * d * 4 * d + 2 * tokens * 4 * d * d)
    elif name == "lstm":
        B, S, d, H, V = p["B"], p["S"], p["d"], p["H"], p["V"]
        module = LstmLm(d, H, V)
        shape = [B, S]
        # Two layers of four gates, each a product with the input and one with the state.
        flops = 2 * B * S * 4 * H * (d + H) + 2 * B * S * 4 * H * (H + H) + 2 * B * S * H * V
    elif name == "gru":
        B, S, d, H = p["B"], p["S"], p["d"], p["H"]
        module = GruEncoder(d, H)
        shape = [B, S, d]
        flops = 2 * (2 * B * S * 3 * H * (d + H)) + 2 * B * S * 2 * H * d + 2 * B * 2 * H * d
    elif name == "detect":
        module = DetectHead(p["C"], 3, [[10, 13], [16, 30], [33, 23]], 8)
        shape = [p["B"], p["C"], p["ny"], p["nx"]]
        flops = 0  # a convolution, no matrix product
    elif name == "masked":
        B, S, d, h = p["B"], p["S"], p["d"], p["h"]
        module = MaskedAttention(d, h, S)
        shape = [B, S, d]
        flops = 2 * B * S * d * 3 * d + 2 * (2 * B * h * S * S * (d // h))
    else:
        B, S, d, h = p["B"], p["S"], p["d"], p["h"]
        module = GptBlock(d, h, S) if name == "gpt" else TinyLm(d, h, S, p["V"])
        shape = [B, S, d] if name == "gpt" else [B, S]
        tokens = B * S
        flops = (2 * tokens * d * 3 * d
                 + 2 * (2 * B * h * S * S * (d // h))
                 + 2 * tokens * d * d
                 + 2 * tokens * d * 4 * d + 2 * tokens * 4 * d * d)
        if name == "lm":
            flops += 2 * tokens * d * p["V"]  # the vocabulary head
    module.eval()
    generator = torch.Generator().manual_seed(1)
    if name in ("lm", "lstm"):
        x = torch.randint(0, p["V"], shape, generator=generator, dtype=torch.int64)
    else:
        x = torch.randn(*shape, generator=generator, dtype=torch.float32)
    return module, x, flops


def vision_model(name, batch, image, layers=None, frames=None):
    """A torchvision model with seeded weights, its input shape and its Linear FLOPs (vit_b_16:
    `layers` of its 12 encoder layers when given; video models: clips of `frames` frames)."""
    import torchvision

    if name == "unet":
        return UNet(3, 8, 4), [batch, 3, image, image], None
    if name in VIDEO:
        if name == "unet3d":
            return UNet3d(1, 8, 3), [batch, 1, frames, image, image], None
        module = Video3d(3, 8, 5) if name == "video" else \
            getattr(torchvision.models.video, name)(weights=None)
        return module.eval(), [batch, 3, frames, image, image], None
    if name == "focus":
        return FocusFlip(3, 16, 4), [batch, 3, image, image], None
    if name in SEGMENTATION:
        return segmentation_model(name), [batch, 3, image, image], None
    if name == "vit_b_16" and layers:  # ViT-B/16's geometry, fewer (identical) layers
        module = torchvision.models.VisionTransformer(
            image_size=image, patch_size=16, num_layers=layers, num_heads=12, hidden_dim=768,
            mlp_dim=3072)
        return module.eval(), [batch, 3, image, image], None
    kwargs = {"weights": None}
    if name == "vit_b_16":
        kwargs["image_size"] = image
    if name == "inception_v3":
        kwargs.update(aux_logits=False, init_weights=True)
    module = getattr(torchvision.models, name)(**kwargs)
    module.eval()
    shape = [batch, 3, image, image]
    return module, shape, None  # counted by module_flops after a forward pass


def segmentation_model(name):
    """torchvision's segmentation model `name` (seeded random weights), returning its "out"."""
    import torchvision
    from torch import nn

    kwargs = {"weights": None, "weights_backbone": None}
    if name != "lraspp_mobilenet_v3_large":
        kwargs["aux_loss"] = False
    inner = getattr(torchvision.models.segmentation, name)(**kwargs)

    class Out(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    return Out().eval()


def conv_norm_pair(cin, cout, conv, norm):
    """Two 3x3 convolutions (`conv`: nn.Conv2d or nn.Conv3d; cin -> cout, then cout -> cout),
    each followed by `norm(cout)` with a seeded gain and shift (away from the identity) and a
    ReLU."""
    from torch import nn
    import torch

    layers = []
    for c in (cin, cout):
        n = norm(cout)
        with torch.no_grad():
            n.weight.uniform_(0.5, 1.5)
            n.bias.uniform_(-0.5, 0.5)
        layers += [conv(c, cout, 3, padding=1), n, nn.ReLU()]
    return nn.Sequential(*layers)


def unet_forward(net, x):
    """The two-level U-Nets' forward pass: encoder pairs with pooling, the middle pair, decoder
    pairs after up-sampling with the skip connections concatenated, smoothing, a strided
    convolution back, the classifier."""
    import torch

    e1 = net.enc1(x)
    e2 = net.enc2(net.pool(e1))
    m = net.mid(net.pool(e2))
    d2 = net.dec2(torch.cat([net.up2(m), e2], 1))
    d1 = net.dec1(torch.cat([net.up1(d2), e1], 1))
    return net.head(net.down(net.smooth(d1)))


def UNet(channels, width, classes):  # noqa: N802 (a class factory: torch is imported lazily)
    """A two-level U-Net: 3x3 conv pairs (each conv, GroupNorm of 4 groups, ReLU), max pooling
    down; up by a 2x2 stride-2 ConvTranspose2d, then by nearest and bilinear Upsample; skip
    connections concatenated; a 1x1 classifier."""
    from torch import nn

    def pair(cin, cout):
        return conv_norm_pair(cin, cout, nn.Conv2d, lambda c: nn.GroupNorm(4, c))

    class UNetImpl(nn.Module):
        def __init__(self):
            super().__init__()
            w = width
            self.enc1, self.enc2, self.mid = pair(channels, w), pair(w, 2 * w), pair(2 * w, 4 * w)
            self.pool = nn.MaxPool2d(2)
            self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
            self.dec2 = pair(4 * w, 2 * w)
            self.up1 = nn.Upsample(scale_factor=2, mode="nearest")
            self.dec1 = pair(3 * w, w)
            self.smooth = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.down = nn.Conv2d(w, w, 3, stride=2, padding=1)
            self.head = nn.Conv2d(w, classes, 1)

        def forward(self, x):
            return unet_forward(self, x)

    return UNetImpl().eval()


def Video3d(channels, width, classes):  # noqa: N802 (a class factory: torch is imported lazily)
    """A small 3-D CNN for clips: a (3, 5, 5) stem convolution of stride (1, 2, 2) with
    BatchNorm3d and ReLU, a ceil-mode max pool over (2, 3, 3), an R(2+1)D residual block (a (1, 3,
    3) spatial then a (3, 1, 1) temporal convolution), a grouped 3x3x3 convolution of stride 2,
    an average pool (pads not counted), a depthwise convolution dilated in time, global average
    pooling and a linear classifier."""
    from torch import nn
    import torch

    class Video3dImpl(nn.Module):
        def __init__(self):
            super().__init__()
            w = width
            norm = nn.BatchNorm3d(w)
            with torch.no_grad():  # away from the identity: seeded statistics
                norm.running_mean.uniform_(-0.2, 0.2)
                norm.running_var.uniform_(0.5, 1.5)
            self.stem = nn.Sequential(
                nn.Conv3d(channels, w, (3, 5, 5), stride=(1, 2, 2), padding=(1, 2, 2), bias=False),
                norm, nn.ReLU())
            self.pool = nn.MaxPool3d((2, 3, 3), stride=2, padding=(0, 1, 1), ceil_mode=True)
            self.spatial = nn.Conv3d(w, w, (1, 3, 3), padding=(0, 1, 1))
            self.temporal = nn.Conv3d(w, w, (3, 1, 1), padding=(1, 0, 0))
            self.down = nn.Conv3d(w, 2 * w, 3, stride=2, padding=1, groups=2)
            self.avg = nn.AvgPool3d((2, 3, 3), stride=(1, 2, 2), padding=1, count_include_pad=False)
            self.dw = nn.Conv3d(2 * w, 2 * w, 3, padding=(2, 1, 1), dilation=(2, 1, 1),
                                groups=2 * w)
            self.gap = nn.AdaptiveAvgPool3d(1)
            self.head = nn.Linear(2 * w, classes)

        def forward(self, x):
            x = self.pool(self.stem(x))
            x = torch.relu(x + self.temporal(torch.relu(self.spatial(x))))
            x = self.avg(torch.relu(self.down(x)))
            return self.head(self.gap(torch.relu(self.dw(x))).flatten(1))

    return Video3dImpl().eval()


def UNet3d(channels, width, classes):  # noqa: N802 (a class factory: torch is imported lazily)
    """A two-level 3-D U-Net for volumes (medical-imaging segmentation): 3x3x3 conv pairs (each
    conv, InstanceNorm3d with affine parameters, ReLU), 3-D max pooling down; up by a 2x2x2
    stride-2 ConvTranspose3d, then by a 3x3x3 stride-2 one (padding 1, output_padding 1: its
    depth taps overlap); skip connections concatenated; a trilinear Upsample and a stride-2
    3x3x3 convolution back; a 1x1x1 classifier."""
    from torch import nn

    def pair(cin, cout):
        return conv_norm_pair(cin, cout, nn.Conv3d, lambda c: nn.InstanceNorm3d(c, affine=True))

    class UNet3dImpl(nn.Module):
        def __init__(self):
            super().__init__()
            w = width
            self.enc1, self.enc2, self.mid = pair(channels, w), pair(w, 2 * w), pair(2 * w, 4 * w)
            self.pool = nn.MaxPool3d(2)
            self.up2 = nn.ConvTranspose3d(4 * w, 2 * w, 2, stride=2)
            self.dec2 = pair(4 * w, 2 * w)
            self.up1 = nn.ConvTranspose3d(2 * w, w, 3, stride=2, padding=1, output_padding=1)
            self.dec1 = pair(2 * w, w)
            self.smooth = nn.Upsample(scale_factor=2, mode="trilinear", align_corners=False)
            self.down = nn.Conv3d(w, w, 3, stride=2, padding=1)
            self.head = nn.Conv3d(w, classes, 1)

        def forward(self, x):
            return unet_forward(self, x)

    return UNet3dImpl().eval()


def DetectHead(channels, classes, anchors, stride):  # noqa: N802 (torch is imported lazily)
    """YOLOv5's Detect layer as it exports with inplace=True: a 1x1 convolution to anchors x (5 +
    classes) outputs per cell, viewed [B, A, ny, nx, 5 + classes], the sigmoid, then the boxes
    decoded in place by slice assignment (ScatterND of computed tensors): xy = (2 s - 0.5 + grid)
    x stride, wh = (2 s)^2 x anchor; flattened to [B, A ny nx, 5 + classes]."""
    from torch import nn
    import torch

    class DetectImpl(nn.Module):
        def __init__(self):
            super().__init__()
            self.na, self.no = len(anchors), classes + 5
            self.conv = nn.Conv2d(channels, self.na * self.no, 1)
            self.register_buffer("anchor_grid",
                                 torch.tensor(anchors, dtype=torch.float32).view(1, -1, 1, 1, 2))

        def forward(self, x):
            b, _, ny, nx = x.shape
            y = self.conv(x).view(b, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)
            y = y.contiguous().sigmoid()
            yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
            grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()
            y[..., 0:2] = (y[..., 0:2] * 2 - 0.5 + grid) * stride
            y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid
            return y.view(b, -1, self.no)

    return DetectImpl().eval()


def FocusFlip(channels, width, classes):  # noqa: N802 (a class factory: torch is imported lazily)
    """YOLOv5's Focus stem (space to depth: the four pixel phases x[..., i::2, j::2], strided
    Slices, concatenated on channels), a 3x3 conv, ReLU, a 1x1 classifier; run on the image and
    on its mirror image (torch.flip: Slices of step -1), the second result flipped back and the
    two averaged (test-time augmentation)."""
    from torch import nn
    import torch

    class FocusFlipImpl(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(4 * channels, width, 3, padding=1)
            self.head = nn.Conv2d(width, classes, 1)

        def net(self, x):
            x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2],
                           x[..., 1::2, 1::2]], 1)
            return self.head(torch.relu(self.conv(x)))

        def forward(self, x):
            return 0.5 * (self.net(x) + self.net(x.flip(3)).flip(3))

    return FocusFlipImpl().eval()


def module_flops(module, x):
    """(Linear FLOPs, Conv2d FLOPs) of one forward pass, from the layers' sizes (hooks)."""
    import torch
    from torch import nn

    counts = {"linear": 0, "conv": 0}

    def linear_hook(m, inputs, output):
        counts["linear"] += 2 * output.numel() * m.in_features

    def conv_hook(m, inputs, output):
        flops = 2 * output.numel() * (m.in_channels // m.groups) * math.prod(m.kernel_size)
        counts["conv"] += flops + (output.numel() if m.bias is not None else 0)

    hooks = []
    for m in module.modules():
        if isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
        elif isinstance(m, (nn.Conv2d, nn.Conv3d)):
            hooks.append(m.register_forward_hook(conv_hook))
    with torch.no_grad():
        module(x)
    for h in hooks:
        h.remove()
    return counts["linear"], counts["conv"]


def profiled_matmul_flops(module, x):
    """FLOPs of every matrix product of one forward pass (aten::mm, addmm, bmm, as PyTorch's
    profiler counts them: 2 M N K, a bias not included)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], with_flops=True) as p:
        module(x)
    return sum(e.flops for e in p.key_averages() if e.key in ("aten::mm", "aten::addmm", "aten::bmm"))


def gpt_block_class():
    import torch
    from torch import nn
    from torch.nn import functional as F

    class GptBlockImpl(nn.Module):
        """Pre-LayerNorm GPT decoder block with causal self-attention and a GELU MLP."""

        def __init__(self, d, h, seq):
            super().__init__()
            self.h = h
            self.hd = d // h
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)
            # True above the diagonal: key positions after the query are masked.
            self.register_buffer("causal",
                                 torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

        def forward(self, x):
            B, S, d = x.shape
            hd = self.hd
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(B, S, self.h, hd).transpose(1, 2)
            k = k.view(B, S, self.h, hd).transpose(1, 2)
            v = v.view(B, S, self.h, hd).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(self.causal, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, S, d)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc(self.ln2(x))))

    return GptBlockImpl


def SpeechEncoder(mels, d, h, frames):  # noqa: N802 (a class factory: torch is imported lazily)
    """A Whisper-style audio encoder: two Conv1d over the mel spectrogram (the second of stride
    2) with GELU, positional embeddings, one pre-LayerNorm transformer layer, a final LayerNorm."""
    from torch import nn
    import torch

    class SpeechEncoderImpl(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(mels, d, 3, padding=1)
            self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
            self.positions = nn.Parameter(torch.randn(frames, d) * 0.02)
            self.layer = nn.TransformerEncoderLayer(d, h, 4 * d, dropout=0.0, activation="gelu",
                                                    batch_first=True, norm_first=True)
            self.ln = nn.LayerNorm(d)

        def forward(self, x):
            x = nn.functional.gelu(self.conv2(nn.functional.gelu(self.conv1(x))))
            return self.ln(self.layer(x.transpose(1, 2) + self.positions))

    return SpeechEncoderImpl()


def MaskedAttention(d, h, seq):  # noqa: N802 (a class factory: torch is imported lazily)
    """Self-attention whose key padding mask is computed from the input (a token is padding when
    its first feature is below -0.8: a computed Less), applied with masked_fill(-inf) (Where of a
    computed condition); position ids counted over the tokens that are not padding (CumSum of
    the mask, Gather of a position embedding at computed indices); tokens kept where not padding
    and their second feature >= -2 (Not, And, GreaterOrEqual), the input passed through
    elsewhere (Where of two computed branches)."""
    from torch import nn
    import torch

    class MaskedAttentionImpl(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.positions = nn.Embedding(seq, d)

        def forward(self, x):
            B, S, _ = x.shape
            pad = x[:, :, 0] < -0.8
            ids = ((~pad).long().cumsum(-1) - 1).clamp(min=0)  # HF-style position ids
            x = x + self.positions(ids)
            q, k, v = self.qkv(x).split(d, 2)
            q, k, v = (t.view(B, S, h, d // h).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
            att = torch.softmax(att.masked_fill(pad[:, None, None, :], float("-inf")), -1)
            y = (att @ v).transpose(1, 2).reshape(B, S, d)
            keep = (~pad) & (x[:, :, 1] >= -2.0)  # x: with the positions added
            return torch.where(keep[:, :, None], y, x)

    return MaskedAttentionImpl()


def GptBlock(d, h, seq):  # noqa: N802 (a class factory: torch is imported lazily)
    return gpt_block_class()(d, h, seq)


def TinyLm(d, h, seq, vocab):  # noqa: N802 (a class factory: torch is imported lazily)
    """Token and position embeddings, one GPT block, a final LayerNorm, the vocabulary head."""
    import torch
    from torch import nn

    class TinyLmImpl(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(vocab, d)
            self.positions = nn.Embedding(seq, d)
            self.block = GptBlock(d, h, seq)
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, x):
            pos = torch.arange(x.shape[1]).unsqueeze(0)
            return self.head(self.ln(self.block(self.tokens(x) + self.positions(pos))))

    return TinyLmImpl()


def LstmLm(d, hidden, vocab):  # noqa: N802 (a class factory: torch is imported lazily)
    """Token embeddings, a two-layer LSTM (batch first), the vocabulary head."""
    from torch import nn

    class LstmLmImpl(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(vocab, d)
            self.lstm = nn.LSTM(d, hidden, num_layers=2, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, x):
            return self.head(self.lstm(self.tokens(x))[0])

    return LstmLmImpl()


def GruEncoder(d, hidden):  # noqa: N802 (a class factory: torch is imported lazily)
    """A bidirectional GRU (batch first) whose outputs and final states are projected back to d
    and added: y = out W^T + (h_fwd, h_bwd) U^T, broadcast over the sequence."""
    from torch import nn

    class GruEncoderImpl(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(d, hidden, batch_first=True, bidirectional=True)
            self.out = nn.Linear(2 * hidden, d)
            self.state = nn.Linear(2 * hidden, d)

        def forward(self, x):
            y, h = self.gru(x)
            states = h.transpose(0, 1).reshape(x.shape[0], 1, 2 * hidden)
            return self.out(y) + self.state(states)

    return GruEncoderImpl()


def export(name, size, outdir):
    import numpy as np
    import torch

    module, x, einsum_flops = build(name, size)
    conv_flops = 0
    if einsum_flops is None:
        einsum_flops, conv_flops = module_flops(module, x)
    if name == "swin_t":  # F.linear and attention products, which no module hook sees
        einsum_flops = profiled_matmul_flops(module, x)
    os.makedirs(outdir, exist_ok=True)
    with torch.no_grad():
        y = module(x)
    torch.onnx.export(module, (x,), os.path.join(outdir, "model.onnx"), opset_version=14,
                      do_constant_folding=True, input_names=["x"], output_names=["y"])
    np.save(os.path.join(outdir, "x.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(outdir, "y.npy"), y.numpy().astype(np.float32))
    params = sum(p.numel() for p in module.parameters())
    with open(os.path.join(outdir, "flops.json"), "w") as f:
        json.dump({"einsum_flops": einsum_flops, "conv_flops": conv_flops, "params": params}, f)
        f.write("\n")


# --- independent FLOP counter --------------------------------------------------------------


def shapes_of(model):
    """name -> static shape (list of ints) of every tensor onnx's shape inference knows, helped
    where a Resize's sizes are computed from Shape (onnx 1.12 does not propagate them): those
    sizes are evaluated with numpy, the Resize's output shape annotated, and the inference rerun."""
    import onnx

    while True:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        shapes = known_shapes(inferred.graph)
        annotated = resize_shapes(inferred.graph, shapes)
        if not annotated:
            return shapes
        model = inferred
        for name, dims in annotated.items():
            model.graph.value_info.append(
                onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, dims))


def known_shapes(g):
    from onnx import numpy_helper

    shapes = {}
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        dims = []
        for dim in t.shape.dim:
            dims.append(dim.dim_value if dim.HasField("dim_value") else None)
        shapes[vi.name] = dims
    for init in g.initializer:
        shapes[init.name] = list(numpy_helper.to_array(init).shape)
    return shapes


def resize_shapes(g, shapes):
    """Output shapes of the Resize nodes onnx left unknown whose sizes or scales numpy can
    evaluate from constants and static shapes (Shape, Constant, Slice, Gather, Concat, Cast,
    Unsqueeze, Mul, Div, Floor)."""
    import numpy as np
    from onnx import numpy_helper

    values = {init.name: numpy_helper.to_array(init) for init in g.initializer}

    def ints(node, i):
        return values[node.input[i]].astype(np.int64) if len(node.input) > i else None

    for node in g.node:
        ins = [values.get(i) for i in node.input if i]
        op, out = node.op_type, node.output[0]
        attrs = {a.name: a for a in node.attribute}
        if op == "Constant":
            values[out] = numpy_helper.to_array(attrs["value"].t)
        elif op == "Shape" and all(d is not None for d in shapes.get(node.input[0], [None])):
            values[out] = np.array(shapes[node.input[0]], dtype=np.int64)
        elif any(v is None for v in ins) or not ins:
            continue
        elif op == "Slice":
            starts, ends = ints(node, 1), ints(node, 2)
            axes = ints(node, 3) if len(node.input) > 3 and node.input[3] else range(len(starts))
            index = [slice(None)] * ins[0].ndim
            for a, b, e in zip(axes, starts, ends):
                index[a] = slice(b, e)
            values[out] = ins[0][tuple(index)]
        elif op == "Gather":
            values[out] = np.take(ins[0], ins[1], axis=attrs["axis"].i if "axis" in attrs else 0)
        elif op == "Concat":
            values[out] = np.concatenate(ins, axis=attrs["axis"].i)
        elif op == "Unsqueeze":
            values[out] = np.expand_dims(ins[0], tuple(ins[1].tolist()))
        elif op in ("Cast", "Floor", "Mul", "Div"):
            fn = {"Cast": lambda a: a, "Floor": np.floor, "Mul": np.multiply, "Div": np.divide}
            values[out] = fn[op](*ins)
    annotated = {}
    for node in g.node:
        out = node.output[0]
        if node.op_type != "Resize" or out in shapes and None not in shapes[out]:
            continue
        x = shapes.get(node.input[0])
        sizes = values.get(node.input[3]) if len(node.input) > 3 and node.input[3] else None
        scales = values.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if x is None or None in x:
            continue
        if sizes is not None and sizes.size:
            annotated[out] = [int(d) for d in sizes]
        elif scales is not None and scales.size:
            annotated[out] = [int(math.floor(d * float(f))) for d, f in zip(x, scales)]
    return annotated


def numel(shape, what):
    if shape is None or any(d is None for d in shape):
        fail(f"no static shape for {what}")
    return math.prod(shape)


def node_flops(node, shapes, constant=frozenset()):
    def shape(i=None, out=None):
        name = node.input[i] if out is None else node.output[out]
        s = shapes.get(name)
        if s is None or any(d is None for d in s):
            fail(f"no static shape for '{name}' ({node.op_type} node '{node.name}')")
        return s

    def attr(key, default):
        for a in node.attribute:
            if a.name == key:
                import onnx
                return onnx.helper.get_attribute_value(a)
        return default

    op = node.op_type
    if op in FREE:
        return 0
    out = shape(out=0)
    n_out = numel(out, node.output[0])
    if op in ELEMENTWISE:
        return ELEMENTWISE[op] * n_out
    if op == "Where" and node.input[0] not in constant:
        return n_out  # a computed condition: one select per element
    if op == "Where":
        computed = sum(1 for i in node.input[1:] if i not in constant)
        return (2 if computed == 1 else 3) * n_out
    if op in ("Max", "Min"):  # one maximum / minimum per operand after the first
        return (len(node.input) - 1) * n_out
    if op == "TopK":  # Values and Indices: k comparisons per input element each
        x = shape(0)
        axis = attr("axis", -1)
        return 2 * n_out * x[axis]
    if op == "MatMul":
        a = shape(0)
        return 2 * n_out * a[-1]
    if op == "Gemm":
        a = shape(0)
        k = a[0] if attr("transA", 0) else a[1]
        flops = 2 * n_out * k
        has_c = len(node.input) > 2 and node.input[2] != ""
        if has_c:
            flops += n_out
        if attr("alpha", 1.0) != 1.0:
            flops += n_out
        if has_c and attr("beta", 1.0) != 1.0 and node.input[2] not in constant:
            flops += n_out
        return flops
    if op == "Einsum":  # 2 per point of the iteration space (every label's extent)
        terms = attr("equation", b"").decode().replace(" ", "").split("->")[0].split(",")
        extents = {}
        for i, term in enumerate(terms):
            for label, extent in zip(term, shape(i)):
                extents[label] = extent
        return 2 * math.prod(extents.values())
    if op == "Conv":
        w = shape(1)  # [OC, C / group, K...] (1-D or 2-D)
        flops = 2 * n_out * math.prod(w[1:])
        return flops + (n_out if len(node.input) > 2 and node.input[2] != "" else 0)
    if op == "ConvTranspose":
        w = shape(1)  # [C, OC / group, K...]: each input pixel meets OC / group x K... weights
        macs = numel(shape(0), node.input[0]) * math.prod(w[1:])
        flops = 2 * macs + (n_out if len(node.input) > 2 and node.input[2] != "" else 0)
        if len(w) == 5:  # 3-D: the sums of depth taps that reach the same depths
            kd, stride, dil = w[2], attr("strides", [1, 1, 1])[0], attr("dilations", [1, 1, 1])[0]
            flops += (kd - 1) * n_out if (kd - 1) * dil + 1 > stride else 0
        return flops
    if op == "LRN":  # square, the channel window's mean (size), scale, add, power, product
        return (attr("size", 1) + 5) * n_out
    if op == "ScatterND":  # slice assignment moves data; a reduction combines each update
        reduction = attr("reduction", b"none")
        return 0 if reduction in (b"none", "none") else numel(shape(2), node.input[2])
    if op in ("Resize", "Upsample"):
        mode = attr("mode", b"nearest")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        x = shape(0)
        if len(x) == 5 and mode == "linear" and out[2] != x[2]:  # the depth's blend first
            return RESIZE[mode] * n_out + 3 * numel(x[:2] + [out[2]] + x[3:], node.input[0])
        return RESIZE[mode] * n_out
    if op in ("MaxPool", "AveragePool"):
        k = attr("kernel_shape", None)
        if len(k) < 3:
            return n_out * math.prod(k)
        # 3-D: each depth tap pooled in 2-D, the taps combined, an average divided once more
        combine = k[0] - 1 if op == "MaxPool" else (k[0] if k[0] > 1 else 0)
        return n_out * (math.prod(k) + combine)
    if op == "GlobalAveragePool":
        return numel(shape(0), node.input[0]) + n_out
    if op == "GlobalMaxPool":
        return numel(shape(0), node.input[0])
    if op == "ReduceMean":
        return numel(shape(0), node.input[0]) + n_out
    if op == "ReduceMin" or op == "ReduceL2":
        return 2 * numel(shape(0), node.input[0]) + n_out
    if op == "ReduceSumSquare":
        return 2 * numel(shape(0), node.input[0])
    if op == "ArgMax":
        return numel(shape(0), node.input[0])
    if op == "ArgMin":  # the negation, then ArgMax
        return 2 * numel(shape(0), node.input[0])
    if op == "ReduceL1":  # abs, then the sum
        return 2 * numel(shape(0), node.input[0])
    if op == "ReduceLogSumExp":  # max, subtract, exp, sum per input; log, add per output
        return 4 * numel(shape(0), node.input[0]) + 2 * n_out
    if op == "ReduceSum" or op == "ReduceMax":
        return numel(shape(0), node.input[0])
    if op in ("LSTM", "GRU", "RNN"):
        return recurrent_flops(node, shape(0), attr, constant)
    if op == "InstanceNormalization":
        x = shape(0)
        return 7 * numel(x, node.input[0]) + 4 * x[0] * x[1]
    if op == "LayerNormalization":
        x = shape(0)
        axis = attr("axis", -1)
        axis = axis + len(x) if axis < 0 else axis
        n = numel(x, node.input[0])
        rows = math.prod(x[:axis])
        return 7 * n + 4 * rows
    fail(f"no FLOP convention for op {op} (node '{node.name}')")


def recurrent_flops(node, x, attr, constant):
    """LSTM, GRU and RNN FLOPs by the docstring's convention (X [S, B, I], or [B, S, I] with
    layout 1)."""
    op = node.op_type
    given = [i < len(node.input) and node.input[i] != "" for i in range(8)]
    steps, batch = (x[1], x[0]) if attr("layout", 0) else (x[0], x[1])
    hidden, inputs = attr("hidden_size", None), x[2]
    direction = attr("direction", b"forward")
    dirs = 2 if (direction.decode() if isinstance(direction, bytes) else direction) == \
        "bidirectional" else 1
    defaults = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
    per_dir = len(defaults[op])
    acts = [a.decode() if isinstance(a, bytes) else a for a in attr("activations", [])]
    acts = acts or defaults[op] * dirs
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    e = batch * hidden  # elements of one step's state
    clip = 2 * e if attr("clip", None) is not None else 0
    total = 0
    for d in range(dirs):
        f, g, *h = (ELEMENTWISE[a] * e for a in acts[d * per_dir:(d + 1) * per_dir])
        total += gates * 2 * steps * batch * hidden * inputs  # input projections
        total += gates * steps * batch * hidden if given[3] else 0  # their biases
        step = gates * (2 * e * hidden + e)  # recurrent products, added to the projections
        if op == "LSTM":
            step += 3 * f + g + h[0] + 4 * e + (6 * e if given[7] else 0) + 5 * clip
        elif op == "GRU":
            lbr = attr("linear_before_reset", 0)
            step += 2 * f + g + e + (e if lbr and given[3] else 0) + 3 * e + 3 * clip
        else:
            step += f + clip
        total += steps * step
    return total


def onnx_flops(path, ops=("all",)):
    """Per entry of ops, the FLOPs of the ONNX file's nodes of that op type ("all": every node)."""
    import onnx

    model = onnx.load(path)
    shapes = shapes_of(model)
    g = model.graph
    constant = {init.name for init in g.initializer}
    totals = dict.fromkeys(ops, 0)
    for node in g.node:  # ONNX requires topological order
        inputs = [i for i in node.input if i]
        if node.op_type == "Shape" or all(i in constant for i in inputs):
            constant.update(o for o in node.output if o)
            continue
        flops = node_flops(node, shapes, constant)
        for op in {"all", node.op_type} & totals.keys():
            totals[op] += flops
    return [totals[op] for op in ops]


def op_types(path):
    import collections

    import onnx

    model = onnx.load(path)
    return collections.Counter(node.op_type for node in model.graph.node)


def main(argv):
    if len(argv) >= 1 and argv[0] == "list":
        for name, sizes in SIZES.items():
            for size, p in sizes.items():
                print(name, size, json.dumps(p))
        return 0
    if len(argv) == 4 and argv[0] == "export":
        export(argv[1], argv[2], argv[3])
        return 0
    if len(argv) >= 2 and argv[0] == "onnx-flops":
        for flops in onnx_flops(argv[1], argv[2:] or ["all"]):
            print(flops)
        return 0
    if len(argv) == 2 and argv[0] == "op-types":
        for op, count in sorted(op_types(argv[1]).items()):
            print(op, count)
        return 0
    print("\n\n".join(__doc__.split("\n\n")[1:3]), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
