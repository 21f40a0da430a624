"""int8 convs on llvm-cpu: linalg i8 convs (s8 x s8 summed in i32) and QDQ ONNX models.

i8 layers are checked exactly against an integer numpy conv (the raw i32 accumulator) or its
requantization (at most one step off where f32 rounding meets a half); outputs are poisoned
(INT32_MIN / -128). QDQ models (onnxruntime's quantize_static, symmetric and asymmetric
activations) are compared with onnxruntime's CPU result for the same model: convc-quantized-conv
must have made their convs int8 (i8 -> i8 on convc's kernels).
"""

import numpy as np
import pytest

from conftest import compile_layer, run_layer_cpu
from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule
from convc.tools.layers import Layer

I8_LAYERS = [
    Layer("i8_acc_3x3", 2, 9, 7, 16, 24, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "i8", "none"),
    Layer("i8_3x3s2_relu", 2, 9, 7, 32, 40, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1), "i8", "bias_relu"),
    Layer("i8_1x1_residual", 2, 6, 6, 24, 40, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "i8", "bias_residual_relu"),
    Layer("i8_1x1_bias_n1", 1, 8, 8, 64, 48, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "i8", "bias"),
    Layer("i8_5x5_dil_asym", 1, 13, 11, 16, 20, 5, 3, (1, 2), (2, 1), (2, 1, 3, 0), "i8", "bias_relu"),
]


@pytest.mark.parametrize("layer", I8_LAYERS, ids=[L.name for L in I8_LAYERS])
def test_int8_layer_is_exact(tmp_path, layer):
    vmfb, res = compile_layer(tmp_path, layer)
    (r,) = res.reports
    assert r.path == "convc" and r.problem.dtype == "i8" and r.problem.acc_dtype == "i32", r.line()
    assert r.problem.out_dtype == layer.out_dtype
    for seed in (0, 1):
        got, ref = run_layer_cpu(vmfb, layer, seed)
        diff = np.abs(got - ref)
        if layer.epilogue == "none":
            assert diff.max() == 0
        else:
            assert diff.max() <= 1 and np.count_nonzero(diff) <= diff.size // 1000, (diff.max(), np.count_nonzero(diff))


def test_grouped_int8_conv_declines_with_its_reason(tmp_path):
    """Grouped i8 convs are IREE's (correct), with the reason in the report."""
    src = tmp_path / "g.mlir"
    src.write_text("""
func.func @main(%x: tensor<1x8x8x4x8xi8>, %w: tensor<4x8x3x3x8xi8>) -> tensor<1x6x6x4x8xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x6x6x4x8xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<1x6x6x4x8xi32>) -> tensor<1x6x6x4x8xi32>
  %y = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x8x8x4x8xi8>, tensor<4x8x3x3x8xi8>) outs(%f : tensor<1x6x6x4x8xi32>) -> tensor<1x6x6x4x8xi32>
  return %y : tensor<1x6x6x4x8xi32>
}
""")
    res = compile_file(str(src), str(tmp_path / "g.vmfb"), CompileOptions(target="llvm-cpu"))
    (r,) = res.reports
    assert r.path == "IREE" and "grouped i8 conv" in r.reason, r.line()


onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("symmetric,C,depthwise,pool", [
    (True, 16, False, False), (False, 16, False, False), (True, 3, False, True), (False, 3, False, True),
    (True, 16, True, False), (False, 16, True, True)],
    ids=["symmetric", "asymmetric", "rgb_pool_symmetric", "rgb_pool_asymmetric", "depthwise_symmetric",
         "depthwise_pool_asymmetric"])
def test_qdq_model_matches_onnxruntime(tmp_path, symmetric, C, depthwise, pool):
    """C = 3: the first conv (3 input channels: no int8 TMA rows) runs on integer-valued f16
    operands summed in f32, exactly, and so does a depthwise conv and a max-pool; the others as
    int8."""
    from convc.tools.quantized import qdq_quantize, small_net
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    small_net(f, C=C, depthwise=depthwise, pool=pool)
    qdq_quantize(f, q, symmetric=symmetric)
    res = compile_file(q, str(tmp_path / "q.vmfb"), CompileOptions(target="llvm-cpu"))
    convs = res.by_kind()["convs"]
    want = ["f16" if C == 3 else "i8", "f16" if depthwise else "i8", "i8", "i8"]
    assert len(convs) == 4 and all(r.path == "convc" for r in convs), [r.line() for r in convs]
    assert sorted(r.problem.dtype for r in convs) == sorted(want), [r.line() for r in convs]
    # activations stay int8 between the convs (integer-valued f16 into a depthwise conv); the last
    # conv's output is dequantized by the graph
    outs = sorted(r.problem.out_dtype for r in convs)
    assert outs == (["f16", "f32", "i8", "i8"] if depthwise or pool else ["f32", "i8", "i8", "i8"]), outs
    if pool:        # the pool reads f16 integers on convc's kernel
        (p,) = [r for r in res.reports if r.problem is not None and r.problem.pool == "max"]
        assert p.path == "convc" and p.problem.dtype == "f16", p.line()
    _assert_matches_onnxruntime(str(tmp_path / "q.vmfb"), q, C)


