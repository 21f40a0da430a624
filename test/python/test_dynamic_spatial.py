"""Convs whose H and W are only known at run time (issue: dynamic spatial sizes): convc does
not take them yet, so IREE compiles them, and the model must still be right at every size, with
the reason in the report. An NCHW model as PyTorch/ONNX import it, a padded 3x3 and a strided
3x3 with ReLU, run at two image sizes against numpy."""

import numpy as np

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
    assert convs and all(r.path != "convc" for r in convs)
    assert any("only a dynamic batch is supported" in r.reason for r in convs), [r.line() for r in convs]
    assert res.model_convs == 2
    m = LoadedModule(str(tmp_path / "dyn_hw.vmfb"), "local-task")
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) / 8
    w2 = rng.standard_normal((8, 16, 3, 3)).astype(np.float32) / 12
    for h, w in ((12, 16), (22, 30)):
        x = rng.standard_normal((1, 8, h, w)).astype(np.float32)
        got = m.call("main", [(x, "f32"), (w1, "f32"), (w2, "f32")])
        ref = _reference(x, w1, w2)
        assert got.shape == ref.shape == (1, 8, h // 2, w // 2)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
