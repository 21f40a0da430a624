"""End-to-end numerics on llvm-cpu: convc-compiled models against a numpy fp32 reference.

Random inputs, NaN-poisoned output buffers (every element must be written), shapes that
exercise padding (symmetric and not), strides, dilations, tails in M and F, channel counts
that are not multiples of the vector width, bf16, and every epilogue.
"""

import numpy as np
import pytest

from conftest import assert_outputs_right, compile_layer, run_layer_cpu
from convc.tools.layers import Layer

CASES = [
    Layer("pad3x3_bias_relu", 2, 9, 7, 16, 24, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias_relu"),
    Layer("valid_f32_out", 2, 11, 13, 8, 20, 3, 3, (1, 1), (1, 1), (0, 0, 0, 0), "f16", "none"),
    Layer("stride2_dil2", 1, 17, 15, 16, 32, 3, 3, (2, 2), (2, 2), (2, 2, 2, 2), "f16", "bias_relu"),
    Layer("stride2x1_dil1x2", 2, 10, 12, 8, 16, 3, 3, (2, 1), (1, 2), (1, 2, 0, 1), "f16", "bias"),
    Layer("asym_pad_residual", 2, 8, 8, 16, 32, 3, 3, (1, 1), (1, 1), (0, 0, 1, 1), "f16", "bias_residual_relu"),
    Layer("bf16_residual", 2, 9, 9, 16, 24, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "bf16", "bias_residual_relu"),
    Layer("c3_7x7s2", 2, 20, 18, 3, 16, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3), "f16", "bias_relu"),
    Layer("c6_odd_f", 1, 7, 9, 6, 13, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias_relu"),
    Layer("n1_1x1_gemm", 1, 7, 7, 64, 48, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "f16", "bias_relu"),
    Layer("s2_1x1", 2, 9, 9, 32, 64, 1, 1, (2, 2), (1, 1), (0, 0, 0, 0), "f16", "bias"),
    Layer("gemm_1x1_residual", 2, 6, 6, 24, 40, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "f16", "bias_residual_relu"),
    Layer("5x5_s2", 2, 13, 11, 8, 16, 5, 5, (2, 2), (1, 1), (2, 2, 2, 2), "f16", "bias_relu"),
    Layer("f32_3x3_residual", 2, 9, 7, 16, 24, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f32", "bias_residual_relu"),
    Layer("f32_1x1_s2", 2, 9, 9, 32, 40, 1, 1, (2, 2), (1, 1), (0, 0, 0, 0), "f32", "bias"),
    Layer("rgb_out_f3", 1, 8, 8, 32, 3, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias"),
    # F = 1 (IREE folds the output channel away; found by convc-fuzz, IREE's own llvm-cpu
    # codegen fails on it)
    Layer("f1_out_7x7", 2, 12, 10, 32, 1, 7, 7, (1, 1), (1, 1), (3, 2, 1, 4), "f16", "none"),
    Layer("f1_residual", 2, 9, 9, 16, 1, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias_residual_relu"),
    # one output column, the window the whole input row: IREE folds the output's W away and
    # indexes the input's W by the filter tap alone (found by convc-fuzz's fp8 draws, where
    # IREE's CUDA fallback cannot compile fp8: the conv must be convc's)
    Layer("folded_wo", 4, 16, 3, 12, 8, 3, 3, (2, 3), (1, 1), (2, 0, 0, 0), "f16", "bias_relu"),
    Layer("folded_wo_f32", 2, 9, 5, 8, 16, 3, 5, (1, 2), (1, 1), (1, 0, 1, 0), "f32", "none"),
]


@pytest.mark.parametrize("layer", CASES, ids=[c.name for c in CASES])
def test_convc_matches_reference(tmp_path, layer):
    vmfb, res = compile_layer(tmp_path, layer)
    assert [r.path for r in res.reports] == ["convc"], [r.line() for r in res.reports]
    assert_outputs_right(vmfb, layer, seeds=(0, 1), f32_tol=1e-5)     # fresh inputs each run


def test_matched_problem_is_the_layer(tmp_path):
    for layer in CASES[:6]:
        _, res = compile_layer(tmp_path, layer)
        assert res.reports[0].problem == layer.expected_problem()


def test_fp32_precision_is_exact_f32(tmp_path):
    """--precision fp32: the portable kernel's exact f32 math (the reason says so), to f32
    rounding of the numpy reference; on sm_90a this conv (C = 16) would take TF32 wgmmas."""
    layer = Layer("f32_fp32_s2", 2, 11, 9, 16, 24, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1), "f32", "bias_residual_relu")
    vmfb, res = compile_layer(tmp_path, layer, precision="fp32")
    r = res.reports[0]
    assert r.path == "convc" and r.schedule.kernel == "portable_igemm" and "--precision fp32" in r.reason
    got, ref = run_layer_cpu(vmfb, layer, seed=2)
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) <= 1e-6