@pytest.mark.parametrize("target", ["llvm-cpu", "sm_90a"])
def test_qdq_convs_meeting_in_an_add_each_write_int8(tmp_path, target):
    """A residual add of two convs' quantized outputs (a projection shortcut): each conv
    writes int8 (quantized.fence_conv_meetings) rather than one writing its raw i32 sums for
    the other's epilogue, no transpose is left but the model's NCHW input and output, and the model matches onnxruntime."""
    from convc.tools.quantized import qdq_quantize, small_net
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    small_net(f, C=16, downsample=True)
    qdq_quantize(f, q)
    res = compile_file(q, str(tmp_path / "q.vmfb"), CompileOptions(target=target, tuning_cache="none"))
    convs = res.by_kind()["convs"]
    assert len(convs) == 5 and all(r.path == "convc" for r in convs), [r.line() for r in convs]
    assert sorted(r.problem.out_dtype for r in convs) == ["f32", "i8", "i8", "i8", "i8"], [r.line() for r in convs]
    assert all(why.startswith(("model input", "model output")) for _, why in res.transposes), res.transposes
    if target == "llvm-cpu":
        _assert_matches_onnxruntime(str(tmp_path / "q.vmfb"), q, 16)


@pytest.mark.parametrize("target", ["llvm-cpu", "sm_90a"])
def test_qdq_gemm_runs_as_an_int8_gemm(tmp_path, target):
    """A QDQ classifier Gemm (dequantized int8 activation and per-channel int8 weight) is an int8
    GEMM on convc's kernels (quantized.rewrite_quantized_matmul), listed as a GEMM, and the model
    matches onnxruntime."""
    from convc.tools.quantized import qdq_quantize, small_net
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    small_net(f, C=16, classifier=True)
    qdq_quantize(f, q)
    res = compile_file(q, str(tmp_path / "q.vmfb"), CompileOptions(target=target, tuning_cache="none"))
    gemms = [r for r in res.reports if r.gemm]
    assert len(gemms) == 1 and gemms[0].path == "convc" and gemms[0].problem.dtype == "i8", \
        [r.line() for r in res.reports]
    assert (gemms[0].problem.gemm_m, gemms[0].problem.C, gemms[0].problem.F) == (2, 24, 32)
    if target == "llvm-cpu":
        from convc.tools.quantized import ort_reference
        m = LoadedModule(str(tmp_path / "q.vmfb"), "local-task")
        for seed in (0, 1):
            x = np.random.default_rng(seed).standard_normal((2, 16, 10, 9)).astype(np.float32)
            (ref,) = ort_reference(q, {"x": x})
            got = np.asarray(m.call(m.entry, [(x, "f32")]))
            step = np.min(np.diff(np.unique(ref)))
            assert got.shape == ref.shape == (2, 32) and np.abs(got - ref).max() <= step * 1.01
            assert np.mean(got == ref) >= 0.99


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
def test_qdq_relu6_is_an_integer_clamp(tmp_path, symmetric):
    """Conv -> Clip(0, 6) -> Conv (MobileNet's ReLU6) in QDQ form: the clip between the
    dequantize and the quantize becomes an integer clamp folded into the first conv's
    requantize (no float select left in its epilogue), and the model matches onnxruntime."""
    from onnx import TensorProto, helper, numpy_helper
    from convc.tools.quantized import ort_reference, qdq_quantize
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal((32, 16, 1, 1)) * 0.5).astype(np.float32), "w"),
             numpy_helper.from_array((rng.standard_normal(32) * 0.5).astype(np.float32), "b"),
             numpy_helper.from_array((rng.standard_normal((24, 32, 1, 1)) * 0.2).astype(np.float32), "w2"),
             numpy_helper.from_array(np.array(0, np.float32), "lo"), numpy_helper.from_array(np.array(6, np.float32), "hi")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]), helper.make_node("Clip", ["c", "lo", "hi"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["y"])]
    g = helper.make_graph(nodes, "r6", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 24, 8, 8])], inits)
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), f)
    qdq_quantize(f, q, symmetric=symmetric)
    res = compile_file(q, str(tmp_path / "q.vmfb"), CompileOptions(target="llvm-cpu", tuning_cache="none"))
    convs = res.by_kind()["convs"]
    assert len(convs) == 2 and all(r.path == "convc" and r.problem.dtype == "i8" for r in convs), [r.line() for r in convs]
    first = next(r for r in convs if r.problem.F == 32)
    ops = [o.op for st in first.problem.epilogue if st.op == "program" for o in st.program]
    assert "arith.select" not in ops and "arith.cmpf" not in ops, ops
    m = LoadedModule(str(tmp_path / "q.vmfb"), "local-task")
    for seed in (0, 1):
        x = (np.random.default_rng(seed).standard_normal((2, 16, 8, 8)) * 2).astype(np.float32)
        (ref,) = ort_reference(q, {"x": x})
        got = np.asarray(m.call(m.entry, [(x, "f32")]))
        step = np.min(np.diff(np.unique(ref)))
        assert got.shape == ref.shape and np.abs(got - ref).max() <= step * 1.01
        assert np.mean(got == ref) >= 0.99


