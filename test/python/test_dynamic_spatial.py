"""Convs whose H and W are only known at run time: convc-channels-last takes the NCHW model
channels-last with its dynamic sizes, the matcher reads the input's H and W as push-constant
words (ConvProblem.h_constant / w_constant), and the kernels derive Ho and Wo at run time (on
llvm-cpu the portable kernel; on sm_90a the persistent kernel patches its tensor maps). Checked
against numpy at sizes with partial tiles, odd widths and single pixels, outputs compared
exactly in shape; the kernel structure (words, runtime memref sizes) is pinned too."""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule
from convc.tools.gpu.reference import conv_nhwc_fhwc_numpy

MODEL = """
func.func @main(%x: tensor<1x8x?x?xf32>, %w1: tensor<16x8x3x3xf32>, %w2: tensor<8x16x3x3xf32>) -> tensor<1x8x?x?xf32> {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %h = tensor.dim %x, %c2 : tensor<1x8x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<1x8x?x?xf32>
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x8x?x?xf32> to tensor<1x8x?x?xf32>
  %e1 = tensor.empty(%h, %w) : tensor<1x16x?x?xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%xp, %w1 : tensor<1x8x?x?xf32>, tensor<16x8x3x3xf32>) outs(%a1 : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %r1 = linalg.generic {indexing_maps = [affine_map<(n, c, i, j) -> (n, c, i, j)>, affine_map<(n, c, i, j) -> (n, c, i, j)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y1 : tensor<1x16x?x?xf32>) outs(%e1 : tensor<1x16x?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x16x?x?xf32>
  %h2 = arith.divui %h, %c2 : index
  %w2d = arith.divui %w, %c2 : index
  %e2 = tensor.empty(%h2, %w2d) : tensor<1x8x?x?xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  %rp = tensor.pad %r1 low[0, 0, 1, 1] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x16x?x?xf32> to tensor<1x16x?x?xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
        ins(%rp, %w2 : tensor<1x16x?x?xf32>, tensor<8x16x3x3xf32>) outs(%a2 : tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  return %y2 : tensor<1x8x?x?xf32>
}
"""


def _reference(x, w1, w2):
    nhwc = np.moveaxis(x, 1, -1)
    y = np.maximum(conv_nhwc_fhwc_numpy(nhwc, np.moveaxis(w1, 1, -1), (1, 1), (1, 1), (1, 1, 1, 1)), 0)
    y = conv_nhwc_fhwc_numpy(y, np.moveaxis(w2, 1, -1), (2, 2), (1, 1), (1, 1, 0, 0))
    return np.moveaxis(y, -1, 1)


