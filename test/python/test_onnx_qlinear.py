"""ONNX QLinearConv (the operator form of a quantized conv) against onnxruntime's CPU result.

IREE 3.13's own import of QLinearConv adds the int32 bias unscaled (onnx_qlinear.py); convc
rewrites each QLinearConv into DequantizeLinear -> Conv -> QuantizeLinear before the import, so
that its convs take the int8 conv path (convc-quantized-conv; uint8 activations as q - 128).
Outputs: at most one quantization step off, on few elements (the requantize's f32 arithmetic
rounds a half differently from onnxruntime's now and then)."""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def save_graph(path: str, nodes: list, x_type: int, x_shape: list, y_type: int, inits: list, opset: int,
               y_shape: list | None = None) -> str:
    """A one-input, one-output ONNX model ("main_graph": x -> y) saved at path (IR 7 for opsets
    before 13, else 8; iree-import-onnx alone needs y_shape)."""
    from onnx import helper
    g = helper.make_graph(nodes, "main_graph", [helper.make_tensor_value_info("x", x_type, x_shape)],
                          [helper.make_tensor_value_info("y", y_type, y_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7 if opset < 13 else 8
    onnx.save(m, path)
    return path


def call_8bit(vmfb: str, x: np.ndarray) -> np.ndarray:
    """The model's one output for an int8 or uint8 input (handed over as i8 bytes)."""
    mod = LoadedModule(vmfb, "local-task")
    return np.asarray(mod.call(mod.entry, [(x.view(np.int8), "i8")]))


def _qlinear_model(path, act: str, bias: bool, chain: bool, seed: int = 0):
    """x (act) -> QLinearConv 16 -> 32, 3x3 pad 1 [-> QLinearConv 32 -> 24, 3x3 stride 2] (act)."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    np_t, onnx_t = (np.uint8, TensorProto.UINT8) if act == "uint8" else (np.int8, TensorProto.INT8)
    zp = 3 if act == "uint8" else -2
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def qconv(i, x, c, f, out, **attrs):
        w = const(f"w{i}", rng.integers(-127, 128, (f, c, 3, 3)).astype(np.int8))
        ins = [x, const(f"xs{i}", np.float32(0.02 + 0.01 * i)), const(f"xz{i}", np_t(zp)), w,
               const(f"ws{i}", (rng.uniform(0.002, 0.01, f)).astype(np.float32)), const(f"wz{i}", np.zeros(f, np.int8)),
               const(f"ys{i}", np.float32(0.05 + 0.05 * i)), const(f"yz{i}", np_t(zp + 2))]
        if bias:
            ins.append(const(f"b{i}", rng.integers(-2000, 2000, f).astype(np.int32)))
        nodes.append(helper.make_node("QLinearConv", ins, [out], **attrs))

    qconv(0, "x", 16, 32, "y0" if chain else "y", pads=[1, 1, 1, 1])
    if chain:
        qconv(1, "y0", 32, 24, "y", pads=[1, 1, 1, 1], strides=[2, 2])
    save_graph(path, nodes, onnx_t, [2, 16, 10, 8], onnx_t, inits, 13, [2, 24, 5, 4] if chain else [2, 32, 10, 8])
    return np_t


@pytest.mark.parametrize("act,bias,chain", [("uint8", True, False), ("int8", True, True), ("int8", False, False),
                                            ("uint8", True, True)],
                         ids=["uint8_bias", "int8_bias_chain", "int8_no_bias", "uint8_bias_chain"])
def test_qlinear_conv_matches_onnxruntime(tmp_path, act, bias, chain):
    path = str(tmp_path / "q.onnx")
    np_t = _qlinear_model(path, act, bias, chain)
    res = compile_file(path, str(tmp_path / "q.vmfb"), CompileOptions(target="llvm-cpu"))
    convs = res.by_kind()["convs"]
    assert len(convs) == (2 if chain else 1) and all(r.path == "convc" for r in convs), [r.line() for r in convs]
    # the int8 conv path (uint8: on q - 128), activations 8-bit between the convs
    assert all(r.problem.dtype == "i8" and r.problem.out_dtype == "i8" for r in convs), [r.line() for r in convs]
    sess = ort.InferenceSession(path)
    info = np.iinfo(np_t)
    for seed in (0, 1):
        x = np.random.default_rng(seed).integers(info.min, info.max + 1, (2, 16, 10, 8)).astype(np_t)
        ref = sess.run(None, {"x": x})[0].astype(np.int32)
        got = call_8bit(str(tmp_path / "q.vmfb"), x).view(np_t).astype(np.int32)
        diff = np.abs(got - ref)
        assert got.shape == ref.shape and diff.max() <= 1, diff.max()
        assert np.count_nonzero(diff) <= diff.size // 200, np.count_nonzero(diff)


def test_without_the_rewrite_iree_drops_the_bias_scale(tmp_path):
    """The evidence for the rewrite: IREE's own import of the QLinearConv, compiled by stock
    iree-compile, misses onnxruntime on most outputs and matches a numpy model that adds the
    int32 bias to the dequantized conv unscaled (up to a rounding at a half)."""
    import subprocess
    import sys
    path = str(tmp_path / "q.onnx")
    _qlinear_model(path, "uint8", True, False)
    mlir, vmfb = str(tmp_path / "q.mlir"), str(tmp_path / "stock.vmfb")
    subprocess.run([sys.executable, "-m", "iree.compiler.tools.import_onnx", path, "-o", mlir], check=True)
    from convc.compiler.iree_tools import iree_compile
    iree_compile([mlir, "--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic", "-o", vmfb],
                 "stock IREE")
    x = np.random.default_rng(0).integers(0, 256, (2, 16, 10, 8)).astype(np.uint8)
    ref = ort.InferenceSession(path).run(None, {"x": x})[0].astype(np.int32)
    got = call_8bit(vmfb, x).view(np.uint8).astype(np.int32)
    assert np.mean(got != ref) > 0.2          # wrong on most outputs
    # ... and what it computes: the conv of the dequantized operands plus the raw int32 bias
    from onnx import numpy_helper
    from convc.tools.gpu.reference import conv_nhwc_fhwc_numpy
    c = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in onnx.load(path).graph.initializer}
    xf = (x.astype(np.float64) - c["xz0"]) * c["xs0"]
    wf = c["w0"] * c["ws0"][:, None, None, None]
    y = conv_nhwc_fhwc_numpy(np.moveaxis(xf, 1, -1), np.moveaxis(wf, 1, -1), (1, 1), (1, 1), (1, 1, 1, 1),
                             dtype=np.float64)
    raw_bias = np.moveaxis(y, -1, 1) + c["b0"][None, :, None, None]
    model = np.clip(np.rint(raw_bias / c["ys0"]) + c["yz0"], 0, 255).astype(np.int32)
    assert np.mean(got != model) < 0.005 and np.abs(got - model).max() <= 1


@pytest.mark.parametrize("case", ["depthwise", "per_tensor_weights", "same_upper", "int8"])
def test_qlinear_conv_forms_of_opset_10(tmp_path, case):
    """Opset-10 models (QLinearConv's first opset: upgraded before the rewrite), a depthwise
    QLinearConv (the integer-valued f16 route), per-tensor weight scales, auto_pad SAME_UPPER
    with stride 2, int8 activations: equal to onnxruntime."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    C, F, group = (16, 16, 16) if case == "depthwise" else (16, 32, 1)
    act = np.int8 if case == "int8" else np.uint8
    per_channel = case != "per_tensor_weights"
    w = rng.integers(-127, 128, (F, C // group, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.002, 0.01, F) if per_channel else np.float32(0.005)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(rng.integers(-500, 500, F).astype(np.int32), "b"),
             numpy_helper.from_array(np.array(0.03, np.float32), "xs"),
             numpy_helper.from_array(np.array(10 if act == np.uint8 else -3, act), "xz"),
             numpy_helper.from_array(ws, "ws"), numpy_helper.from_array(np.zeros(F if per_channel else (), np.int8), "wz"),
             numpy_helper.from_array(np.array(0.07, np.float32), "ys"),
             numpy_helper.from_array(np.array(120 if act == np.uint8 else 4, act), "yz")]
    pad = {"auto_pad": "SAME_UPPER"} if case == "same_upper" else {"pads": [1, 1, 1, 1]}
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], strides=[2, 2],
                            group=group, **pad)
    t = TensorProto.UINT8 if act == np.uint8 else TensorProto.INT8
    path = save_graph(str(tmp_path / "q.onnx"), [node], t, [1, C, 9, 9], t, inits, 10)
    res = compile_file(path, str(tmp_path / "q.vmfb"), CompileOptions(target="llvm-cpu"))
    (conv,) = res.by_kind()["convs"]
    assert conv.path == "convc" and conv.problem.dtype == ("f16" if case == "depthwise" else "i8"), conv.line()
    x = np.random.default_rng(0).integers(np.iinfo(act).min, np.iinfo(act).max + 1, (1, C, 9, 9)).astype(act)
    ref = ort.InferenceSession(path).run(None, {"x": x})[0].astype(np.int32)
    got = call_8bit(str(tmp_path / "q.vmfb"), x).view(act).astype(np.int32)
    assert got.shape == ref.shape and np.abs(got - ref).max() <= 1 and np.mean(got != ref) <= 0.005
