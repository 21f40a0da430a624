"""Squeeze-excitation on convc kernels: the global pool (passes/plan/kernels/global_pool.py), the
excitation FCs on the skinny GEMM kernel (passes/plan/kernels/skinny_gemm.py) and the scale as an
elementwise map (passes/match/map_forms.py, ConvProblem.is_map).

ONNX models conv -> squeeze-excitation (GlobalAveragePool or GlobalMaxPool -> 1x1 conv + bias -> relu
-> 1x1 conv + bias -> sigmoid or hard-sigmoid -> Mul with the conv's output) -> 1x1 conv, at
batch 2 (IREE's [N, H*W, C] reductions and [N, C] scale operands) and batch 1 (IREE drops the
unit batch: [H*W, C]), compiled for llvm-cpu (the same matcher, planner and emitters as the GPU
targets) and run through the IREE runtime on random data against ONNX's reference evaluator
(every output finite). The pool must run on the global-pool kernel and the scale as a map.
"""

import numpy as np
import pytest

from conftest import PTXAS, assert_ptxas

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

SHAPE = (8, 13, 11)


def _model(batch: int, dtype, gate: str = "Sigmoid", squeeze: str = "GlobalAveragePool", width: int = 8,
           channels: int = 16, hw: tuple = SHAPE[1:]):
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    rng = np.random.default_rng(1)

    def w(name, shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(dtype), name)

    C = channels
    inits = [w("w", (C, 8, 3, 3)), w("w1", (width, C, 1, 1)), w("b1", (width,)), w("w2", (C, width, 1, 1)),
             w("b2", (C,)), w("w3", (16, C, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node(squeeze, ["c"], ["g"]),
             helper.make_node("Conv", ["g", "w1", "b1"], ["h"]),
             helper.make_node("Relu", ["h"], ["hr"]),
             helper.make_node("Conv", ["hr", "w2", "b2"], ["s0"]),
             helper.make_node(gate, ["s0"], ["s"]),
             helper.make_node("Mul", ["c", "s"], ["m"]),
             helper.make_node("Conv", ["m", "w3"], ["y"])]
    g = helper.make_graph(nodes, "se", [helper.make_tensor_value_info("x", t, [batch, SHAPE[0], *hw])],
                          [helper.make_tensor_value_info("y", t, None)], inits)
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


# (batch, gate, squeeze, squeeze width): the excitation FCs are GEMMs of `batch` rows on the skinny
# kernel; a width of 6 leaves a partial block of 4 channels and 2-element K vectors in the second
CASES = [(2, "Sigmoid", "GlobalAveragePool", 8), (1, "Sigmoid", "GlobalAveragePool", 8),
         (2, "HardSigmoid", "GlobalAveragePool", 8), (2, "Sigmoid", "GlobalMaxPool", 8),
         (3, "Sigmoid", "GlobalAveragePool", 6)]


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 2e-3)], ids=["f32", "f16"])
@pytest.mark.parametrize("batch,gate,squeeze,width", CASES, ids=[f"b{b}-{g}-{s}-w{w}" for b, g, s, w in CASES])
def test_squeeze_excitation_on_convc_matches_the_onnx_reference(tmp_path, batch, gate, squeeze, width, dtype, tol):
    model = _model(batch, dtype, gate, squeeze, width)
    src, out = tmp_path / "se.onnx", tmp_path / "se.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    kinds = res.by_kind()
    lines = [r.line() for r in res.reports]
    (pool,) = kinds["pools"]
    assert pool.path == "convc" and pool.schedule.kernel == "global_pool", lines
    assert pool.problem.is_global_pool and pool.problem.pool == ("max" if squeeze == "GlobalMaxPool" else "sum")
    (scale,) = kinds["maps"]
    assert scale.path == "convc" and scale.problem.is_map and "elementwise map" in scale.line(), lines
    if batch > 1:       # the excitation is read per image and channel; its FCs are skinny GEMMs
        assert any(ld.broadcast == "image" for ld in scale.problem.operand_loads)
        fcs = [r for r in kinds["convs"] if r.problem.gemm_m == batch]
        assert len(fcs) == 2 and all(r.schedule.kernel == "skinny_gemm" for r in fcs), lines
    x = np.random.default_rng(0).standard_normal((batch, *SHAPE)).astype(dtype)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float64)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32" if dtype == np.float32 else "f16")])
    assert got.shape == ref.shape and np.isfinite(got).all()
    err = np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < tol, err


@pytest.mark.parametrize("seed", range(4))
def test_random_squeeze_excitation_shapes(tmp_path, seed):
    """Random batch (1-4), channels (2-99: vectors of 1-8 elements, partial chunks), image
    (1-19 x 1-19) and squeeze width (1-39), f32 or f16: right wherever convc takes the pool,
    FCs and scale."""
    rng = np.random.default_rng(100 + seed)
    batch, C, H, W, width = (int(rng.integers(lo, hi)) for lo, hi in ((1, 5), (2, 100), (2, 20), (2, 20), (1, 40)))
    dtype, tol = ((np.float32, 1e-5), (np.float16, 3e-3))[seed % 2]
    model = _model(batch, dtype, width=width, channels=C, hw=(H, W))
    src, out = tmp_path / "se.onnx", tmp_path / "se.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    kinds = res.by_kind()
    assert [r.path for r in kinds["pools"] + kinds["maps"]] == ["convc", "convc"], [r.line() for r in res.reports]
    x = rng.standard_normal((batch, SHAPE[0], H, W)).astype(dtype)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float64)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32" if dtype == np.float32 else "f16")])
    assert got.shape == ref.shape and np.isfinite(got).all()
    assert np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref) < tol, (batch, C, H, W, width)


