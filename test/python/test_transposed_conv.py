"""Transposed convs as sub-pixel convs (passes/layout/subpixel.py, convc-subpixel-conv).

ONNX ConvTranspose and PyTorch nn.ConvTranspose2d models, compiled for llvm-cpu (the same
passes, matcher and planner as the GPU targets), run through the IREE runtime on random data
against an independent numpy scatter of every input pixel through the filter. Where the
rewrite applies, the model runs stride^2 convs over the real input (no conv reads the
zero-inserted tensor); where it does not (a pad of K or more, a dilated transposed conv), the
imported form stays, still right.
"""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def conv_transpose_reference(x, w, b, stride, pad, out_pad, dilation=(1, 1)):
    """y[n, f, ih*s + kh*d - p, iw*s + kw*d - p] += x[n, c, ih, iw] * w[c, f, kh, kw] (float64)."""
    n, c, h, wd = x.shape
    _, f, kh, kw = w.shape
    (sh, sw), (dh, dw), (ph, pw), (oph, opw) = stride, dilation, pad, out_pad
    full_h = (h - 1) * sh + (kh - 1) * dh + 1 + oph
    full_w = (wd - 1) * sw + (kw - 1) * dw + 1 + opw
    y = np.zeros((n, f, full_h, full_w))
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for i in range(kh):
        for j in range(kw):
            contrib = np.einsum("nchw,cf->nfhw", x64, w64[:, :, i, j])
            y[:, :, i * dh:i * dh + (h - 1) * sh + 1:sh, j * dw:j * dw + (wd - 1) * sw + 1:sw] += contrib
    y = y[:, :, ph:full_h - ph, pw:full_w - pw]
    if b is not None:
        y += b.astype(np.float64)[None, :, None, None]
    return y


# (C, F, H, W, K, stride, pad, output_padding, batch): the decoder upsamplers (3x3/2 with
# output padding 1, 4x4/2 pad 1, 2x2/2), stride 3, odd sizes, a pad leaving outputs not a
# multiple of the stride, non-square, pads of K - 1 and more (phases that drop leading outputs)
CASES = [(16, 8, 8, 8, 3, 2, 1, 1, 2), (16, 8, 7, 9, 4, 2, 1, 0, 1), (8, 16, 6, 6, 2, 2, 0, 0, 2),
         (8, 8, 5, 5, 3, 3, 1, 0, 1), (16, 24, 9, 7, 3, 2, 1, 0, 2), (24, 8, 6, 10, 5, 2, 2, 1, 1),
         (8, 8, 6, 6, 2, 2, 1, 0, 1), (8, 8, 5, 7, 4, 2, 3, 1, 1)]


def _onnx_model(C, F, H, W, K, s, p, op, batch, dtype, act="Relu", dilation=1):
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    rng = np.random.default_rng(C * 100 + K * 10 + s)
    w = (rng.standard_normal((C, F, K, K)) * 0.2).astype(dtype)
    b = rng.standard_normal(F).astype(dtype)
    attrs = dict(strides=[s, s], pads=[p, p, p, p], kernel_shape=[K, K])
    if op:
        attrs["output_padding"] = [op, op]
    if dilation != 1:
        attrs["dilations"] = [dilation, dilation]
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["t"], **attrs), helper.make_node(act, ["t"], ["y"])]
    g = helper.make_graph(nodes, "up", [helper.make_tensor_value_info("x", t, [batch, C, H, W])],
                          [helper.make_tensor_value_info("y", t, None)],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])), w, b


def _run(tmp_path, src, x, et):
    out = tmp_path / "m.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    got = LoadedModule(str(out), "local-task").call(None, [(x, et)])
    return res, got


def _rel(got, ref):
    return np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 3e-3)], ids=["f32", "f16"])
@pytest.mark.parametrize("C,F,H,W,K,s,p,op,batch", CASES, ids=[f"c{c[0]}f{c[1]}_{c[2]}x{c[3]}_k{c[4]}s{c[5]}p{c[6]}o{c[7]}"
                                                                  for c in CASES])
def test_onnx_conv_transpose_runs_as_subpixel_convs(tmp_path, C, F, H, W, K, s, p, op, batch, dtype, tol):
    model, w, b = _onnx_model(C, F, H, W, K, s, p, op, batch, dtype)
    src = tmp_path / "up.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(0).standard_normal((batch, C, H, W)).astype(dtype)
    res, got = _run(tmp_path, src, x, "f32" if dtype == np.float32 else "f16")
    ref = np.maximum(conv_transpose_reference(x, w, b, (s, s), (p, p), (op, op)), 0)
    assert got.shape == ref.shape and np.isfinite(got).all()
    assert _rel(got, ref) < tol
    convs = res.by_kind()["convs"]
    lines = [r.line() for r in res.reports]
    # stride^2 phase convs over the real input (one conv of stride^2 * F channels where every
    # phase has the same window: K a multiple of the stride, as 2x2/2 and 4x4/4), every one on
    # convc, none over zeros: their taps times channels add up to the filter's
    sites = sum(r.sites for r in convs)
    assert sites in (s * s, 1) and all(r.path == "convc" for r in convs), lines
    zero_inserted = batch * ((H - 1) * s + 1) * ((W - 1) * s + 1)
    assert all(r.problem.N * r.problem.H * r.problem.W < zero_inserted / 2 for r in convs), lines
    assert sum(r.problem.R * r.problem.S * r.problem.F * r.sites for r in convs) == K * K * F, lines
    if sites == 1:
        assert K % s == 0 and convs[0].problem.F == s * s * F


