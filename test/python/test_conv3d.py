"""3-D convs as 2-D convs over views of the channels-last volume (passes/layout/conv3d.py,
convc-conv3d).

ONNX Conv models over NCDHW volumes (and a linalg NDHWC conv, and a PyTorch R(2+1)D block),
compiled for llvm-cpu (the same passes, matcher and planner as the GPU targets), run through
the IREE runtime on random data against an independent numpy sum over every filter tap
(float64). Each conv must reach convc as one 2-D conv whose taps times channels are the 3-D
filter's, with no transpose at run time between layers; a depth im2col's copies run as one
copy-kernel dispatch.
"""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.passes.layout.conv3d import conv3d_form
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def conv3d_reference(x, w, b, stride, pad, dilation):
    """y[n, f, o] = sum over taps and channels of x[n, c, o*s + k*d - p] * w[f, c, k] (float64);
    pad is (front, top, left, back, bottom, right) as ONNX writes it."""
    n, c, *size = x.shape
    f, _, *taps = w.shape
    lo, hi = pad[:3], pad[3:]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(lo[i], hi[i]) for i in range(3)])
    out = [(size[i] + lo[i] + hi[i] - dilation[i] * (taps[i] - 1) - 1) // stride[i] + 1 for i in range(3)]
    y = np.zeros((n, f, *out))
    w64 = w.astype(np.float64)
    for t in range(taps[0]):
        for r in range(taps[1]):
            for s in range(taps[2]):
                a = [k * dilation[i] for i, k in enumerate((t, r, s))]
                win = xp[:, :, a[0]:a[0] + (out[0] - 1) * stride[0] + 1:stride[0],
                         a[1]:a[1] + (out[1] - 1) * stride[1] + 1:stride[1],
                         a[2]:a[2] + (out[2] - 1) * stride[2] + 1:stride[2]]
                y += np.einsum("ncdhw,fc->nfdhw", win, w64[:, :, t, r, s])
    if b is not None:
        y += b.astype(np.float64)[None, :, None, None, None]
    return y


# (C, F, D, H, W, taps, stride, pad, dilation, batch): R(2+1)D's spatial 1x3x3 and temporal
# 3x1x1 halves, its 1x1x1 downsample at stride 2, a stem 3x7x7/1x2x2, full 3x3x3 convs (pad 1,
# no pad, depth stride 2, depth dilation 2, asymmetric pads), a 2x2x2 stride-2 downsampler
CASES = [
    (16, 24, 6, 10, 10, (1, 3, 3), (1, 1, 1), (0, 1, 1, 0, 1, 1), (1, 1, 1), 2),
    (24, 16, 6, 10, 10, (3, 1, 1), (1, 1, 1), (1, 0, 0, 1, 0, 0), (1, 1, 1), 2),
    (16, 32, 6, 8, 8, (1, 1, 1), (2, 2, 2), (0, 0, 0, 0, 0, 0), (1, 1, 1), 2),
    (3, 16, 4, 16, 16, (3, 7, 7), (1, 2, 2), (1, 3, 3, 1, 3, 3), (1, 1, 1), 1),
    (16, 16, 5, 8, 8, (3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 2),
    (8, 16, 6, 7, 9, (3, 3, 3), (1, 1, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    (16, 24, 7, 8, 8, (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1), 2),
    (8, 8, 7, 6, 6, (3, 3, 3), (1, 1, 1), (2, 1, 1, 2, 1, 1), (2, 1, 1), 1),
    (8, 16, 5, 6, 6, (2, 3, 3), (1, 1, 1), (1, 1, 0, 0, 1, 2), (1, 1, 1), 1),
    (16, 32, 6, 8, 8, (2, 2, 2), (2, 2, 2), (0, 0, 0, 0, 0, 0), (1, 1, 1), 2),
]


def _ids(c):
    return f"c{c[0]}f{c[1]}_{c[2]}x{c[3]}x{c[4]}_k{''.join(map(str, c[5]))}_s{''.join(map(str, c[6]))}" \
           f"_p{''.join(map(str, c[7]))}_d{''.join(map(str, c[8]))}_n{c[9]}"


def _onnx_model(C, F, D, H, W, taps, stride, pad, dilation, batch, dtype):
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    rng = np.random.default_rng(C * 100 + sum(taps) * 10 + stride[0])
    w = (rng.standard_normal((F, C, *taps)) / np.sqrt(C * np.prod(taps))).astype(dtype)
    b = rng.standard_normal(F).astype(dtype)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["t"], kernel_shape=list(taps), strides=list(stride),
                              pads=list(pad), dilations=list(dilation)),
             helper.make_node("Relu", ["t"], ["y"])]
    g = helper.make_graph(nodes, "c3", [helper.make_tensor_value_info("x", t, [batch, C, D, H, W])],
                          [helper.make_tensor_value_info("y", t, None)],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])), w, b


def _rel(got, ref):
    return np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref)