def test_global_pool_plan_fills_the_gpu():
    """Wide channel chunks while the grid keeps two workgroups per SM, narrower ones (never
    below a 32-byte sector per pixel) below that, 1024-thread workgroups where the grid is
    smaller than the GPU."""
    from convc.passes.plan.kernels.global_pool import plan_global_pool
    from convc.passes.problem import ConvProblem
    from convc.passes.target import get_target

    def plan(N, P, C):
        p = ConvProblem(N=N, H=P, W=1, C=C, F=C, R=P, S=1, groups=C, filter=-1, filter_layout="hwf", pool="sum",
                        dtype="f16", out_dtype="f16")
        return plan_global_pool(p, get_target("sm_90a"))
    s = plan(32, 49, 1152)
    assert s.config.vectors == 8 and s.threads == 256 and s.grid == (32 * 18, 1, 1)
    s = plan(32, 3136, 144)
    assert s.config.vectors == 2 and s.grid == (32 * 9, 1, 1)
    s = plan(32, 12544, 32)
    assert s.config.vectors == 2 and s.threads == 1024 and s.grid == (64, 1, 1)




@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed (pip install nvidia-cuda-nvcc)")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_squeeze_excitation_kernels_pass_ptxas(tmp_path, arch):
    import glob
    src = tmp_path / "se.onnx"
    onnx.save(_model(2, np.float16), str(src))
    dump = tmp_path / "dump"
    res = compile_file(str(src), str(tmp_path / "se.vmfb"), CompileOptions(target=arch, dump_dir=str(dump),
                                                                           tuning_cache="none"))
    kinds = res.by_kind()
    assert [r.path for r in kinds["pools"] + kinds["maps"]] == ["convc", "convc"]
    assert sum(r.schedule.kernel == "skinny_gemm" for r in kinds["convs"]) == 2
    ptx = glob.glob(str(dump / "binaries" / "*.ptx"))
    assert any("poolsum_" in open(f).read() for f in ptx) and any("map_" in open(f).read() for f in ptx)
    assert_ptxas(tmp_path, ptx, arch)


def _head_model(batch: int, dtype, act: str, squeeze: str = "GlobalAveragePool", channels: int = 40,
                hw: tuple = (7, 5), residual: bool = False):
    """conv -> BatchNormalization (-> + a second conv's output: a residual) -> activation ->
    global pool -> Flatten: a classifier head, where IREE fuses the BatchNorm, residual add and
    activation into the pool's reduction (the conv's sole consumer is the pool)."""
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    rng = np.random.default_rng(3)

    def w(name, shape, scale=0.3, shift=0.0):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale + shift).astype(dtype), name)

    C = channels
    inits = [w("w", (C, 8, 1, 1)), w("g", (C,), 0.2, 1.0), w("b", (C,)), w("mu", (C,)),
             numpy_helper.from_array((rng.random(C) + 0.5).astype(dtype), "var")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("BatchNormalization", ["c", "g", "b", "mu", "var"], ["n0" if residual else "n"],
                              epsilon=1e-5)]
    if residual:
        inits.append(w("w2", (C, 8, 3, 3)))
        nodes += [helper.make_node("Conv", ["x", "w2"], ["r"], pads=[1, 1, 1, 1]),
                  helper.make_node("Add", ["n0", "r"], ["n"])]
    if act == "SiLU":
        nodes += [helper.make_node("Sigmoid", ["n"], ["sg"]), helper.make_node("Mul", ["n", "sg"], ["a"])]
    else:
        nodes += [helper.make_node(act, ["n"], ["a"])]
    nodes += [helper.make_node(squeeze, ["a"], ["p"]), helper.make_node("Flatten", ["p"], ["y"])]
    g = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("x", t, [batch, 8, *hw])],
                          [helper.make_tensor_value_info("y", t, None)], inits)
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


HEADS = [(2, "SiLU", "GlobalAveragePool", 40, False), (1, "HardSwish", "GlobalMaxPool", 24, False),
         (3, "Relu", "GlobalAveragePool", 20, False), (2, "SiLU", "GlobalAveragePool", 36, False),
         (2, "Relu", "GlobalAveragePool", 32, True)]


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 2e-3)], ids=["f32", "f16"])
@pytest.mark.parametrize("batch,act,squeeze,channels,residual", HEADS,
                         ids=[f"b{b}-{a}-{s}-c{c}{'-residual' if r else ''}" for b, a, s, c, r in HEADS])
def test_pool_with_fused_batchnorm_and_activation(tmp_path, batch, act, squeeze, channels, residual, dtype, tol):
    """The BatchNorm, residual add and activation IREE fuses into a global pool's reduction run
    on the global-pool kernel as its prologue (ConvProblem.prologue: per-channel operands, and the
    residual shaped like the input), not on IREE's reduction codegen; against ONNX's reference on
    random data."""
    model = _head_model(batch, dtype, act, squeeze, channels, residual=residual)
    src, out = tmp_path / "head.onnx", tmp_path / "head.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    lines = [r.line() for r in res.reports]
    (pool,) = res.by_kind()["pools"]
    assert pool.path == "convc" and pool.schedule.kernel == "global_pool", lines
    assert len(pool.problem.prologue) == 1 and pool.problem.prologue[0].loads, lines
    assert {ld.broadcast for ld in pool.problem.prologue[0].loads} <= {"channel", "full"}
    if residual:
        assert "full" in {ld.broadcast for ld in pool.problem.prologue[0].loads}, lines
    x = np.random.default_rng(0).standard_normal((batch, 8, 7, 5)).astype(dtype)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float64)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32" if dtype == np.float32 else "f16")])
    assert got.shape == ref.shape and np.isfinite(got).all()
    err = np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < tol, err
