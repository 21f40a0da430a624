"""Nearest-neighbour upsamples as strided copies (passes/layout/upsample.py,
convc-nearest-upsample).

ONNX `Resize` (nearest) and PyTorch `interpolate(mode="nearest")` models, compiled for llvm-cpu
(the same passes as the GPU targets) and run through the IREE runtime on random data against
numpy (np.repeat along H and W, then the conv in float64). Where the upsample is nearest by
integer factors it must become one copy-kernel dispatch of sh * sw strided copies with no
transpose left between the convs; bilinear and fractional-scale upsamples stay as imported.
"""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def conv2d_reference(x, w, pad):
    """NCHW x FCHW, stride 1, zero padding `pad` on every side (float64)."""
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    ho, wo = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, f, ho, wo))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + ho, j:j + wo], w[:, :, i, j].astype(np.float64))
    return y


def _model(C, F, H, W, scales, mode="nearest", batch=2):
    """conv -> Resize -> conv: the upsample between two convs, as in a decoder."""
    rng = np.random.default_rng(C + 10 * H)
    w0 = (rng.standard_normal((C, C, 1, 1)) / np.sqrt(C)).astype(np.float32)
    w1 = (rng.standard_normal((F, C, 3, 3)) / np.sqrt(9 * C)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], kernel_shape=[1, 1]),
             helper.make_node("Resize", ["a", "", "sc"], ["u"], mode=mode),
             helper.make_node("Conv", ["u", "w1"], ["y"], kernel_shape=[3, 3], pads=[1] * 4)]
    g = helper.make_graph(nodes, "up", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(w1, "w1"),
                           numpy_helper.from_array(np.array([1, 1, *scales], np.float32), "sc")])
    m = onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    return m, w0, w1


def _run(tmp_path, src, x):
    out = tmp_path / "m.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    return res, LoadedModule(str(out), "local-task").call(None, [(x, "f32")])


@pytest.mark.parametrize("C,F,H,W,sh,sw", [(16, 8, 6, 5, 2, 2), (8, 16, 4, 7, 3, 2), (24, 8, 5, 5, 1, 4)])
def test_onnx_nearest_resize_runs_as_copies(tmp_path, C, F, H, W, sh, sw):
    model, w0, w1 = _model(C, F, H, W, (sh, sw))
    src = tmp_path / "up.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(1).standard_normal((2, C, H, W)).astype(np.float32)
    res, got = _run(tmp_path, src, x)
    a = np.einsum("nchw,fc->nfhw", x.astype(np.float64), w0[:, :, 0, 0].astype(np.float64))
    u = np.repeat(np.repeat(a, sh, axis=2), sw, axis=3)
    ref = conv2d_reference(u, w1, 1)
    assert got.shape == ref.shape
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5
    lines = [r.line() for r in res.reports]
    copies = res.by_kind()["copies"]
    assert len(copies) == 1 and len(copies[0].copy.pieces) == sh * sw, lines
    # between the convs nothing but the copies: the transposes left are the model's input and output
    assert len(res.transposes) <= 2 and all(r.path == "convc" for r in res.by_kind()["convs"]), lines


@pytest.mark.parametrize("mode,scales", [("linear", (2, 2)), ("nearest", (1.5, 1.5))], ids=["bilinear", "fractional"])
def test_other_resizes_stay_as_imported(tmp_path, mode, scales):
    C, F, H, W = 8, 8, 4, 4
    model, w0, w1 = _model(C, F, H, W, scales, mode=mode)
    src = tmp_path / "up.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(2).standard_normal((2, C, H, W)).astype(np.float32)
    res, got = _run(tmp_path, src, x)
    assert np.isfinite(got).all()
    assert not res.by_kind()["copies"], [r.line() for r in res.reports]


def test_pytorch_interpolate_nearest(tmp_path):
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir
    nn = torch.nn

    class Up(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(16, 16, 3, padding=1)
            self.b = nn.Conv2d(16, 8, 3, padding=1)

        def forward(self, x):
            return self.b(nn.functional.interpolate(nn.functional.silu(self.a(x)), scale_factor=2.0, mode="nearest"))

    torch.manual_seed(0)
    m = Up().eval()
    x = torch.randn(2, 16, 6, 7)
    src = tmp_path / "up.mlir"
    src.write_text(export_mlir(m, (x,)))
    res, got = _run(tmp_path, src, x.numpy())
    with torch.no_grad():
        ref = m(x).double().numpy()
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5
    copies = res.by_kind()["copies"]
    assert len(copies) == 1 and len(copies[0].copy.pieces) == 4, [r.line() for r in res.reports]
