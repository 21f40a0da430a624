"""Elementwise maps IREE collapses to one axis (passes/match/map_forms.py): a SiLU of a tensor
that also feeds a residual is a dispatch of its own whose operands are all shaped like the
output, so IREE flattens it to [L]; convc takes it as L / C pixels of C channels on its map
kernel. ONNX model (a VAE decoder block's shape: silu(h) -> conv, + h), compiled for llvm-cpu,
run on random data against numpy float64."""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def test_flat_silu_runs_as_a_convc_map(tmp_path):
    C, H, W = 16, 6, 5
    rng = np.random.default_rng(4)
    w0 = (rng.standard_normal((C, C, 1, 1)) / 4).astype(np.float32)
    w1 = (rng.standard_normal((C, C, 3, 3)) / 12).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w0"], ["h"], kernel_shape=[1, 1]),
             helper.make_node("Sigmoid", ["h"], ["s"]), helper.make_node("Mul", ["h", "s"], ["a"]),
             helper.make_node("Conv", ["a", "w1"], ["c"], kernel_shape=[3, 3], pads=[1] * 4),
             helper.make_node("Add", ["c", "h"], ["y"])]
    g = helper.make_graph(nodes, "blk", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(w1, "w1")])
    src = tmp_path / "blk.onnx"
    onnx.save(onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])), str(src))
    out = tmp_path / "m.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    x = rng.standard_normal((2, C, H, W)).astype(np.float32)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32")])
    h = np.einsum("nchw,fc->nfhw", x.astype(np.float64), w0[:, :, 0, 0].astype(np.float64))
    a = h / (1 + np.exp(-h))
    ap = np.pad(a, [(0, 0), (0, 0), (1, 1), (1, 1)])
    c = sum(np.einsum("nchw,fc->nfhw", ap[:, :, i:i + H, j:j + W], w1[:, :, i, j].astype(np.float64))
            for i in range(3) for j in range(3))
    ref = c + h
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5
    lines = [r.line() for r in res.reports]
    maps = res.by_kind()["maps"]
    assert maps and all(r.path == "convc" for r in maps), lines
    assert not [r for r in res.reports if r.path == "IREE" and "elementwise" in r.dispatch], lines


def test_load_time_flat_maps_stay_iree(tmp_path):
    """With the weights as parameters (convc-e2e's builds), the BatchNorm's per-channel vectors
    are computed in the module's initializers (flat elementwise dispatches, once per load):
    those stay IREE's."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir
    nn = torch.nn
    m = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU()).eval()
    params: list = []
    src = tmp_path / "m.mlir"
    src.write_text(export_mlir(m, (torch.zeros(1, 8, 6, 6),), parameters=params))
    res = compile_file(str(src), str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    lines = [r.line() for r in res.reports]
    assert any(r.dispatch.startswith("_initializer") for r in res.reports), lines
    assert not [r for r in res.reports if r.dispatch.startswith("_initializer") and r.path == "convc"], lines
