"""`--input-layout nhwc` (passes/layout/input_layout.py): the compiled function takes the image
channels-last and no transpose runs before the first conv.

An ONNX stem (an RGB conv, ReLU, a max-pool, a 1x1 conv) compiled for llvm-cpu both ways: the
NHWC build is called with the same image transposed to [N, H, W, C] and must give the NCHW
build's and ONNX's reference result; its report lists no runtime transpose of the input, the
NCHW build's does. A dynamic batch keeps its runtime batch. The CLI takes the flag.
"""

import numpy as np
import pytest

from conftest import run_cli
from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402


def _stem(batch):
    rng = np.random.default_rng(3)
    w1 = numpy_helper.from_array((rng.standard_normal((16, 3, 3, 3)) * 0.3).astype(np.float32), "w1")
    w2 = numpy_helper.from_array((rng.standard_normal((8, 16, 1, 1)) * 0.3).astype(np.float32), "w2")
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p", "w2"], ["y"])]
    g = helper.make_graph(nodes, "stem", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 20, 18])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w1, w2])
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def _input_transposes(res):
    return [d for d, why in res.transposes if why.startswith("model input")]


@pytest.mark.parametrize("batch", [2, "N"], ids=["static", "dynamic-batch"])
def test_nhwc_input_matches_nchw_build_and_reference(tmp_path, batch):
    model = _stem(batch)
    src = tmp_path / "stem.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(0).standard_normal((2, 3, 20, 18)).astype(np.float32)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0]
    outs = {}
    for layout in ("nchw", "nhwc"):
        vmfb = tmp_path / f"stem_{layout}.vmfb"
        res = compile_file(str(src), str(vmfb), CompileOptions(target="llvm-cpu", input_layout=layout,
                                                               precision="fp32"))
        if layout == "nhwc":
            assert not _input_transposes(res), res.transposes
        elif batch == 2:
            assert _input_transposes(res), res.transposes
        arg = x if layout == "nchw" else np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        outs[layout] = LoadedModule(str(vmfb), "local-task").call(None, [(arg, "f32")])
    assert np.allclose(outs["nhwc"], outs["nchw"], rtol=1e-5, atol=1e-5)
    assert np.linalg.norm(outs["nhwc"] - ref) / np.linalg.norm(ref) < 1e-5


def test_cli_takes_input_layout(tmp_path):
    src = tmp_path / "stem.onnx"
    onnx.save(_stem(1), str(src))
    proc = run_cli("convc", str(src), "-o", str(tmp_path / "s.vmfb"), "--target", "llvm-cpu", "--input-layout", "nhwc",
                   "--report")
    assert proc.returncode == 0, proc.stderr
    assert "model input" not in proc.stdout
    bad = run_cli("convc", str(src), "-o", str(tmp_path / "s.vmfb"), "--input-layout", "hwcn")
    assert bad.returncode != 0 and "--input-layout" in bad.stderr


def _output_transposes(res):
    return [d for d, why in res.transposes if why.startswith("model output")]


@pytest.mark.parametrize("batch", [2, "N"], ids=["static", "dynamic-batch"])
def test_nhwc_output_is_the_nchw_result_transposed(tmp_path, batch):
    """--output-layout nhwc: the function returns [N, H, W, C], the NCHW build's result
    transposed, and no transpose dispatch follows the last conv (the NCHW build keeps one)."""
    model = _stem(batch)
    src = tmp_path / "stem.onnx"
    onnx.save(model, str(src))
    x = np.random.default_rng(1).standard_normal((2, 3, 20, 18)).astype(np.float32)
    outs = {}
    for layout in ("nchw", "nhwc"):
        vmfb = tmp_path / f"stem_out_{layout}.vmfb"
        res = compile_file(str(src), str(vmfb), CompileOptions(target="llvm-cpu", input_layout="nhwc",
                                                               output_layout=layout, precision="fp32"))
        assert bool(_output_transposes(res)) == (layout == "nchw"), res.transposes
        outs[layout] = LoadedModule(str(vmfb), "local-task").call(None, [(np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
                                                                           "f32")])
    assert outs["nhwc"].shape == (2, 5, 5, 8) and outs["nchw"].shape == (2, 8, 5, 5)
    np.testing.assert_allclose(outs["nhwc"], outs["nchw"].transpose(0, 2, 3, 1), rtol=1e-6, atol=1e-6)


def test_nhwc_output_with_runtime_image_sizes(tmp_path):
    """A coarse-fences PyTorch export with dynamic H and W and --output-layout nhwc: the
    exported tensor is transposed before the fence barrier, its runtime dims read at their NHWC
    positions; right at two sizes against PyTorch, with no transpose dispatch at either end."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir
    net = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, 1, 1), torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1),
                              torch.nn.Conv2d(16, 24, 1)).eval()
    (tmp_path / "m.mlir").write_text(export_mlir(net, (torch.randn(2, 8, 16, 16),), dynamic_spatial=True))
    res = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "m.vmfb"),
                       CompileOptions(target="llvm-cpu", input_layout="nhwc", output_layout="nhwc"))
    assert not _output_transposes(res) and not _input_transposes(res), res.transposes
    m = LoadedModule(str(tmp_path / "m.vmfb"), "local-task")
    for h, w in ((16, 16), (9, 13)):
        x = torch.randn(2, 8, h, w)
        with torch.no_grad():
            ref = net(x).permute(0, 2, 3, 1).numpy()
        got = m.call("main", [(x.permute(0, 2, 3, 1).contiguous().numpy(), "f32")])
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_cli_takes_output_layout(tmp_path):
    src = tmp_path / "stem.onnx"
    onnx.save(_stem(1), str(src))
    proc = run_cli("convc", str(src), "-o", str(tmp_path / "s.vmfb"), "--target", "llvm-cpu", "--output-layout", "nhwc",
                   "--report")
    assert proc.returncode == 0, proc.stderr
    assert "model output" not in proc.stdout
