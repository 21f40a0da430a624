"""Pooling windows on convc's direct kernel (passes/match/pool_forms.py, ConvProblem.pool).

ONNX models conv -> pool -> 1x1 conv (the pool between convs, so it is channels-last like the
pools of real CNNs), compiled for llvm-cpu (the same matcher, planner and emitter as the GPU
targets) and run through the IREE runtime on random data, against ONNX's reference evaluator:
max-pools with and without padding, strided and dilated, and average pools (a sum-pool whose
division by the window is an epilogue; divided by the in-image count, IREE keeps it), in f32 and f16. The pool
dispatch must be convc's.
"""

import numpy as np
import pytest

from conftest import PTXAS, assert_ptxas

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

POOLS = [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), "max"),
    ("MaxPool", dict(kernel_shape=[2, 2], strides=[2, 2]), "max"),
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], dilations=[2, 2]), "max"),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=1), "sum"),
    # divided by the in-image tap count, which IREE's import computes from the iteration index:
    # the pool stays with IREE (a correct fallback)
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0), None),
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2]), "sum"),
]


def _model(op, kw, dtype):
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array((rng.standard_normal((16, 8, 3, 3)) * 0.3).astype(dtype), "w")
    w2 = numpy_helper.from_array((rng.standard_normal((16, 16, 1, 1)) * 0.3).astype(dtype), "w2")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node(op, ["c"], ["p"], **kw),
             helper.make_node("Conv", ["p", "w2"], ["y"])]
    g = helper.make_graph(nodes, "pool", [helper.make_tensor_value_info("x", t, [2, 8, 13, 11])],
                          [helper.make_tensor_value_info("y", t, None)], [w, w2])
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 2e-3)], ids=["f32", "f16"])
@pytest.mark.parametrize("op,kw,kind", POOLS, ids=[f"{o}-{'x'.join(map(str, k['kernel_shape']))}-s{k['strides'][0]}"
                                                     f"{'-pad' if 'pads' in k else ''}{'-dil' if 'dilations' in k else ''}"
                                                     f"{'-incl' if k.get('count_include_pad') else ''}"
                                                     for o, k, _ in POOLS])
def test_pool_on_convc_matches_the_onnx_reference(tmp_path, op, kw, kind, dtype, tol):
    model = _model(op, kw, dtype)
    src, out = tmp_path / "pool.onnx", tmp_path / "pool.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    pools = [r for r in res.reports if r.is_pool]
    if kind is None:
        assert not pools and any(r.reason.startswith("pool not taken:") and "linalg.index" in r.reason
                                 for r in res.reports), [r.line() for r in res.reports]
        assert not any("linalg.index" in r.reason for r in res.reports if r.is_conv)
    else:
        assert len(pools) == 1 and pools[0].path == "convc", [r.line() for r in res.reports]
        assert pools[0].problem.pool == kind and f"{kind}-pool N=2" in pools[0].line()
        assert pools[0].schedule.kernel == "direct_grouped"
    x = np.random.default_rng(0).standard_normal((2, 8, 13, 11)).astype(dtype)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float64)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32" if dtype == np.float32 else "f16")])
    assert got.shape == ref.shape
    err = np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < tol, err


def test_pool_with_two_consumers_is_taken_without_multi_use_fusion(tmp_path):
    """DenseNet's transition: conv -> 2x2 average pool, the pooled tensor both concatenated and
    (through BatchNorm + ReLU) the next conv's input. IREE's multi-use fusion puts the pool and
    the BatchNorm + ReLU into one dispatch of two results, which no convc kernel writes: the
    driver builds the flow phase without it, and the pool and the map are convc's."""
    t = TensorProto.FLOAT
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), n)
             for n, s in (("w", (16, 8, 1, 1)), ("w2", (8, 16, 3, 3)), ("sc", (16,)), ("sh", (16,)))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("AveragePool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Unsqueeze", ["sc", "ax"], ["sc4"]), helper.make_node("Unsqueeze", ["sh", "ax"], ["sh4"]),
             helper.make_node("Mul", ["p", "sc4"], ["m"]), helper.make_node("Add", ["m", "sh4"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["d"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["p", "d"], ["y"], axis=1)]
    inits.append(numpy_helper.from_array(np.array([0, 2, 3], dtype=np.int64), "ax"))
    g = helper.make_graph(nodes, "transition", [helper.make_tensor_value_info("x", t, [2, 8, 10, 12])],
                          [helper.make_tensor_value_info("y", t, None)], inits)
    model = onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    src, out = tmp_path / "transition.onnx", tmp_path / "transition.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    lines = [r.line() for r in res.reports] + res.notes
    pools = [r for r in res.reports if r.is_pool]
    assert len(pools) == 1 and pools[0].path == "convc" and pools[0].problem.pool == "sum", lines
    assert any("fuse-multi-use=false" in n for n in res.notes), lines
    x = np.random.default_rng(0).standard_normal((2, 8, 10, 12)).astype(np.float32)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.float64)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32")])
    assert got.shape == ref.shape
    assert np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref) < 1e-5


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed (pip install nvidia-cuda-nvcc)")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_pool_kernels_pass_ptxas(tmp_path, arch):
    """The GPU form (max in packed f16, sums in f32) assembles for Hopper and Blackwell."""
    import glob
    for i, (op, kw, kind) in enumerate(p for p in POOLS if p[2]):
        src = tmp_path / f"p{i}.onnx"
        onnx.save(_model(op, kw, np.float16), str(src))
        dump = tmp_path / f"dump{i}"
        res = compile_file(str(src), str(tmp_path / f"p{i}.vmfb"),
                           CompileOptions(target=arch, dump_dir=str(dump), tuning_cache="none"))
        (pool,) = [r for r in res.reports if r.is_pool]
        assert pool.path == "convc"
        ptx = [f for f in glob.glob(str(dump / "binaries" / "*.ptx")) if "pool" in open(f).read()]
        assert ptx, "no PTX holds the pool kernel"
        assert_ptxas(tmp_path, ptx, arch)


def test_identity_rule():
    """What counts as a pool's padding/accumulator identity: -inf or the lowest finite value
    of the type for max (importers write either), zero for sum; anything else is declined."""
    from convc.passes.match.pool_forms import identity_value
    assert identity_value("max", float("-inf"), "f16") and identity_value("max", -65504.0, "f16")
    assert identity_value("max", -3.4028234663852886e38, "f32")
    assert not identity_value("max", 0.0, "f16") and not identity_value("max", -100.0, "f32")
    assert identity_value("sum", 0.0, "f32") and not identity_value("sum", 1.0, "f32")
    assert not identity_value("max", None, "f16")