def _compile_run(tmp_path, src, x, et):
    out = tmp_path / "m.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    return res, LoadedModule(str(out), "local-task").call(None, [(x, et)])


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 3e-3)], ids=["f32", "f16"])
@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_onnx_conv3d_runs_as_one_2d_conv(tmp_path, case, dtype, tol):
    C, F, D, H, W, taps, stride, pad, dilation, batch = case
    model, w, b = _onnx_model(*case, dtype)
    src = tmp_path / "c3.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(0).standard_normal((batch, C, D, H, W)).astype(dtype)
    res, got = _compile_run(tmp_path, src, x, "f32" if dtype == np.float32 else "f16")
    ref = np.maximum(conv3d_reference(x, w, b, stride, pad, dilation), 0)
    assert got.shape == ref.shape and np.isfinite(got).all()
    assert _rel(got, ref) < tol
    lines = [r.line() for r in res.reports]
    convs = res.by_kind()["convs"]
    assert len(convs) == 1 and convs[0].path == "convc", lines
    p = convs[0].problem
    T, R, S = taps
    assert p.R * p.S * p.C == T * R * S * C and p.F == F, lines
    form = conv3d_form(T, R, S, list(stride), list(pad[1:3]) + list(pad[4:6]))
    # the depth im2col's copies of several taps, or the strided frames of a depth stride: one
    # copy-kernel dispatch
    copies = res.by_kind()["copies"]
    assert len(copies) == (1 if form == "im2col" or stride[0] > 1 else 0), lines


def test_linalg_ndhwc_conv3d(tmp_path):
    """linalg.conv_3d_ndhwc_dhwcf (a TensorFlow/JAX layout) takes the same path, no transposes."""
    N, D, H, W, C, F = 2, 5, 6, 6, 8, 16
    src = tmp_path / "c3.mlir"
    src.write_text(f"""
func.func @main(%x: tensor<{N}x{D}x{H}x{W}x{C}xf32>, %w: tensor<3x3x3x{C}x{F}xf32>) -> tensor<{N}x{D - 2}x{H - 2}x{W - 2}x{F}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{N}x{D - 2}x{H - 2}x{W - 2}x{F}xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<{N}x{D - 2}x{H - 2}x{W - 2}x{F}xf32>) -> tensor<{N}x{D - 2}x{H - 2}x{W - 2}x{F}xf32>
  %y = linalg.conv_3d_ndhwc_dhwcf {{dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}}
       ins(%x, %w : tensor<{N}x{D}x{H}x{W}x{C}xf32>, tensor<3x3x3x{C}x{F}xf32>)
       outs(%acc : tensor<{N}x{D - 2}x{H - 2}x{W - 2}x{F}xf32>) -> tensor<{N}x{D - 2}x{H - 2}x{W - 2}x{F}xf32>
  return %y : tensor<{N}x{D - 2}x{H - 2}x{W - 2}x{F}xf32>
}}""")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((N, D, H, W, C)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, C, F)).astype(np.float32)
    out = tmp_path / "m.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32"), (w, "f32")])
    ref = conv3d_reference(x.transpose(0, 4, 1, 2, 3), w.transpose(4, 3, 0, 1, 2), None, (1, 1, 1),
                           (0,) * 6, (1, 1, 1)).transpose(0, 2, 3, 4, 1)
    assert _rel(got, ref) < 1e-5
    convs = res.by_kind()["convs"]
    assert len(convs) == 1 and convs[0].path == "convc" and convs[0].problem.C == 3 * C
    assert not [r for r in res.reports if "transpose" in r.dispatch]


