"""Models as users have them: ONNX files, PyTorch modules, NCHW and HWCF convs.

Each model is compiled for llvm-cpu and run through the IREE runtime on random inputs; the
reference is independent of convc and IREE (ONNX's reference evaluator, PyTorch on the CPU,
numpy). Layout: convs must reach convc channels-last, with transposes only at the model's
boundaries.
"""

import os

import numpy as np
import pytest

from conftest import run_cli
from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402


def _onnx_block(dtype=np.float32, seed=0):
    """Conv(bias)+BN+Relu -> MaxPool -> [Conv 1x1 + residual Add] ++ Concat: an NCHW block
    with the ops that sit between convs in real networks."""
    rng = np.random.default_rng(seed)
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16

    def init(name, shape, lo=-0.5, hi=0.5):
        return numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(dtype), name)

    inits = [init("w1", (32, 16, 3, 3)), init("b1", (32,)), init("g", (32,), 0.5, 1.5), init("beta", (32,)),
             init("mean", (32,)), init("var", (32,), 0.5, 2.0), init("w2", (32, 32, 1, 1)), init("b2", (32,))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "g", "beta", "mean", "var"], ["bn"], epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w2", "b2"], ["c2"]),
        helper.make_node("Add", ["c2", "p"], ["s"]),
        helper.make_node("Concat", ["s", "p"], ["y"], axis=1),
    ]
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", t, [2, 16, 12, 12])],
                              [helper.make_tensor_value_info("y", t, [2, 64, 6, 6])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _compile(tmp_path, src, **kw):
    out = tmp_path / "m.vmfb"
    return out, compile_file(str(src), str(out), CompileOptions(target="llvm-cpu", **kw))


def _run(vmfb, x, out_shape, out_dtype, function="main"):
    """Imported models return their result (no output argument to poison; the layer tests
    poison every kernel's output buffer)."""
    dt = "f32" if x.dtype == np.float32 else "f16"
    got = LoadedModule(str(vmfb), "local-task").call(function, [(x, dt)])
    assert got.shape == tuple(out_shape) and got.dtype == out_dtype
    return got


def _rel_err(got, ref):
    got, ref = got.astype(np.float64), ref.astype(np.float64)
    return np.linalg.norm(got - ref) / np.linalg.norm(ref)


# rel. L2 bounds against ONNX's fp32 reference, per --precision (docs/models.md, Precision): fp32 is
# exact f32 math; tf32 on llvm-cpu computes in f32 too (TF32 is a tensor-core mode); f16 and
# bf16 round operands (bf16 keeps 8 mantissa bits).
PRECISION_TOL = {"fp32": 1e-5, "tf32": 1e-5, "f16": 1e-2, "bf16": 3e-2}


@pytest.mark.parametrize("precision", sorted(PRECISION_TOL))
def test_onnx_block_matches_the_onnx_reference(tmp_path, precision):
    model = _onnx_block()
    path = tmp_path / "block.onnx"
    onnx.save(model, str(path))
    vmfb, res = _compile(tmp_path, path, precision=precision)
    convs = [r for r in res.reports if r.is_conv]
    assert len(convs) == 2 and all(r.path == "convc" for r in convs), [r.line() for r in res.reports]
    # channels-last inside: the model's input and output are the only layout changes
    assert all(why.startswith(("model input", "model output")) for _, why in res.transposes), res.transposes
    x = np.random.default_rng(1).standard_normal((2, 16, 12, 12)).astype(np.float32)
    got = _run(vmfb, x, (2, 64, 6, 6), np.float32, "block")     # f16 demotion keeps an f32 ABI
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert not np.isnan(got.astype(np.float32)).any()
    assert _rel_err(got, ref) <= PRECISION_TOL[precision], _rel_err(got, ref)


def test_onnx_f16_block_runs_on_convc(tmp_path):
    model = _onnx_block(np.float16)
    path = tmp_path / "block16.onnx"
    onnx.save(model, str(path))
    vmfb, res = _compile(tmp_path, path)
    assert [r.path for r in res.reports if r.is_conv] == ["convc", "convc"]
    x = np.random.default_rng(2).standard_normal((2, 16, 12, 12)).astype(np.float16)
    got = _run(vmfb, x, (2, 64, 6, 6), np.float16, "block")
    ref = ReferenceEvaluator(_onnx_block(np.float32)).run(None, {"x": x.astype(np.float32)})[0]
    assert not np.isnan(got.astype(np.float32)).any()
    assert _rel_err(got, ref) <= 1e-2, _rel_err(got, ref)


def test_onnx_cli_and_binary_input_hint(tmp_path):
    path = tmp_path / "block.onnx"
    onnx.save(_onnx_block(np.float16), str(path))
    r = run_cli("convc", str(path), "-o", str(tmp_path / "a.vmfb"), "--report", "--target", "llvm-cpu")
    assert r.returncode == 0, r.stderr
    assert "2 of 2 conv executables on convc" in r.stdout, r.stdout
    wrong = tmp_path / "block.mlir"
    wrong.write_bytes(path.read_bytes())
    r = run_cli("convc", str(wrong), "-o", str(tmp_path / "b.vmfb"))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "name it .onnx" in r.stderr, r.stderr


@pytest.mark.parametrize("what,needle", [("empty", "is empty"), ("dir", "is a directory")])
def test_bad_inputs_are_named(tmp_path, what, needle):
    src = tmp_path / "m.mlir"
    if what == "empty":
        src.write_text("\n")
    else:
        os.makedirs(src)
    r = run_cli("convc", str(src), "-o", str(tmp_path / "o.vmfb"))
    assert r.returncode != 0 and "Traceback" not in r.stderr and needle in r.stderr, r.stderr


HWCF = """func.func @main(%x: tensor<2x9x9x16xf16>, %w: tensor<3x3x16x24xf16>) -> tensor<2x7x7x24xf32> {
  %fz = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x7x7x24xf32>
  %acc = linalg.fill ins(%fz : f32) outs(%e : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x9x9x16xf16>, tensor<3x3x16x24xf16>) outs(%acc : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
  return %c : tensor<2x7x7x24xf32>
}
"""


def test_hwcf_conv_runs_on_convc(tmp_path):
    src = tmp_path / "hwcf.mlir"
    src.write_text(HWCF)
    vmfb, res = _compile(tmp_path, src)
    # the filter is a runtime argument: its HWCF -> FHWC transpose is a dispatch of its own
    assert [r.path for r in res.reports if r.problem is not None] == ["convc"], [r.line() for r in res.reports]
    assert [why.split(":")[0] for _, why in res.transposes] == ["model input"]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 9, 9, 16)).astype(np.float16)
    w = rng.standard_normal((3, 3, 16, 24)).astype(np.float16)
    got = LoadedModule(str(vmfb), "local-task").call("main", [(x, "f16"), (w, "f16")])
    xf, wf = x.astype(np.float64), w.astype(np.float64)
    ref = np.zeros((2, 7, 7, 24))
    for r in range(3):
        for s in range(3):
            ref += np.einsum("nhwc,cf->nhwf", xf[:, r:r + 7, s:s + 7, :], wf[r, s])
    assert _rel_err(got, ref) <= 1e-5