def test_dynamic_hw_model_is_right_at_every_size(tmp_path):
    src = tmp_path / "dyn_hw.mlir"
    src.write_text(MODEL)
    res = compile_file(str(src), str(tmp_path / "dyn_hw.vmfb"), CompileOptions(target="llvm-cpu"))
    convs = res.by_kind()["convs"]
    assert len(convs) == 2 and all(r.path == "convc" and r.problem.dynamic_spatial for r in convs), \
        [r.line() for r in convs]
    assert all("sizes read at run time" in r.reason and "H=? (planned for 64)" in r.line() for r in convs)
    assert res.model_convs == 2
    m = LoadedModule(str(tmp_path / "dyn_hw.vmfb"), "local-task")
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) / 8
    w2 = rng.standard_normal((8, 16, 3, 3)).astype(np.float32) / 12
    for h, w in ((12, 16), (22, 30), (2, 2), (6, 40)):
        x = rng.standard_normal((1, 8, h, w)).astype(np.float32)
        got = m.call("main", [(x, "f32"), (w1, "f32"), (w2, "f32")])
        ref = _reference(x, w1, w2)
        assert got.shape == ref.shape == (1, 8, h // 2, w // 2)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_runtime_sizes_model_matches_numpy_on_the_portable_kernel(tmp_path):
    """convc.tools.gpu.dynamic_spatial's model (NHWC f16: a padded 3x3 with bias and ReLU, a 3x3
    stride-2 conv adding a residual input) on llvm-cpu at every size the GPU check runs."""
    from convc.tools.gpu import dynamic_spatial as ds
    info = ds.prepare(str(tmp_path), "llvm-cpu")
    assert info["on_convc"] == 2, info
    rows = ds.check(str(tmp_path), "local-task")
    assert all(r["ok"] for r in rows), rows


@pytest.mark.parametrize("target", ["sm_90a", "llvm-cpu"])
def test_runtime_sizes_kernel_structure(tmp_path, target):
    """The kernels read H and W from push constants: the executable's layout has the dispatch's
    words, the activation and output bindings are sized from them, and on sm_90a the persistent
    kernel is the one planned (no clusters, stream-K or swapped tiles)."""
    from convc.tools.gpu import dynamic_spatial as ds
    src = tmp_path / "m.mlir"
    src.write_text(ds.MODEL)
    res = compile_file(str(src), str(tmp_path / "m.vmfb"), CompileOptions(target=target, dump_dir=str(tmp_path / "d")))
    convs = res.by_kind()["convs"]
    assert [r.path for r in convs] == ["convc", "convc"]
    p = convs[0].problem
    assert p.h_constant >= 0 and p.w_constant >= 0 and p.num_constants >= 2 and not p.dynamic_batch
    if target == "sm_90a":
        assert all(r.schedule.kernel.value == "sm90_ws_pingpong" for r in convs), [r.line() for r in convs]
    lowered = next((tmp_path / "d").glob("*.convc-lower-kernel.mlir")).read_text()
    assert "hal.interface.constant.load" in lowered and "memref<?xf16>" in lowered


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_pytorch_export_with_dynamic_image_sizes(tmp_path, layout):
    """torch.export with dynamic H and W (convc.compiler.pytorch dynamic_spatial): both convs on
    convc, right at two sizes; with --input-layout nhwc the image is taken channels-last and its
    runtime sizes are read from the buffer view at their NHWC positions."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(16, 32, 3, 2, 1)
            self.b = torch.nn.Conv2d(32, 32, 3, 1, 1)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    torch.manual_seed(0)
    net = Net().eval()
    (tmp_path / "m.mlir").write_text(export_mlir(net, (torch.randn(2, 16, 32, 32),), dynamic_spatial=True))
    res = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "m.vmfb"),
                       CompileOptions(target="llvm-cpu", input_layout=layout))
    convs = res.by_kind()["convs"]
    assert [r.path for r in convs] == ["convc", "convc"] and all(r.problem.dynamic_spatial for r in convs)
    m = LoadedModule(str(tmp_path / "m.vmfb"), "local-task")
    for h, w in ((20, 36), (9, 9)):
        x = torch.randn(2, 16, h, w)
        with torch.no_grad():
            ref = net(x).numpy()
        feed = x.permute(0, 2, 3, 1).contiguous().numpy() if layout == "nhwc" else x.numpy()
        got = m.call("main", [(feed, "f32")])
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", [11, 12])
def test_random_runtime_size_convs_match_numpy(tmp_path, seed):
    """Random convs with runtime H and W (convc.tools.gpu.dynamic_spatial.random_convs: windows
    up to 5x5, strides and dilations 1-2, asymmetric pads, half reading a channel window of a
    wider input, batch 1 or 2) on llvm-cpu at their smallest image, a slightly larger one and 17 x 23, against
    numpy; each also compiles for sm_90a, where none may fail to build. A draw found a crash in
    the matcher (a window whose runtime extent it could not trace), fixed since."""
    from convc.tools.gpu import dynamic_spatial as ds
    for i, conv in enumerate(ds.random_convs(seed, 5)):
        src = tmp_path / f"m{i}.mlir"
        src.write_text(conv.model())
        res = compile_file(str(src), str(tmp_path / f"m{i}.vmfb"), CompileOptions(target="llvm-cpu"))
        (r,) = res.by_kind()["convs"]
        assert r.path == "convc" and r.problem.runtime_sizes, (conv, r.line())   # a padded 1x1: runtime rows
        mh, mw = conv.min_size()
        rows = ds.check_build(conv, str(tmp_path / f"m{i}.vmfb"), "local-task", [(mh, mw), (mh + 5, mw + 3), (17, 23)])
        assert all(x["ok"] for x in rows), (conv, rows)
        res90 = compile_file(str(src), str(tmp_path / f"g{i}.vmfb"), CompileOptions(target="sm_90a"))
        (g,) = res90.by_kind()["convs"]
        assert g.path == "convc" and "read at run time" in g.reason, (conv, g.line())


def test_onnx_model_with_symbolic_image_sizes_at_batch_1(tmp_path):
    """An ONNX model (a strided conv, SiLU and a C2f block) whose H and W are symbolic, at batch
    1: IREE drops the unit batch in rank-reducing loads, so the conv's H and W are its input
    operand's dims 1 and 2 (Dispatch.input_dim_word). Before that mapping the window conv took
    W's word for H and H as static: rel. L2 0.11 against onnxruntime, where stock IREE is right.
    Checked against onnxruntime at three sizes."""
    torch = pytest.importorskip("torch")
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from convc.tools.e2e_models import C2f, load_synthetic
    net = load_synthetic(torch.nn.Sequential(torch.nn.Conv2d(8, 32, 3, 2, 1), torch.nn.SiLU(), C2f(32, 32, 1)),
                         seed=1).eval()
    path = str(tmp_path / "m.onnx")
    torch.onnx.export(net, (torch.randn(1, 8, 32, 32),), path, dynamo=False, opset_version=17, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {2: "h", 3: "w"}, "y": {2: "ho", 3: "wo"}})
    res = compile_file(path, str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    convs = res.by_kind()["convs"]
    assert all(r.path == "convc" for r in convs), [r.line() for r in convs]
    assert sum(1 for r in convs if r.problem.dynamic_spatial and r.problem.h_constant >= 0
               and r.problem.w_constant >= 0) >= 3
    m = LoadedModule(str(tmp_path / "m.vmfb"), "local-task")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for h, w in ((32, 32), (18, 40), (7, 9)):
        x = np.random.default_rng(h).standard_normal((1, 8, h, w)).astype(np.float32)
        (ref,) = sess.run(None, {"x": x})
        got = m.call("main_graph", [(x, "f32")])
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("batch", [1, 2])
def test_channel_concatenation_with_runtime_sizes_on_the_copy_kernel(tmp_path, batch):
    """A C2f block (1x1, chunk, two bottlenecks, concatenation of four maps, 1x1) exported with
    dynamic H and W: IREE's chain of copies into the concatenation (one `slow_memcpy` each, with
    runtime sizes) becomes one dispatch of convc's copy kernel whose rows are read at run time;
    right at three sizes against PyTorch (llvm-cpu)."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir
    from convc.tools.e2e_models import C2f, load_synthetic
    net = load_synthetic(C2f(16, 32, 2), seed=3).eval()
    (tmp_path / "m.mlir").write_text(export_mlir(net, (torch.randn(batch, 16, 16, 16),), dynamic_spatial=True))
    res = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    (copy,) = res.by_kind()["copies"]
    assert copy.path == "convc" and copy.copy.runtime_sizes and len(copy.copy.pieces) >= 3, copy.line()
    assert "rows read at run time" in copy.reason
    res90 = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "g.vmfb"), CompileOptions(target="sm_90a"))
    (g,) = res90.by_kind()["copies"]
    assert g.path == "convc" and g.copy.runtime_sizes, g.line()
    m = LoadedModule(str(tmp_path / "m.vmfb"), "local-task")
    for h, w in ((16, 16), (5, 11), (1, 3)):
        x = torch.randn(batch, 16, h, w)
        with torch.no_grad():
            ref = net(x).numpy()
        got = m.call("main", [(x.numpy(), "f32")])
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("batch", [1, 2])
def test_pools_and_depthwise_convs_with_runtime_sizes_on_the_direct_kernel(tmp_path, batch):
    """SPPF's chained 5x5 stride-1 max pools, a strided 3x3 max pool and depthwise 3x3s (stride 2
    and 1) with runtime H and W: each on the direct kernel, its items, bounds and grid from the
    runtime extents; right at four sizes against PyTorch (llvm-cpu) and built for sm_90a. (A
    grouped conv of groups < C with runtime H and W stays in its imported form, where stock IREE
    3.13 fails to build it for llvm-cpu: "write affecting operations on global resources are
    restricted to workgroup distributed contexts".)"""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(8, 32, 1)
            self.dw = torch.nn.Conv2d(32, 32, 3, 2, 1, groups=32)
            self.g = torch.nn.Conv2d(32, 32, 3, 1, 1, groups=32)
            self.m = torch.nn.MaxPool2d(5, 1, 2)
            self.s = torch.nn.MaxPool2d(3, 2, 1)

        def forward(self, x):
            y = torch.relu(self.a(x))
            p1 = self.m(y)
            p2 = self.m(p1)
            z = self.g(torch.relu(self.dw(y + p1 + p2)))
            return self.s(z)

    torch.manual_seed(0)
    net = Net().eval()
    (tmp_path / "m.mlir").write_text(export_mlir(net, (torch.randn(batch, 8, 16, 16),), dynamic_spatial=True))
    res = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    kinds = res.by_kind()
    windows = [r for r in kinds["convs"] + kinds["pools"] if r.problem is not None and r.problem.grouped]
    assert len(windows) >= 4 and all(r.path == "convc" and r.problem.dynamic_spatial for r in windows), \
        [r.line() for r in kinds["convs"] + kinds["pools"]]
    res90 = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "g.vmfb"), CompileOptions(target="sm_90a"))
    k90 = res90.by_kind()
    for r in [r for r in k90["convs"] + k90["pools"] if r.problem is not None and r.problem.grouped]:
        assert r.path == "convc" and r.schedule.kernel.value == "direct_grouped" and "read at run time" in r.reason, \
            r.line()
    m = LoadedModule(str(tmp_path / "m.vmfb"), "local-task")
    for h, w in ((16, 16), (9, 13), (1, 2), (20, 7)):
        x = torch.randn(batch, 8, h, w)
        with torch.no_grad():
            ref = net(x).numpy()
        got = m.call("main", [(x.numpy(), "f32")])
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_stems_and_window_ops_of_the_gpu_check_on_llvm_cpu(tmp_path):
    """The GPU check's fixed draws (tools/gpu/dynamic_spatial: STEM_CONVS, WINDOW_OPS) right on
    llvm-cpu against numpy at their smallest image and two others; on sm_90a the 3x3 RGB stems take
    the grouped tensor-core kernel with runtime sizes, the 7x7 one the gathered kernel, and the
    depthwise convs and max-pools the direct kernel."""
    from convc.tools.gpu import dynamic_spatial as ds
    for i, item in enumerate(list(ds.STEM_CONVS) + list(ds.WINDOW_OPS)):
        src = tmp_path / f"m{i}.mlir"
        src.write_text(item.model())
        res = compile_file(str(src), str(tmp_path / f"m{i}.vmfb"), CompileOptions(target="llvm-cpu"))
        kinds = res.by_kind()
        (r,) = kinds["convs"] + kinds["pools"]
        assert r.path == "convc" and r.problem.dynamic_spatial, (item, r.line())
        mh, mw = item.min_size()
        rows = ds.check_build(item, str(tmp_path / f"m{i}.vmfb"), "local-task", [(mh, mw), (mh + 5, mw + 3), (17, 23)])
        assert all(x["ok"] for x in rows), (item, rows)
        res90 = compile_file(str(src), str(tmp_path / f"g{i}.vmfb"), CompileOptions(target="sm_90a"))
        k90 = res90.by_kind()
        (g,) = k90["convs"] + k90["pools"]
        want = ("direct_grouped" if isinstance(item, ds.WindowOp) else
                "grouped_mma" if item.R == 3 else "sm90_gather_wgmma")
        assert g.path == "convc" and g.schedule.kernel.value == want and "read at run time" in g.reason, g.line()
