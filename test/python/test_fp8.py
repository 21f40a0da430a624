"""fp8 convs (OCP f8E4M3FN / f8E5M2 operands, f32 sums) taken from linalg: on llvm-cpu the
portable kernel (fp8 bytes reinterpreted and widened through f32) against a float64 numpy
reference decoded from the same bits (exact products: only the f32 sum rounds); on sm_90a the
persistent kernel with e4m3 / e5m2 wgmma (compile-only: no GPU run has checked it yet), and a
clear error where no fp8 kernel applies (stock IREE 3.13 fails on fp8 conversions for CUDA)."""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.compiler.errors import ConvcError
from convc.runtime.module import LoadedModule
from convc.runtime.arrays import fp8_values, random_fp8
from convc.tools.gpu.reference import conv_nhwc_fhwc_numpy


def _model(dtype: str, C: int, F: int = 64) -> str:
    x, w = f"tensor<2x8x8x{C}x{dtype}>", f"tensor<{F}x3x3x{C}x{dtype}>"
    return f"""
func.func @main(%x: {x}, %w: {w}, %b: tensor<{F}xf32>) -> tensor<2x8x8x{F}xf32> {{
  %zero = arith.constant 0.0 : f32
  %z8 = arith.constant 0.0 : {dtype}
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {{
  ^bb0(%a: index, %bb: index, %c: index, %d: index):
    tensor.yield %z8 : {dtype}
  }} : {x} to tensor<2x10x10x{C}x{dtype}>
  %e = tensor.empty() : tensor<2x8x8x{F}xf32>
  %a = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x{F}xf32>) -> tensor<2x8x8x{F}xf32>
  %y = linalg.conv_2d_nhwc_fhwc {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
        ins(%xp, %w : tensor<2x10x10x{C}x{dtype}>, {w}) outs(%a : tensor<2x8x8x{F}xf32>) -> tensor<2x8x8x{F}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(n, i, j, c) -> (n, i, j, c)>, affine_map<(n, i, j, c) -> (c)>,
                                        affine_map<(n, i, j, c) -> (n, i, j, c)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
        ins(%y, %b : tensor<2x8x8x{F}xf32>, tensor<{F}xf32>) outs(%e : tensor<2x8x8x{F}xf32>) {{
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }} -> tensor<2x8x8x{F}xf32>
  return %r : tensor<2x8x8x{F}xf32>
}}
"""


def test_fp8_decoding_of_known_values():
    e4m3, e5m2 = fp8_values("f8E4M3FN"), fp8_values("f8E5M2")
    assert e4m3[0x38] == 1.0 and e4m3[0x7E] == 448.0 and e4m3[0x01] == 2.0 ** -9 and np.isnan(e4m3[0x7F])
    assert e5m2[0x3C] == 1.0 and e5m2[0x7B] == 57344.0 and np.isinf(e5m2[0x7C]) and e4m3[0xB8] == -1.0