def test_qdq_global_average_pool_on_f16_integers(tmp_path):
    """A QDQ GlobalAveragePool sums f16 integers (exact in f32) on convc's global-pool kernel
    instead of IREE's reduction of the dequantized values; the result matches onnxruntime."""
    from onnx import TensorProto, helper, numpy_helper
    from convc.tools.quantized import ort_reference, qdq_quantize
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((64, 16, 3, 3)) * 0.1).astype(np.float32), "w")
    b = numpy_helper.from_array((rng.standard_normal(64) * 0.1).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["y"])]
    g = helper.make_graph(nodes, "gap", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 7, 7])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 64, 1, 1])], [w, b])
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), f)
    qdq_quantize(f, q)
    res = compile_file(q, str(tmp_path / "q.vmfb"), CompileOptions(target="llvm-cpu"))
    pools = [r for r in res.reports if r.problem is not None and r.problem.is_global_pool]
    assert len(pools) == 1 and pools[0].path == "convc" and pools[0].problem.dtype == "f16", [r.line() for r in res.reports]
    m = LoadedModule(str(tmp_path / "q.vmfb"), "local-task")
    x = rng.standard_normal((2, 16, 7, 7)).astype(np.float32)
    (ref,) = ort_reference(q, {"x": x})
    got = np.asarray(m.call(m.entry, [(x, "f32")]))
    step = np.min(np.diff(np.unique(ref)))
    assert got.shape == ref.shape and np.abs(got - ref).max() <= step * 1.01


def test_uint8_qdq_model_matches_onnxruntime(tmp_path):
    """uint8 activations (quantize_static's default, QUInt8): IREE marks their (de)quantize ops
    unsigned; the convs take the int8 path on q - 128 with the zero point less 128, and the
    generics convc-quantized-conv writes for the (de)quantize ops it leaves read and write
    0..255 (a signed read made ~70% of a QLinearConv's outputs wrong). Within one quantization
    step of onnxruntime."""
    from convc.tools.quantized import qdq_quantize, small_net
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    small_net(f, C=16)
    qdq_quantize(f, q, symmetric=False, activations="uint8")
    res = compile_file(q, str(tmp_path / "q.vmfb"), CompileOptions(target="llvm-cpu"))
    convs = res.by_kind()["convs"]
    assert len(convs) == 4 and all(r.path == "convc" and r.problem.dtype == "i8" for r in convs), \
        [r.line() for r in convs]
    # the zero-point pads are re-created channels-last: no transpose is left between convs (the
    # NCHW pad's barrier kept one alive per padded conv: 16 in a uint8 QDQ ResNet-50)
    assert all("model input" in why or "model output" in why for _, why in res.transposes), res.transposes
    _assert_matches_onnxruntime(str(tmp_path / "q.vmfb"), q, 16)


def _assert_matches_onnxruntime(vmfb: str, model: str, C: int) -> None:
    """The small_net QDQ model's convc build against onnxruntime's run of it on two random
    inputs: within one step of the output's quantization, equal on 99% of the outputs."""
    from convc.tools.quantized import ort_reference
    m = LoadedModule(vmfb, "local-task")
    for seed in (0, 1):
        x = np.random.default_rng(seed).standard_normal((2, C, 10, 9)).astype(np.float32)
        (ref,) = ort_reference(model, {"x": x})
        got = np.asarray(m.call(m.entry, [(x, "f32")]))
        # the output's quantization step: outputs agree to within one step
        step = np.min(np.diff(np.unique(ref))) if np.unique(ref).size > 1 else 1.0
        assert got.shape == ref.shape
        assert np.abs(got - ref).max() <= step * 1.01, np.abs(got - ref).max()
        assert np.mean(got == ref) >= 0.99