@pytest.mark.parametrize("K,s,p,dilation", [(2, 3, 0, 1), (3, 2, 1, 2)], ids=["filter_under_stride", "dilated"])
def test_transposed_convs_the_rewrite_leaves_stay_right(tmp_path, K, s, p, dilation):
    """A filter smaller than the stride (phases meeting no tap) and a dilated transposed conv
    keep the imported zero-inserted form: one conv, still right."""
    C, F, H, W = 8, 8, 6, 6
    model, w, b = _onnx_model(C, F, H, W, K, s, p, 0, 1, np.float32, dilation=dilation)
    src = tmp_path / "up.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(1).standard_normal((1, C, H, W)).astype(np.float32)
    res, got = _run(tmp_path, src, x, "f32")
    ref = np.maximum(conv_transpose_reference(x, w, b, (s, s), (p, p), (0, 0), (dilation, dilation)), 0)
    assert got.shape == ref.shape and _rel(got, ref) < 1e-5
    assert sum(r.sites for r in res.by_kind()["convs"]) == 1


def test_pytorch_conv_transpose2d_runs_as_subpixel_convs(tmp_path):
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir

    class Up(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = torch.nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1)
            self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return self.conv(torch.nn.functional.silu(self.up(x)))

    torch.manual_seed(0)
    m = Up().eval()
    x = torch.randn(2, 16, 9, 7)
    src = tmp_path / "up.mlir"
    src.write_text(export_mlir(m, (x,)))
    res, got = _run(tmp_path, src, x.numpy(), "f32")
    with torch.no_grad():
        ref = m.double()(x.double()).numpy()
    assert got.shape == ref.shape and _rel(got, ref) < 1e-5
    convs = res.by_kind()["convs"]
    assert sum(r.sites for r in convs) == 5 and all(r.path == "convc" for r in convs), [r.line() for r in res.reports]


def test_onnx_patch_unembedding_k_equals_stride_is_one_conv(tmp_path):
    """K = s = 4 (non-overlapping patches back to pixels): one conv of 16 * F channels, then
    depth-to-space."""
    model, w, b = _onnx_model(16, 8, 5, 6, 4, 4, 0, 0, 2, np.float32)
    src = tmp_path / "up.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(2).standard_normal((2, 16, 5, 6)).astype(np.float32)
    res, got = _run(tmp_path, src, x, "f32")
    ref = np.maximum(conv_transpose_reference(x, w, b, (4, 4), (0, 0), (0, 0)), 0)
    assert got.shape == ref.shape == (2, 8, 20, 24) and _rel(got, ref) < 1e-5
    (conv,) = res.by_kind()["convs"]
    assert conv.sites == 1 and conv.problem.F == 16 * 8 and conv.problem.R * conv.problem.S == 1


def _draws(n: int, seed: int = 2043):
    """Random transposed convs: kernel 1-5, stride 1-4, pad below the kernel, output padding
    below the stride, channels 8-24, odd and even sizes, batch 1-2."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        K, s = int(rng.integers(1, 6)), int(rng.integers(1, 5))
        p, op = int(rng.integers(0, K)), int(rng.integers(0, s))
        C, F = 8 * int(rng.integers(1, 4)), 8 * int(rng.integers(1, 4))
        H, W, batch = int(rng.integers(3, 10)), int(rng.integers(3, 10)), int(rng.integers(1, 3))
        if op >= max(s, 1) or (H - 1) * s - 2 * p + K + op < 1 or (W - 1) * s - 2 * p + K + op < 1:
            continue
        out.append((C, F, H, W, K, s, p, op, batch))
    return out


@pytest.mark.parametrize("C,F,H,W,K,s,p,op,batch", _draws(10), ids=[f"draw{i}" for i in range(10)])
def test_random_conv_transposes_match_the_scatter_reference(tmp_path, C, F, H, W, K, s, p, op, batch):
    """Fuzz draws over the transposed-conv parameters: whatever form convc leaves (phases, one
    conv with depth-to-space, or the imported one), the result is the scatter reference's."""
    model, w, b = _onnx_model(C, F, H, W, K, s, p, op, batch, np.float32)
    src = tmp_path / "up.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(3).standard_normal((batch, C, H, W)).astype(np.float32)
    res, got = _run(tmp_path, src, x, "f32")
    ref = np.maximum(conv_transpose_reference(x, w, b, (s, s), (p, p), (op, op)), 0)
    assert got.shape == ref.shape and _rel(got, ref) < 1e-5, [r.line() for r in res.reports]
