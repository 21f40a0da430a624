"""convc-models: whole models, compiled here and checked on the GPU machine.

  convc-models prepare --out BUNDLE [--target sm_90a] [--precision tf32] [--only resnet50,...]
                       [--random-weights SEED]
  tools/device/model_check.sh BUNDLE            # on the GPU machine

`prepare` compiles the real networks the `onnx` wheel ships with their expected outputs
(onnx/backend/test/data/light/: ResNet-50, DenseNet-121, Inception v1/v2, SqueezeNet, VGG-19,
AlexNet, ZFNet-512, ShuffleNet), each from its .onnx file through `convc`, and writes per
model the vmfb, the input (ONNX's own backend-test input: arange(n)/n in the input's shape),
the expected output (.npy) and, in manifest.json, which conv dispatches took convc and why
the others did not. tools/gpu/model_check.py runs them. The light models build their weights
from single values (ConstantOfShape): their shipped outputs are a near-uniform softmax that a
wrong channel order could still match. `--random-weights SEED` adds each model with random
weights and a random input (`NAME_random`), its expected output from ONNX Runtime's CPU
provider. `--decoders SEED` adds the DECODERS: upsampling stacks of transposed convs
(ConvTranspose as U-Net, DCGAN and FCN decoders use it) built here with random weights, against
ONNX Runtime's CPU result on a random input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np

from ..compiler.driver import CompileOptions, compile_file, prepare_input
from ..compiler.errors import ConvcError
from ..compiler.frontends import read_model
from ..compiler.structure import stream_structure
from ..passes.target import get_target
from .suite import git_commit

LIGHT_MODELS = ("resnet50", "densenet121", "inception_v1", "inception_v2", "squeezenet", "vgg19",
                "bvlc_alexnet", "zfnet512", "shufflenet")

# rel. L2 bound against the shipped fp32 outputs, per --precision (docs/models.md, Precision)
TOLERANCE = {"fp32": 1e-4, "tf32": 1e-2, "f16": 5e-2, "bf16": 5e-2}


def light_dir() -> str:
    try:
        import onnx
    except ImportError:
        raise ConvcError("the ONNX models need the onnx package: python3 -m pip install onnx (or, in the convc checkout, python3 -m pip install -e '.[onnx]')") from None
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def model_io(path: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The input ONNX's backend test feeds a light model, its shipped expected output, and
    the name of the function its import exports (the graph's name)."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    inits = {i.name for i in model.graph.initializer}
    (inp,) = [i for i in model.graph.input if i.name not in inits]
    shape = tuple(d.dim_value or 1 for d in inp.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    x = (np.arange(n).reshape(shape) / n).astype(np.float32)
    t = onnx.TensorProto()
    with open(os.path.splitext(path)[0] + "_output_0.pb", "rb") as f:
        t.ParseFromString(f.read())
    return x, numpy_helper.to_array(t), model.graph.name


def randomized(path: str, out_path: str, seed: int = 0) -> None:
    """The model at `path` with every float initializer redrawn at random (seeded), written to
    out_path: the light models ship constant-like weights (their expected outputs are a near-
    uniform softmax), which would hide a wrong channel order or window. Conv/Gemm weights are
    scaled by 1/sqrt(fan-in) and BatchNorm scales and variances kept positive, so activations
    stay in range through the whole network."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    # the light models build their weights with ConstantOfShape (one value repeated): those
    # become initializers of that shape, redrawn below with the others
    shapes = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    listed = {i.name for i in model.graph.input}     # old IR versions list initializers as inputs too
    for node in [n for n in model.graph.node if n.op_type == "ConstantOfShape" and n.input[0] in shapes]:
        value = next((numpy_helper.to_array(a.t) for a in node.attribute if a.name == "value"),
                     np.zeros(1, np.float32))
        a = np.full([int(d) for d in shapes[node.input[0]]], value.reshape(-1)[0], value.dtype)
        model.graph.initializer.append(numpy_helper.from_array(a, node.output[0]))
        if shapes.keys() & listed:
            model.graph.input.append(onnx.helper.make_tensor_value_info(
                node.output[0], onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
        model.graph.node.remove(node)
    used = {i for n in model.graph.node for i in n.input}
    for init in [i for i in model.graph.initializer if i.name not in used]:
        model.graph.initializer.remove(init)
        for inp in [i for i in model.graph.input if i.name == init.name]:
            model.graph.input.remove(inp)
    role = {}
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            if node.op_type in ("Conv", "Gemm", "MatMul") and i == 1:
                role[name] = "weight"
            elif node.op_type == "BatchNormalization" and i in (1, 4):
                role[name] = "positive"
    rng = np.random.default_rng(seed)
    for k, init in enumerate(model.graph.initializer):
        a = numpy_helper.to_array(init)
        if a.dtype not in (np.float32, np.float16) or a.size == 0:
            continue
        kind = role.get(init.name)
        if kind == "weight":
            fan_in = a.size // a.shape[0] if a.ndim > 1 else max(a.size, 1)
            new = rng.standard_normal(a.shape) * np.sqrt(2.0 / fan_in)
        elif kind == "positive":
            new = rng.uniform(0.5, 1.5, a.shape)
        else:
            new = rng.standard_normal(a.shape) * 0.1
        model.graph.initializer[k].CopyFrom(numpy_helper.from_array(new.astype(a.dtype), init.name))
    onnx.save(model, out_path)


# name: (batch, input channels, input size, [(out channels, kernel, stride, pad, output padding)]):
# every ConvTranspose followed by a bias (its own) and a ReLU, a 3x3 conv after the last
DECODERS = {
    "unet_up_k2": (4, 256, 16, [(128, 2, 2, 0, 0), (64, 2, 2, 0, 0)]),
    "dcgan_up_k4": (8, 256, 8, [(128, 4, 2, 1, 0), (64, 4, 2, 1, 0), (32, 4, 2, 1, 0)]),
    "fcn_up_k3": (2, 128, 28, [(64, 3, 2, 1, 1), (32, 3, 2, 1, 1)]),
}


def decoder_model(path: str, name: str, seed: int) -> np.ndarray:
    """DECODERS[name] as an ONNX model with random weights, written to path; returns a random
    input for it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    batch, c, size, layers = DECODERS[name]
    rng = np.random.default_rng(seed)
    inits, nodes, x = [], [], "x"
    for i, (f, k, s, p, op) in enumerate(layers):
        w = (rng.standard_normal((c, f, k, k)) * np.sqrt(2.0 / (c * k * k / (s * s)))).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(rng.standard_normal(f).astype(np.float32) * 0.1, f"b{i}")]
        attrs = dict(strides=[s, s], pads=[p] * 4, kernel_shape=[k, k]) | ({"output_padding": [op, op]} if op else {})
        nodes += [helper.make_node("ConvTranspose", [x, f"w{i}", f"b{i}"], [f"t{i}"], **attrs),
                  helper.make_node("Relu", [f"t{i}"], [f"r{i}"])]
        x, c = f"r{i}", f
    inits.append(numpy_helper.from_array((rng.standard_normal((3, c, 3, 3)) * 0.1).astype(np.float32), "wo"))
    nodes.append(helper.make_node("Conv", [x, "wo"], ["y"], pads=[1, 1, 1, 1]))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, DECODERS[name][1], size, size])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    onnx.save(onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])), path)
    return rng.standard_normal((batch, DECODERS[name][1], size, size)).astype(np.float32)


def onnxruntime_output(path: str, x: np.ndarray) -> np.ndarray:
    """The model's output on x through ONNX Runtime's CPU provider: a reference independent of
    IREE and convc."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise ConvcError("the random-weight check needs onnxruntime: python3 -m pip install onnxruntime") from None
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (inp,) = [i.name for i in session.get_inputs()]
    return session.run(None, {inp: x})[0]


def _stock_structure(src: str, target: str):
    """Stock IREE's program for the same model (no convc pass), read at its stream phase."""
    with tempfile.TemporaryDirectory(prefix="convc-stock-") as tmp:
        path = os.path.join(tmp, "model.mlir")
        with open(path, "w") as f:
            f.write(prepare_input(read_model(src, tmp), get_target(target)))
        return stream_structure(path)


def prepare_model(src: str, name: str, out: str, target: str, precision: str, x: np.ndarray,
                  expected: np.ndarray, function: str, reference: str) -> dict:
    """One bundle entry: the model compiled, its input and expected output saved."""
    np.save(os.path.join(out, f"{name}.input.npy"), x)
    np.save(os.path.join(out, f"{name}.expected.npy"), expected)
    entry = {"name": name, "function": function, "input_shape": list(x.shape), "output_shape": list(expected.shape),
             "reference": reference}
    try:
        res = compile_file(src, os.path.join(out, f"{name}.vmfb"),
                           CompileOptions(target=target, precision=precision, tuning_cache="none"))
    except ConvcError as e:
        entry.update(ok=False, error=str(e))
        print(f"{name:14s} compile failed: {e}", flush=True)
        return entry
    kinds = res.by_kind()
    convs = kinds["convs"]
    entry.update(ok=True, compile_s=round(res.timings["total"], 2),
                 **res.counts(),
                 declined=[{"dispatch": r.dispatch, "reason": r.reason} for r in convs if r.path != "convc"],
                 kernels=sorted({r.schedule.kernel for r in convs if r.schedule}),
                 transposes=[{"dispatch": d, "why": w} for d, w in res.transposes],
                 structure=[s.as_dict() for s in res.structure],
                 stock_structure=[s.as_dict() for s in _stock_structure(src, target)])
    prog = "; ".join(f"{s.submissions} submissions, {s.host_waits} waits, {s.allocations} allocations "
                     f"(stock IREE {k['submissions']}, {k['host_waits']}, {k['allocations']})"
                     for s, k in zip(res.structure, entry["stock_structure"]))
    print(f"{name:14s} {entry['convs_on_convc']}/{entry['convs']} conv executables on convc, "
          f"{len(res.transposes)} transposes, {prog}, {entry['compile_s']} s", flush=True)
    return entry


# rel. L2 bound of a QDQ int8 model against onnxruntime's CPU run of the same model. Both sum
# the int8 products exactly; the requantize's float rounding can put a value at a half one
# step apart, and the step propagates through the layers after it. Measured: 0.0 on llvm-cpu
# (light ResNet-50), 0.017-0.018 on an H200 (QDQ ResNet-50 and MobileNetV2 b32, where the
# requantize divides by a multiply: a lead for the difference, not isolated)
QDQ_TOLERANCE = 5e-2


def prepare_quantized(name: str, out: str, target: str, seed: int, fmt: str = "qdq") -> dict:
    """`{name}_{fmt}`: the light model with random weights (seed), quantized here in one of
    tools.quantized.FORMATS (QDQ int8 or uint8 activations, QLinearConv, ConvInteger;
    per-channel weights, synthetic calibration), against onnxruntime's CPU result on a random
    input."""
    from .quantized import quantize
    src = os.path.join(light_dir(), f"light_{name}.onnx")
    x, _, function = model_io(src)
    fsrc, qsrc = os.path.join(out, f"{name}_float.onnx"), os.path.join(out, f"{name}_{fmt}.onnx")
    randomized(src, fsrc, seed)
    quantize(fsrc, qsrc, fmt, seed=seed)
    xr = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)
    entry = prepare_model(qsrc, f"{name}_{fmt}", out, target, "tf32", xr, onnxruntime_output(qsrc, xr), function,
                          f"onnxruntime CPU on the same {fmt} model, random weights (seed {seed})")
    entry["tolerance"] = QDQ_TOLERANCE
    os.remove(fsrc)
    os.remove(qsrc)
    return entry


def prepare(out: str, target: str, precision: str, only: list[str] | None, random_seed: int | None = None,
            decoders_seed: int | None = None, quantized_seed: int | None = None,
            quantized_formats: tuple[str, ...] = ("qdq",)) -> dict:
    """Every light model with its shipped input and output; with random_seed, each also with
    random weights and input, against ONNX Runtime's CPU result (`{name}_random`); with
    decoders_seed, the DECODERS too."""
    os.makedirs(out, exist_ok=True)
    entries = []
    for name in [d for d in DECODERS if not only or d in only] if decoders_seed is not None else ():
        src = os.path.join(out, f"{name}.onnx")
        x = decoder_model(src, name, decoders_seed)
        entries.append(prepare_model(src, name, out, target, precision, x, onnxruntime_output(src, x), name,
                                     f"onnxruntime CPU, random weights (seed {decoders_seed})"))
        os.remove(src)
    for name in [m for m in only or LIGHT_MODELS if m in LIGHT_MODELS]:
        src = os.path.join(light_dir(), f"light_{name}.onnx")
        x, y, function = model_io(src)
        entries.append(prepare_model(src, name, out, target, precision, x, y, function, "shipped output"))
        if random_seed is not None:
            rsrc = os.path.join(out, f"{name}_random.onnx")
            randomized(src, rsrc, random_seed)
            xr = np.random.default_rng(random_seed).standard_normal(x.shape).astype(np.float32)
            entries.append(prepare_model(rsrc, f"{name}_random", out, target, precision, xr,
                                         onnxruntime_output(rsrc, xr), function,
                                         f"onnxruntime CPU, random weights (seed {random_seed})"))
            os.remove(rsrc)
    for name in [m for m in only or LIGHT_MODELS if m in LIGHT_MODELS] if quantized_seed is not None else ():
        for fmt in quantized_formats:
            entries.append(prepare_quantized(name, out, target, quantized_seed, fmt))
    manifest = {"target": target, "precision": precision, "tolerance": TOLERANCE[precision],
                "commit": git_commit(), "models": entries}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="convc-models", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare"], help="prepare: compile the light ONNX models into a bundle for tools/device/model_check.sh")
    p.add_argument("--out", required=True, help="bundle directory to write")
    p.add_argument("--target", default="sm_90a", help="convc target (default sm_90a)")
    p.add_argument("--precision", default="tf32", choices=sorted(TOLERANCE), help="f32 conv precision")
    p.add_argument("--only", help="comma-separated model names (default: all light models)")
    p.add_argument("--random-weights", type=int, metavar="SEED",
                   help="also each model with random weights and input, against ONNX Runtime's CPU result")
    p.add_argument("--decoders", type=int, metavar="SEED",
                   help="also the transposed-conv decoders (DECODERS), random weights and input, against ONNX "
                        "Runtime's CPU result")
    p.add_argument("--quantized", type=int, metavar="SEED",
                   help="also each model quantized to QDQ int8 here (random weights, synthetic calibration), "
                        "against ONNX Runtime's CPU result for the same QDQ model")
    p.add_argument("--quantized-formats", default="qdq",
                   help="with --quantized: comma-separated formats (qdq, qdq_u8, qlinear, integer; default qdq)")
    args = p.parse_args(argv)
    from .quantized import FORMATS
    formats = tuple(args.quantized_formats.split(","))
    if any(f not in FORMATS for f in formats):
        p.error(f"--quantized-formats: one of {', '.join(FORMATS)}")
    only = args.only.split(",") if args.only else None
    unknown = [m for m in only or [] if m not in LIGHT_MODELS and m not in DECODERS]
    if unknown:
        print(f"convc-models: error: unknown model {', '.join(unknown)} (the light models: {', '.join(LIGHT_MODELS)}; "
              f"the decoders: {', '.join(DECODERS)})",
              file=sys.stderr)
        return 2
    try:
        prepare(args.out, args.target, args.precision, only, args.random_weights, args.decoders, args.quantized,
                formats)
    except ConvcError as e:
        print(f"convc-models: error: {e}", file=sys.stderr)
        return 1
    return 0


def _cli_main():
    sys.exit(main())


if __name__ == "__main__":
    _cli_main()
