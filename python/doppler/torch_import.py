"""doppler.from_torch: a PyTorch module as a blocked graph, through an ONNX export.

torch is imported when from_torch is called, never by `import doppler`.
"""
import inspect
import os
import tempfile

# The opset of the project's own exported test models (tests/onnx/models.py); the importer reads
# 7..17 (docs/onnx.md).
DEFAULT_OPSET = 14


def _input_names(module, count):
    """The forward's positional parameter names for `count` inputs (x for forward(self, x))."""
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:count]]
    if len(names) < count or len(set(names)) < count:
        names = [f"input{i}" for i in range(count)]
    return names


def from_torch(module, example_inputs, devices=4, dtype="f32", input_shapes=None,
               opset=DEFAULT_OPSET):
    """A blocked Graph of a torch.nn.Module, exported with torch.onnx.export.

    ``example_inputs``: a tensor or a tuple of tensors, the forward's positional arguments; their
    shapes are the model's (the export is static). The module is exported in eval mode (its mode
    is restored) with constant folding, to a temporary ONNX file that is always removed, then
    imported as ``import_onnx(file, devices=devices, dtype=dtype, input_shapes=input_shapes)``
    does: the same checks, the same graph, the same ValueError for what the importer refuses
    (naming the module instead of the temporary file). The graph's inputs are named after the
    forward's parameters (``x`` for ``forward(self, x)``), the names ``input_shapes`` uses.
    Errors of the export itself (an operator torch cannot export) are torch's.
    """
    try:
        import torch  # lazily: `import doppler` must not need torch
    except ImportError as e:
        raise ImportError(f"from_torch needs PyTorch (Debian: python3-torch): {e}") from e

    from . import import_onnx

    if isinstance(example_inputs, torch.Tensor):
        args = (example_inputs,)
    elif isinstance(example_inputs, (tuple, list)) and all(
            isinstance(t, torch.Tensor) for t in example_inputs):
        args = tuple(example_inputs)
    else:
        raise ValueError("from_torch: example_inputs must be a tensor or a tuple of tensors")
    if not args:
        raise ValueError("from_torch: example_inputs is empty")
    what = f"from_torch({type(module).__name__})"
    with tempfile.TemporaryDirectory(prefix="doppler-torch-") as tmp:
        # The file's stem names the graph: the module's class (an identifier, a safe file name).
        path = os.path.join(tmp, type(module).__name__ + ".onnx")
        with torch.no_grad():
            torch.onnx.export(module, args, path, opset_version=opset, do_constant_folding=True,
                              input_names=_input_names(module, len(args)),
                              training=torch.onnx.TrainingMode.EVAL)
        try:
            return import_onnx(path, devices=devices, dtype=dtype,
                               input_shapes=dict(input_shapes or {}))
        except ValueError as e:
            raise ValueError(str(e).replace(path, what)) from None
