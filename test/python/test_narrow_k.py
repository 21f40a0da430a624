"""32-channel K steps: convs whose C is a multiple of 32 but not of 64 (C = 96, 160, 224...),
and 1x1 convs with any C that is a multiple of 8 (the last step zero-filled past C), take the
persistent TMA kernels with 64-byte operand rows (64B swizzle in the tensor maps and the
wgmma descriptors) instead of the thread-gathered kernel."""

import pytest

from convc.passes.lower.nvidia import tensormap as tm
from convc.passes.lower.nvidia.tma_loader import (activation_map_args, filter_map_args, k_tile_channels,
                                                  operand_swizzle, tensor_maps)
from convc.passes.plan.plan_schedule import PlanError
from convc.passes.plan.kernels.sm90 import plan_sm90
from convc.passes.plan.kernels.sm90_tma import plan_sm90_tma
from convc.passes.target import get_target
from convc.tools.layers import load_suite


@pytest.mark.parametrize("C,taps,bk", [(64, 9, 64), (512, 1, 64), (96, 25, 32), (160, 9, 32), (32, 9, 32),
                                        (24, 1, 32), (40, 1, 32), (24, 9, None), (3, 1, None), (12, 1, None)])
def test_k_tile_channels(C, taps, bk):
    assert k_tile_channels(C, taps) == bk


@pytest.mark.parametrize("C,taps,bk", [(64, 9, 32), (96, 9, 32), (16, 9, 16), (48, 9, 16), (20, 1, 16),
                                        (12, 9, None), (3, 1, None), (6, 1, None)])
def test_k_tile_channels_f32(C, taps, bk):
    """f32 (TF32) steps fill the same 128- or 64-byte rows: 32 or 16 channels."""
    assert k_tile_channels(C, taps, "f32") == bk


def test_narrow_layers_take_the_persistent_kernels():
    t = get_target("sm_90a")
    layers = load_suite("test/inputs/narrow_k_suite.json") + [L for L in load_suite()
                                                              if L.name in ("s2_5x5_96", "c24_1x1_to_144")]
    for L in layers:
        p = L.expected_problem()
        s = plan_sm90(p, t)
        assert s.kernel.startswith("sm90_ws") and s.block_k == 32, (L.name, s.reason)
        assert s.smem_bytes <= t.smem_bytes and s.stages <= 16
        assert operand_swizzle(s.block_k) == tm.Swizzle.B64
        assert activation_map_args(p, s).swizzle == filter_map_args(p, s).swizzle == tm.Swizzle.B64
        tensor_maps(p, s)                       # the driver's rules accept both maps
        with pytest.raises(PlanError, match="not a multiple of 64"):
            plan_sm90_tma(p, t)                 # the non-persistent kernel keeps 64-channel steps


def test_padded_k_steps():
    """C = 40 with one tap: two 32-channel steps, the second reading channels 32..63 (zeros
    past 40); with 3x3 taps C = 24 stays on the gathered kernel."""
    from convc.passes.lower.nvidia.tma_loader import k_tiles
    t = get_target("sm_90a")
    c40 = next(L for L in load_suite("test/inputs/narrow_k_suite.json") if L.C == 40).expected_problem()
    s = plan_sm90(c40, t)
    assert s.block_k == 32 and k_tiles(c40, 32) == 2
    import dataclasses
    c24_3x3 = dataclasses.replace(c40, C=24, R=3, S=3, pad=(1, 1, 1, 1))
    assert plan_sm90(c24_3x3, t).kernel == "sm90_gather_wgmma"