def test_pytorch_r2plus1d_block(tmp_path):
    """R(2+1)D's stem (1x7x7/1x2x2 and 3x1x1), a basic block as torchvision builds it (1x3x3
    then 3x1x1 convs with BatchNorm + ReLU, twice, and the residual) and a 3x3x3 conv: every
    conv on convc, activations channels-last between them (the only transposes at run time are
    the model's input and output)."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir
    nn = torch.nn

    def conv2plus1d(cin, cout, mid):
        return nn.Sequential(nn.Conv3d(cin, mid, (1, 3, 3), padding=(0, 1, 1), bias=False), nn.BatchNorm3d(mid),
                             nn.ReLU(), nn.Conv3d(mid, cout, (3, 1, 1), padding=(1, 0, 0), bias=False))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv3d(3, 24, (1, 7, 7), stride=(1, 2, 2), padding=(0, 3, 3), bias=False),
                                      nn.BatchNorm3d(24), nn.ReLU(), nn.Conv3d(24, 16, (3, 1, 1), padding=(1, 0, 0)),
                                      nn.ReLU())
            self.a = nn.Sequential(conv2plus1d(16, 16, 24), nn.BatchNorm3d(16), nn.ReLU())
            self.b = nn.Sequential(conv2plus1d(16, 16, 24), nn.BatchNorm3d(16))
            self.c = nn.Conv3d(16, 16, 3, padding=1)

        def forward(self, x):
            x = self.stem(x)
            return self.c(torch.relu(self.b(self.a(x)) + x))

    torch.manual_seed(0)
    m = Block().eval()
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm3d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, 6, 20, 20)
    src = tmp_path / "block.mlir"
    src.write_text(export_mlir(m, (x,)))
    res, got = _compile_run(tmp_path, src, x.numpy(), "f32")
    with torch.no_grad():
        ref = m(x).double().numpy()
    assert _rel(got, ref) < 1e-4
    lines = [r.line() for r in res.reports]
    convs = res.by_kind()["convs"]
    assert len(convs) == 7 and all(r.path == "convc" for r in convs), lines
    transposes = [r for r in res.reports if "transpose" in r.dispatch]
    assert len(transposes) <= 2, lines


def test_grouped_conv3d_is_a_clear_import_error(tmp_path):
    """A grouped 3-D conv never reaches convc: IREE 3.13's torch-to-linalg conversion has no
    lowering for it (the import fails on `torch.aten.convolution`), which convc reports as one
    error line naming the op, not a crash or a wrong answer."""
    from convc.compiler.errors import ConvcError
    t = TensorProto.FLOAT
    w = np.zeros((16, 1, 3, 3, 3), np.float32)
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3, 3], pads=[1] * 6, group=16)],
                          "g3", [helper.make_tensor_value_info("x", t, [1, 16, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", t, None)], [numpy_helper.from_array(w, "w")])
    src = tmp_path / "g3.onnx"
    onnx.save(onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])), str(src))
    with pytest.raises(ConvcError) as e:
        compile_file(str(src), str(tmp_path / "g3.vmfb"), CompileOptions(target="llvm-cpu"))
    assert "torch.aten.convolution" in str(e.value) and "\n" not in str(e.value).strip()[:400]


def test_odd_mid_channels_stay_padded_into_the_next_conv(tmp_path):
    """R(2+1)D's mid convs have channel counts that are not a multiple of 8 (45, 230, 921).
    For sm_90a convc-pad-channels computes them padded and, since the padded channels can flow
    on, carries them through the BatchNorm + ReLU and the reshapes into the next conv (zero
    filter channels for them) instead of slicing after the conv: no slice is left, the first
    conv writes 64 channels and the second reads 64. The rewritten model (the input-phase
    passes as run for sm_90a) is compiled for llvm-cpu and checked against numpy."""
    from convc.passes.ir import ir
    from convc.passes.registry import INPUT_PHASE, PassOptions, get_pass
    t = TensorProto.FLOAT
    rng = np.random.default_rng(5)
    C, M, F, D, H, W = 16, 45, 24, 5, 8, 8
    w1 = (rng.standard_normal((M, C, 1, 3, 3)) / 12).astype(np.float32)
    w2 = (rng.standard_normal((F, M, 3, 1, 1)) / 12).astype(np.float32)
    scale, shift = rng.uniform(0.5, 1.5, M).astype(np.float32), rng.uniform(-0.5, 0.5, M).astype(np.float32)
    mean, var = rng.uniform(-0.2, 0.2, M).astype(np.float32), rng.uniform(0.5, 1.5, M).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[1, 3, 3], pads=[0, 1, 1, 0, 1, 1]),
             helper.make_node("BatchNormalization", ["a", "s", "b", "m", "v"], ["n"], epsilon=1e-5),
             helper.make_node("Relu", ["n"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["y"], kernel_shape=[3, 1, 1], pads=[1, 0, 0, 1, 0, 0])]
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"), (scale, "s"), (shift, "b"),
                                                        (mean, "m"), (var, "v"))]
    g = helper.make_graph(nodes, "mid", [helper.make_tensor_value_info("x", t, [2, C, D, H, W])],
                          [helper.make_tensor_value_info("y", t, None)], inits)
    src = tmp_path / "mid.onnx"
    onnx.save(onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])), str(src))
    dump = tmp_path / "dump"
    compile_file(str(src), str(tmp_path / "cpu.vmfb"), CompileOptions(target="llvm-cpu", dump_dir=str(dump)))
    opts = PassOptions(target="sm_90a")
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse((dump / "mid.linalg.mlir").read_text(), ctx)
        for name in INPUT_PHASE:
            module = get_pass(name)(module, opts)
        text = str(module)
    assert "tensor.extract_slice" not in text and "x64xf32" in text
    padded = tmp_path / "mid.padded.mlir"
    padded.write_text(text)
    res = compile_file(str(padded), str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    convs = res.by_kind()["convs"]
    assert sorted((r.problem.C, r.problem.F) for r in convs) == [(16, 64), (64, 24)], [r.line() for r in res.reports]
    x = rng.standard_normal((2, C, D, H, W)).astype(np.float32)
    got = LoadedModule(str(tmp_path / "m.vmfb"), "local-task").call(None, [(x, "f32")])
    a = conv3d_reference(x, w1, None, (1, 1, 1), (0, 1, 1, 0, 1, 1), (1, 1, 1))
    bc = lambda v: v.astype(np.float64)[None, :, None, None, None]       # noqa: E731
    r = np.maximum((a - bc(mean)) / np.sqrt(bc(var) + 1e-5) * bc(scale) + bc(shift), 0)
    ref = conv3d_reference(r, w2, None, (1, 1, 1), (1, 0, 0, 1, 0, 0), (1, 1, 1))
    assert _rel(got, ref) < 1e-5
