"""LayerNorm over the channel axis on convc's row kernel (passes/plan/kernels/row_map.py): maps that
read a reduction of each pixel's channels (ConvProblem.row_reduce).

ONNX models conv -> channels-last LayerNormalization (IREE forms two dispatches: x minus the
row mean; the centred values times rsqrt of their mean square, scaled and shifted) -> 1x1 conv,
compiled for llvm-cpu (the same matcher, planner and emitter as the GPU targets) and run through
the IREE runtime on random data against ONNX's reference evaluator; channel counts whose
vectors split evenly over a row's lanes and ones that do not; the sm_90a build through ptxas.
"""

import numpy as np
import pytest

from conftest import PTXAS, assert_ptxas

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402


def _model(C: int, dtype, hw: tuple = (13, 11)):
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    rng = np.random.default_rng(1)

    def w(name, shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(dtype), name)

    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Transpose", ["c"], ["ct"], perm=[0, 2, 3, 1]),
             helper.make_node("LayerNormalization", ["ct", "g", "b"], ["n"], axis=-1, epsilon=1e-6),
             helper.make_node("Transpose", ["n"], ["nt"], perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["nt", "w3"], ["y"])]
    g = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", t, [2, 8, *hw])],
                          [helper.make_tensor_value_info("y", t, None)],
                          [w("w", (C, 8, 3, 3)), w("g", (C,), 1.0), w("b", (C,)), w("w3", (16, C, 1, 1))])
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


@pytest.mark.parametrize("C", [24, 96, 20])
def test_layer_norm_on_the_row_kernel_matches_the_onnx_reference(tmp_path, C):
    dtype = np.float32
    model = _model(C, dtype)
    src, out = tmp_path / "ln.onnx", tmp_path / "ln.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    rows = [r for r in res.reports if r.schedule is not None and r.schedule.kernel == "row_map"]
    assert len(rows) == 2 and all(r.is_map and r.problem.row_combine == "sum" for r in rows), \
        [r.line() for r in res.reports]
    x = np.random.default_rng(0).standard_normal((2, 8, 13, 11)).astype(dtype)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float64)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32")])
    assert got.shape == ref.shape and np.isfinite(got).all()
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5


@pytest.mark.parametrize("seed", range(3))
def test_random_layer_norm_widths(tmp_path, seed):
    """Random channel counts (2-299: vectors of 1-4 f32 elements) and images: right on the row
    kernel."""
    rng = np.random.default_rng(200 + seed)
    C, H, W = int(rng.integers(2, 300)), int(rng.integers(1, 12)), int(rng.integers(1, 12))
    model = _model(C, np.float32, (H, W))
    src, out = tmp_path / "ln.onnx", tmp_path / "ln.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    assert sum(r.schedule is not None and r.schedule.kernel == "row_map" for r in res.reports) == 2, \
        [r.line() for r in res.reports]
    x = rng.standard_normal((2, 8, H, W)).astype(np.float32)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float64)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32")])
    assert got.shape == ref.shape and np.isfinite(got).all()
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5, (C, H, W)


def test_row_lanes_rule():
    """A row's vectors split over the most lanes (up to a subgroup) that divide them evenly,
    more where a lane would otherwise hold over 8 vectors (then the last lanes' are masked)."""
    from convc.passes.plan.kernels.row_map import plan_row_map
    from convc.passes.problem import ConvProblem, EpilogueOp, EpilogueStep, OperandLoad
    from convc.passes.target import get_target

    def lanes(C):
        step = EpilogueStep("program", "f16", loads=(OperandLoad(0, "row", "f16"),),
                            program=(EpilogueOp("arith.subf", "f16", (0, 1)),))
        p = ConvProblem(N=1, H=1, W=100, C=C, F=C, R=1, S=1, groups=C, filter=-1, filter_layout="hwf", pool="sum",
                        dtype="f16", out_dtype="f16", epilogue=(EpilogueStep("cast", "f16"), step), row_combine="sum")
        return plan_row_map(p, get_target("sm_90a")).config.lanes
    assert [lanes(c) for c in (96, 192, 384, 768, 144, 40)] == [4, 8, 16, 32, 4, 1]




@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed (pip install nvidia-cuda-nvcc)")
@pytest.mark.parametrize("C", [96, 144])
def test_row_kernel_passes_ptxas(tmp_path, C):
    import glob
    src = tmp_path / "ln.onnx"
    onnx.save(_model(C, np.float32), str(src))
    dump = tmp_path / "dump"
    res = compile_file(str(src), str(tmp_path / "ln.vmfb"), CompileOptions(target="sm_90a", dump_dir=str(dump),
                                                                           tuning_cache="none"))
    assert sum(r.schedule is not None and r.schedule.kernel == "row_map" for r in res.reports) == 2
    ptx = [f for f in glob.glob(str(dump / "binaries" / "*.ptx")) if "rowmap" in open(f).read()]
    assert ptx
    assert_ptxas(tmp_path, ptx, "sm_90a")