def test_pytorch_route_matches_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import compile_module

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(16, 32, 3, padding=1, bias=False)
            self.bn = torch.nn.BatchNorm2d(32)
            self.c2 = torch.nn.Conv2d(32, 32, 1)

        def forward(self, x):
            y = torch.relu(self.bn(self.c1(x)))
            return torch.nn.functional.max_pool2d(self.c2(y) + y, 2)

    torch.manual_seed(0)
    net = Net().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-1, 1)
        net.bn.running_var.uniform_(0.5, 2)
    x = torch.randn(2, 16, 12, 12)
    out = tmp_path / "net.vmfb"
    res = compile_module(net.half(), (x.half(),), str(out), target="llvm-cpu")
    assert [r.path for r in res.reports if r.is_conv] == ["convc", "convc"], \
        [r.line() for r in res.reports]
    got = _run(out, x.half().numpy(), (2, 32, 6, 6), np.float16)
    with torch.no_grad():
        ref = net.float()(x).numpy()
    assert _rel_err(got, ref) <= 1e-2, _rel_err(got, ref)


def _onnx_lrn_block(seed=0):
    """AlexNet/ZFNet/Inception v1's Conv+Relu+LRN with a constant bias (IREE folds a splat bias
    into the conv's fill, and its multi-use fusion gives the conv dispatch the relu and its
    square as two results)."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.uniform(-0.5, 0.5, (32, 16, 3, 3)).astype(np.float32), "w1"),
             numpy_helper.from_array(np.full((32,), 0.02, np.float32), "b1"),
             numpy_helper.from_array(rng.uniform(-0.5, 0.5, (32, 32, 3, 3)).astype(np.float32), "w2"),
             numpy_helper.from_array(rng.uniform(-0.5, 0.5, (32,)).astype(np.float32), "b2")]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("LRN", ["r1"], ["l1"], size=5, alpha=1e-4, beta=0.75, bias=1.0),
        helper.make_node("Conv", ["l1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("LRN", ["r2"], ["y"], size=5, alpha=1e-4, beta=0.75, bias=1.0),
    ]
    t = TensorProto.FLOAT
    graph = helper.make_graph(nodes, "lrn", [helper.make_tensor_value_info("x", t, [2, 16, 10, 10])],
                              [helper.make_tensor_value_info("y", t, [2, 32, 5, 5])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_lrn_block_convs_take_convc(tmp_path):
    """Every conv of a Conv+Relu+LRN model is on convc: the flow phase is built without
    multi-use fusion, and the report says why (compile-only: IREE 3.13's llvm-cpu codegen
    fails on LRN's dispatch with the pad fused in; the light models check it on the GPU)."""
    src = tmp_path / "lrn.onnx"
    onnx.save(_onnx_lrn_block(), str(src))
    out = tmp_path / "lrn.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="sm_90a"))
    convs = [r for r in res.reports if r.is_conv]
    assert len(convs) == 2 and all(r.path == "convc" for r in convs), [r.line() for r in res.reports]
    assert any("fuse-multi-use=false" in n for n in res.notes), res.summary_lines()


FILL_MODEL = """
func.func @main(%x: tensor<2x9x8x16xf32>, %w: tensor<24x3x3x16xf32>) -> tensor<2x7x6x24xf32> {
  %c = arith.constant 0.25 : f32
  %e = tensor.empty() : tensor<2x7x6x24xf32>
  %init = linalg.fill ins(%c : f32) outs(%e : tensor<2x7x6x24xf32>) -> tensor<2x7x6x24xf32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<2x9x8x16xf32>, tensor<24x3x3x16xf32>) outs(%init : tensor<2x7x6x24xf32>) -> tensor<2x7x6x24xf32>
  return %y : tensor<2x7x6x24xf32>
}
"""


def test_conv_accumulating_into_a_constant_fill(tmp_path):
    """A conv accumulating into a nonzero constant (IREE folds a constant bias into the fill:
    the light AlexNet/ZFNet) takes convc with the constant as its first epilogue step."""
    src = tmp_path / "fill.mlir"
    src.write_text(FILL_MODEL)
    out, res = _compile(tmp_path, src)
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.path == "convc", conv.line()
    first = conv.problem.epilogue[0]
    assert first.op == "program" and [o.op for o in first.program] == ["arith.constant", "arith.addf"]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 9, 8, 16)).astype(np.float32)
    w = rng.standard_normal((24, 3, 3, 16)).astype(np.float32)
    got = LoadedModule(str(out), "local-task").call("main", [(x, "f32"), (w, "f32")])
    win = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2))     # n, ho, wo, c, r, s
    ref = np.einsum("nhwcrs,frsc->nhwf", win.astype(np.float64), w.astype(np.float64)) + 0.25
    assert _rel_err(got, ref) <= 1e-5


