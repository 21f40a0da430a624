"""ONNX ConvInteger (int32 sums of (x - x_zp) * (w - w_zp), onnxruntime's quantize_dynamic
writes it) against onnxruntime, exactly: IREE imports it as linalg's conv with zero-point
operands (uint8 inputs shifted to int8 first), which convc-quantized-conv makes the plain int8
conv less x_zp * colsum(w)[f] (rewrite_conv_q), on convc's int8 kernels. A filter zero point
other than 0 stays IREE's conv (correct too)."""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from test_onnx_qlinear import call_8bit, save_graph

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("act,x_zp,w_zp,stride", [("uint8", 7, 0, 1), ("int8", -5, 0, 2), ("uint8", None, None, 1),
                                                  ("int8", 3, 2, 1)],
                         ids=["uint8_zp", "int8_zp_stride2", "no_zero_points", "filter_zero_point"])
def test_conv_integer_matches_onnxruntime(tmp_path, act, x_zp, w_zp, stride):
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    np_t, onnx_t = (np.uint8, TensorProto.UINT8) if act == "uint8" else (np.int8, TensorProto.INT8)
    inits = [numpy_helper.from_array(rng.integers(-127, 128, (32, 16, 3, 3)).astype(np.int8), "w")]
    ins = ["x", "w"]
    if x_zp is not None:
        inits.append(numpy_helper.from_array(np.array(x_zp, np_t), "xz"))
        ins.append("xz")
        if w_zp is not None:
            inits.append(numpy_helper.from_array(np.array(w_zp, np.int8), "wz"))
            ins.append("wz")
    node = helper.make_node("ConvInteger", ins, ["y"], pads=[1, 1, 1, 1], strides=[stride, stride])
    path = save_graph(str(tmp_path / "ci.onnx"), [node], onnx_t, [2, 16, 9, 9], TensorProto.INT32, inits, 13)
    res = compile_file(path, str(tmp_path / "ci.vmfb"), CompileOptions(target="llvm-cpu"))
    (conv,) = res.by_kind()["convs"]
    if w_zp:
        assert conv.path != "convc", conv.line()
    else:
        assert conv.path == "convc" and conv.problem.dtype == "i8" and conv.problem.out_dtype == "i32", conv.line()
    info = np.iinfo(np_t)
    x = rng.integers(info.min, info.max + 1, (2, 16, 9, 9)).astype(np_t)
    ref = ort.InferenceSession(path).run(None, {"x": x})[0]
    got = call_8bit(str(tmp_path / "ci.vmfb"), x)
    assert got.shape == ref.shape and np.array_equal(got.astype(np.int64), ref.astype(np.int64))
