"""Linear layers on convc's GEMM kernels (convc-linear-weights, the GEMM form of a 1x1 conv).

Compiled for llvm-cpu, which runs the same matcher, planner and emitter as the GPU targets,
and run through the IREE runtime on random data; references independent of convc and IREE
(ONNX's reference evaluator, PyTorch fp32 on the CPU):
- an ONNX classifier head: Gemm with a transposed weight and bias, Relu, then MatMul with a
  [K, F] initializer and an Add: both GEMMs on convc, reported as Linear GEMMs;
- a ConvNeXt-style block from PyTorch: depthwise conv, LayerNorm over channels on NHWC, Linear
  -> GELU -> Linear with layer scale and residual, then a classifier Linear;
- a matmul of two activations stays with IREE.
"""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402


def _rel_err(got, ref):
    got, ref = got.astype(np.float64), ref.astype(np.float64)
    return np.linalg.norm(got - ref) / np.linalg.norm(ref)


def _head(dtype, seed=0):
    rng = np.random.default_rng(seed)
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16

    def init(name, shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(dtype), name)

    inits = [init("w", (32, 8, 3, 3)), init("fc1", (48, 32)), init("b1", (48,)), init("fc2", (48, 24)),
             init("b2", (24,))]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc1", "b1"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("MatMul", ["hr", "fc2"], ["m"]),
        helper.make_node("Add", ["m", "b2"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("x", t, [4, 8, 10, 10])],
                              [helper.make_tensor_value_info("y", t, [4, 24])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 1e-2)])
def test_onnx_gemm_and_matmul_on_convc(tmp_path, dtype, tol):
    model = _head(dtype)
    path = tmp_path / "head.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "head.vmfb"
    res = compile_file(str(path), str(out), CompileOptions(target="llvm-cpu", precision="fp32"))
    gemms = [r for r in res.reports if r.gemm]
    assert len(gemms) == 2 and all(r.path == "convc" for r in gemms), [r.line() for r in res.reports]
    assert {(r.problem.C, r.problem.F) for r in gemms} == {(32, 48), (48, 24)}
    assert all(r.line().split(": ")[1].startswith("Linear as GEMM M=4 K=") for r in gemms)
    lines = res.summary_lines()
    assert "2 of 2 Linear-layer GEMM executables on convc, running 2 of 2 GEMM dispatches per inference" in lines
    assert lines[0].startswith("1 of 1 conv executables on convc")
    x = np.random.default_rng(1).standard_normal((4, 8, 10, 10)).astype(dtype)
    ref = ReferenceEvaluator(model).run(None, {"x": x.astype(np.float32) if dtype == np.float32 else x})[0]
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32" if dtype == np.float32 else "f16")])
    assert got.shape == (4, 24)
    assert _rel_err(got, ref.astype(np.float32)) < tol


def test_activation_matmul_stays_with_iree(tmp_path):
    t = TensorProto.FLOAT
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "mm",
                              [helper.make_tensor_value_info("a", t, [8, 32]), helper.make_tensor_value_info("b", t, [32, 16])],
                              [helper.make_tensor_value_info("y", t, [8, 16])])
    path = tmp_path / "mm.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    res = compile_file(str(path), str(tmp_path / "mm.vmfb"), CompileOptions(target="llvm-cpu"))
    assert not any(r.gemm or r.path == "convc" for r in res.reports), [r.line() for r in res.reports]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32)
    got = LoadedModule(str(tmp_path / "mm.vmfb"), "local-task").call(None, [(a, "f32"), (b, "f32")])
    assert _rel_err(got, a @ b) < 1e-5


def test_pytorch_convnext_block(tmp_path):
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir

    class Block(torch.nn.Module):
        def __init__(self, c=32, classes=10):
            super().__init__()
            self.dw = torch.nn.Conv2d(c, c, 7, padding=3, groups=c)
            self.norm = torch.nn.LayerNorm(c, eps=1e-6)
            self.fc1 = torch.nn.Linear(c, 4 * c)
            self.fc2 = torch.nn.Linear(4 * c, c)
            self.gamma = torch.nn.Parameter(torch.rand(c) * 0.5 + 0.5)
            self.head = torch.nn.Linear(c, classes)

        def forward(self, x):
            y = self.dw(x).permute(0, 2, 3, 1)
            y = self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(y))))
            x = x + (self.gamma * y).permute(0, 3, 1, 2)
            return self.head(x.mean((2, 3)))

    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 32, 8, 8)
    src = tmp_path / "block.mlir"
    src.write_text(export_mlir(model, (x,)))
    out = tmp_path / "block.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu", precision="fp32"))
    gemms = [r for r in res.reports if r.gemm]
    assert len(gemms) == 3 and all(r.path == "convc" for r in gemms), [r.line() for r in res.reports]
    with torch.no_grad():
        ref = model(x).numpy()
    got = LoadedModule(str(out), "local-task").call(None, [(x.numpy(), "f32")])
    assert _rel_err(got, ref) < 1e-4


def test_pytorch_dynamic_batch_pool_and_classifier(tmp_path):
    """One build with a dynamic batch: the max-pool (direct kernel), the global pool with the
    bias before it, and the classifier (GEMM with runtime rows) on convc, right at two batches."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.pool = torch.nn.MaxPool2d(3, 2, 1)
            self.c2 = torch.nn.Conv2d(16, 32, 1)
            self.fc = torch.nn.Linear(32, 10)

        def forward(self, x):
            y = self.c2(self.pool(torch.relu(self.c(x))))
            return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1))

    torch.manual_seed(1)
    model = Net().eval()
    src = tmp_path / "net.mlir"
    src.write_text(export_mlir(model, (torch.randn(2, 3, 12, 12),), dynamic_batch=True))
    out = tmp_path / "net.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu", precision="fp32"))
    assert [r.path for r in res.reports if r.gemm] == ["convc"], [r.line() for r in res.reports]
    # the max-pool, and the global pool with c2's bias (fused into it by IREE) as its prologue
    pools = [r for r in res.reports if r.is_pool]
    assert [r.path for r in pools] == ["convc", "convc"], [r.line() for r in res.reports]
    assert [bool(r.problem.prologue) for r in pools] == [False, True]
    m = LoadedModule(str(out), "local-task")
    for batch in (1, 3):
        x = torch.randn(batch, 3, 12, 12)
        with torch.no_grad():
            ref = model(x).numpy()
        got = m.call(None, [(x.numpy(), "f32")])
        assert got.shape == (batch, 10)
        assert _rel_err(got, ref) < 1e-4