def test_dynamic_batch_runs_any_n_on_convc(tmp_path):
    """A dynamic batch: every conv (padded 3x3, a GEMM-form 1x1 with dynamic rows, a strided
    3x3 after a pool) takes convc with the batch read at run time, and any N matches
    PyTorch, N = 1 and N larger than the planned batch included."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import compile_module

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(32, 32, 1),
                              torch.nn.MaxPool2d(2), torch.nn.Conv2d(32, 8, 3, padding=1, stride=2)).eval()
    out = tmp_path / "dyn.vmfb"
    res = compile_module(net, (torch.randn(2, 16, 8, 8),), str(out), dynamic_batch=True, target="llvm-cpu")
    convs = [r for r in res.reports if r.is_conv]
    assert len(convs) == 3 and all(r.path == "convc" for r in convs), [r.line() for r in res.reports]
    assert all(r.problem.dynamic_batch and "batch read at run time" in r.reason for r in convs)
    assert convs[0].problem.pad == (1, 1, 1, 1)              # the pad stays fused
    module = LoadedModule(str(out), "local-task")
    for n in (1, 3, 17):
        x = torch.randn(n, 16, 8, 8)
        got = module.call("main", [(x.numpy(), "f32")])
        with torch.no_grad():
            assert got.shape == (n, 8, 2, 2) and _rel_err(got, net(x).numpy()) <= 1e-5

I8_CONV = """func.func @main(%x: tensor<1x8x8x16xi8>, %w: tensor<32x3x3x16xi8>) -> tensor<1x6x6x32xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x6x6x32xi32>
  %acc = linalg.fill ins(%z : i32) outs(%e : tensor<1x6x6x32xi32>) -> tensor<1x6x6x32xi32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x8x8x16xi8>, tensor<32x3x3x16xi8>) outs(%acc : tensor<1x6x6x32xi32>) -> tensor<1x6x6x32xi32>
  return %y : tensor<1x6x6x32xi32>
}
"""


@pytest.mark.parametrize("dtype", ["i8", "i16"])
def test_integer_conv_is_taken_or_declined_by_its_type(tmp_path, dtype):
    """An i8 conv summed in i32 is convc's (exact); an i16 one is counted as a conv and left to
    IREE with the dtype named, and the IREE fallback still computes it right."""
    src = tmp_path / f"{dtype}.mlir"
    src.write_text(I8_CONV.replace("xi8>", f"x{dtype}>"))
    out, res = _compile(tmp_path, src)
    convs = [r for r in res.reports if r.is_conv]
    if dtype == "i8":
        assert [r.path for r in convs] == ["convc"] and convs[0].problem.acc_dtype == "i32"
    else:
        assert [r.path for r in convs] == ["IREE"] and "i16 convolution: the input type is not supported" in convs[0].reason
    rng = np.random.default_rng(0)
    np_t = {"i8": np.int8, "i16": np.int16}[dtype]
    x = rng.integers(-8, 8, (1, 8, 8, 16)).astype(np_t)
    w = rng.integers(-8, 8, (32, 3, 3, 16)).astype(np_t)
    m = LoadedModule(str(out), "local-task")
    got = np.asarray(m.function("main")(x, w).to_host())
    ref = np.zeros((1, 6, 6, 32), np.int64)
    for r in range(3):
        for s in range(3):
            ref += np.einsum("nhwc,fc->nhwf", x[:, r:r + 6, s:s + 6, :].astype(np.int64), w[:, r, s, :].astype(np.int64))
    assert np.array_equal(got, ref)