@pytest.mark.parametrize("dtype", ["f8E4M3FN", "f8E5M2"])
@pytest.mark.parametrize("C", [32, 128])
def test_fp8_conv_matches_numpy_on_the_portable_kernel(tmp_path, dtype, C):
    src = tmp_path / "m.mlir"
    src.write_text(_model(dtype, C))
    res = compile_file(str(src), str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    (conv,) = res.by_kind()["convs"]
    assert conv.path == "convc" and conv.problem.dtype == dtype and conv.problem.pad == (1, 1, 1, 1), conv.line()
    rng = np.random.default_rng(C)
    xb, xv = random_fp8(rng, (2, 8, 8, C), dtype)
    wb, wv = random_fp8(rng, (64, 3, 3, C), dtype, 0.1)
    b = rng.standard_normal(64).astype(np.float32)
    got = LoadedModule(str(tmp_path / "m.vmfb"), "local-task").call("main", [(xb, dtype), (wb, dtype), (b, "f32")])
    ref = conv_nhwc_fhwc_numpy(xv, wv, (1, 1), (1, 1), (1, 1, 1, 1), dtype=np.float64) + b
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype,ptx_type", [("f8E4M3FN", "e4m3"), ("f8E5M2", "e5m2")])
def test_fp8_conv_takes_the_fp8_wgmma_kernel_on_sm90a(tmp_path, dtype, ptx_type):
    src = tmp_path / "m.mlir"
    src.write_text(_model(dtype, 128))
    res = compile_file(str(src), str(tmp_path / "m.vmfb"), CompileOptions(target="sm_90a", dump_dir=str(tmp_path / "d")))
    (conv,) = res.by_kind()["convs"]
    assert conv.path == "convc" and conv.schedule.kernel.value.startswith("sm90_ws"), conv.line()
    assert f"{ptx_type} wgmma (f32 accumulation)" in conv.reason and conv.schedule.config.direct_stages == 0
    ptx = "".join(p.read_text() for p in (tmp_path / "d" / "binaries").glob("*.ptx"))
    assert f"wgmma.mma_async.sync.aligned.m64n64k32.f32.{ptx_type}.{ptx_type}" in ptx


def test_fp8_conv_without_an_fp8_kernel_is_a_clear_error_on_sm90a(tmp_path):
    src = tmp_path / "m.mlir"
    src.write_text(_model("f8E4M3FN", 32))
    with pytest.raises(ConvcError, match="fp8 conv not supported on sm_90a"):
        compile_file(str(src), str(tmp_path / "m.vmfb"), CompileOptions(target="sm_90a"))


@pytest.mark.parametrize("dtype", ["f8E4M3FN", "f8E5M2"])
def test_fp8_suite_layer_through_the_check_plumbing(tmp_path, dtype):
    """An fp8 layer of the 8-bit bench suite (tools.quantized: raw f32 sums) as the GPU check and
    bench run it: random fp8 bit patterns in, a NaN-poisoned f32 output, against the decoded
    numpy reference (llvm-cpu; the GPU runs the same through tools/gpu/check.py and bench.py)."""
    from convc.runtime.arrays import layer_arguments
    from convc.tools.gpu.reference import layer_reference_numpy, rel_l2
    from convc.tools.layers import Layer, layer_mlir
    L = Layer(name="t", N=2, H=8, W=8, C=64, F=32, R=3, S=3, pad=(1, 1, 1, 1), dtype=dtype, epilogue="none")
    (tmp_path / "m.mlir").write_text(layer_mlir(L))
    res = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    assert res.by_kind()["convs"][0].path == "convc"
    ins, _ = layer_arguments(L, np.random.default_rng(0))
    got = LoadedModule(str(tmp_path / "m.vmfb"), "local-task").call("main", ins)
    assert got.dtype == np.float32 and rel_l2(got, layer_reference_numpy(L, [a for a, _ in ins])) < 1e-6
    with pytest.raises(ValueError, match="fp8 layers"):
        Layer(name="b", N=1, H=4, W=4, C=64, F=64, R=1, S=1, dtype=dtype, epilogue="bias")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "gfx942"])
def test_fp8_conv_left_to_iree_is_a_named_error(tmp_path, arch):
    """A 1x1 fp8 conv with strides and a pad, which IREE presents as a GEMM over a strided view
    of the input (a form convc's matcher declines; found by convc-fuzz's fp8 draws): IREE's code
    generation cannot compile fp8 for CUDA or gfx942, so the compile stops with an error naming
    the dispatch and convc's reason, not IREE's failure inside LLVM translation."""
    from conftest import compile_layer
    from convc.tools.layers import Layer
    L = Layer("e5m2_strided_1x1", 1, 34, 16, 144, 16, 1, 1, (2, 3), (1, 3), (1, 0, 1, 1), "f8E5M2", "none")
    with pytest.raises(ConvcError, match=r"main_dispatch_\d+: fp8 values left to IREE's code generation, which "
                                         rf"cannot compile them for {arch} \(convc: conv not taken: strided GEMM operand\)"):
        compile_layer(tmp_path, L, target=arch, tuning_cache="none")