# The tiles the sm_90a planner gives the tuned narrow layers (tools/data/expansion_1x1.json,
# rgb_stems.json; measurements in bench/NOTES.md): (kernel, block_m, block_n, swapped)
NARROW_DEFAULTS = {
    "effnet_expand_112_c16_f96": ("sm90_ws_cooperative", 256, 96, False),     # exactly F wide: 46.3 us, 128 wide 52.5 (H200 e2e)
    "effnet_expand_56_c24_f144": ("sm90_ws_cooperative", 256, 160, False),
    "effnet_project_56_c144_f24": ("grouped_mma", 128, 24, None),
    "mnv3_expand_112_c16_f64": ("sm90_ws_pingpong", 256, 64, True),
    "mnv3_112_c16_f16": ("grouped_mma", 512, 16, None),
    "mnv3_expand_56_c24_f72": ("sm90_ws_cooperative", 256, 128, False),
    "mnv3_project_56_c72_f24": ("grouped_mma", 384, 24, None),
    "effnet_expand_28_c40_f240": ("sm90_ws_cooperative", 256, 128, False),
    "mnv3_stem_b32": ("grouped_mma", 512, 16, None),
    "effnet_stem_b32": ("sm90_rows_wgmma", 128, 32, None),      # 16.2 us, grouped 33.7 (H200, convc-tune)
    "stem_c4_f24_b16": ("grouped_mma", 384, 24, None),
    "stem_7x7_f32_b32": ("sm90_rows_wgmma", 128, 32, None),     # 19.8 us, gathered 124.8 (H200, convc-tune)
}


def test_narrow_1x1_and_stem_rules():
    """Narrow-K 1x1 convs that fill the SMs take 256-pixel tiles, narrow-F ones and 3x3 RGB
    stems with F = 16 or 24 the grouped tensor-core kernel, RGB stems with F a multiple of 32
    the row-slab kernel's 32-channel tiles; at batch 1 (no full wave) the 1x1 rules stay off."""
    import dataclasses
    t = get_target("sm_90a")
    layers = {L.name: L for f in ("expansion_1x1.json", "rgb_stems.json") for L in load_suite(f"tools/data/{f}")}
    def matched(L):             # IREE presents a 1x1 conv as a GEMM over N*H*W rows
        p = L.expected_problem()
        return dataclasses.replace(p, N=1, H=p.gemm_m, W=1, gemm_form=True) if p.R * p.S == 1 else p

    for name, (kernel, bm, bn, swap) in NARROW_DEFAULTS.items():
        s = plan_sm90(matched(layers[name]), t)
        got = (s.kernel.value, s.block_m, s.block_n, getattr(s.config, "swap_ab", None))
        assert got == (kernel, bm, bn, swap), (name, got, s.reason)
    b1 = dataclasses.replace(matched(layers["effnet_expand_112_c16_f96"]), H=112 * 112)
    assert plan_sm90(b1, t).block_m < 256
    b1 = dataclasses.replace(matched(layers["mnv3_112_c16_f16"]), H=112 * 112)
    assert plan_sm90(b1, t).kernel.value.startswith("sm90_ws")


def test_rgb_stems_on_sm100a():
    """sm_100a: the tcgen05 kernel cannot read a 3-channel stem either; 3x3 stems take the
    grouped mma.sync kernel as on sm_90a, a 7x7 one stays portable."""
    from convc.passes.plan.plan_schedule import plan_schedule_for
    t = get_target("sm_100a")
    layers = {L.name: L for L in load_suite("tools/data/rgb_stems.json")}
    for name in ("mnv3_stem_b32", "effnet_stem_b32", "stem_c4_f24_b16"):
        s = plan_schedule_for(layers[name].expected_problem(), t)
        assert s.kernel == "grouped_mma" and "tcgen05 kernel declined" in s.reason, (name, s.reason)
    assert plan_schedule_for(layers["stem_7x7_f32_b32"].expected_problem(), t).kernel == "portable_igemm"


def test_odd_row_stem_wider_than_the_stem_rule_is_gathered():
    """A 3-channel 3x3 conv with F = 64 (past grouped_mma.NARROW_STEM_F): im2col TMA and the
    row-slab kernel decline (stride_w*C = 3 is odd), the thread-gathered kernel takes it."""
    from convc.passes.problem import ConvProblem
    p = ConvProblem(N=1, H=8, W=8, C=3, F=64, R=3, S=3, pad=(1, 1, 1, 1), out_dtype="f16")
    s = plan_sm90(p, get_target("sm_90a"))
    assert s.kernel == "sm90_gather_wgmma" and "stride_w*C = 3 is odd" in s.reason, s.reason
