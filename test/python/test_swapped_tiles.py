"""Swapped tiles (channels on the wgmma's M, pixels on its N) and double epilogue slots in the
persistent sm_90a kernels: the transposed epilogue's addressing against the stmatrix/ldmatrix
.trans semantics, the planner's candidates and refusals, and the shared-memory layout."""

import dataclasses

import pytest

from convc.passes.kernel_configs import Sm90WsConfig
from convc.passes.lower.nvidia.sm90_ws import consumer_slice, ws_layout
from convc.passes.lower.nvidia.tile_scheduler import IntOps
from convc.passes.lower.nvidia.warp_roles import swapped_cell
from convc.passes.plan.plan_schedule import PlanError, candidate_schedules, knobs_of
from convc.passes.plan.kernels.sm90 import plan_sm90
from convc.passes.plan.kernels.sm90_ws import plan_sm90_ws, swap_block_ms
from convc.passes.target import get_target
from convc.tools.layers import load_suite

T = get_target("sm_90a")


def _swapped(s) -> bool:
    """Channels on the wgmma's M (a persistent sm_90a schedule with swap_ab)."""
    return isinstance(s.config, Sm90WsConfig) and s.config.swap_ab


def _problem(name):
    return next(L for L in load_suite() if L.name == name).expected_problem()


@pytest.mark.parametrize("rows,subs", [(96, 1), (48, 2), (144, 1), (16, 2)])
def test_transposed_moves_cover_the_slot_once(rows, subs):
    """stmatrix.trans stores matrix m's column r (pixel 8(j + m/2) + r of the fragment block
    (j + m/2, half m%2): channels 16 warp + 8(m%2) + 0..7) at the row lane 8m + r addresses.
    Every lane must address exactly that 16-byte row, and the moves of all warps, sub-blocks and
    pixel-block pairs must write each (pixel, 8-channel group) of the slot exactly once."""
    seen = []
    for warp in range(4):
        for sub in range(subs):
            for j in range(0, rows // 8, 2):
                for lane in range(32):
                    m, r = divmod(lane, 8)
                    pixel, channel = swapped_cell(IntOps, lane, warp, sub, j)
                    assert (pixel, channel) == (8 * (j + m // 2) + r, 64 * sub + 16 * warp + 8 * (m % 2))
                    seen.append((pixel, channel))
    assert sorted(seen) == [(p, c) for p in range(rows) for c in range(0, 64 * subs, 8)]


def test_swapped_candidates_fill_the_sms():
    """r50_l3_1x1_1024_256 (6272 pixels x 256 channels): 64-row tiles make 98 tiles for 132
    SMs; swapped 96x128 tiles make 132."""
    p = _problem("r50_l3_1x1_1024_256")
    assert swap_block_ms(p, T, 128, 256)[0] == 96
    swapped = [c for c in candidate_schedules(p, T) if _swapped(c)]
    assert swapped and all(c.block_m % 16 == 0 and c.block_m <= 256 for c in swapped)
    coop = next(c for c in swapped if c.kernel == "sm90_ws_cooperative" and c.block_n == 128)
    assert -(-p.gemm_m // coop.block_m) * 2 == T.num_sms


def test_swapped_candidates_skip_wasted_channels():
    """No swapped tile with over a quarter of its channels past F (F = 128 in 256-channel
    tiles ran 3x slower on the H200)."""
    p = _problem("r50_l2_3x3_128")
    assert all(c.block_n <= 128 for c in candidate_schedules(p, T) if _swapped(c))


def test_swapped_layout_splits_channels_between_warpgroups():
    p = _problem("r50_l3_1x1_1024_256")
    assert consumer_slice("sm90_ws_cooperative", 96, 128, swap=True) == (96, 64)
    assert consumer_slice("sm90_ws_cooperative", 128, 128) == (64, 128)
    lay = ws_layout(p, "sm90_ws_cooperative", 96, 128, 7, swap=True)
    assert (lay.rows, lay.cols, lay.out_slot) == (96, 64, 96 * 64 * 2)
    assert lay.total <= T.smem_bytes


@pytest.mark.parametrize("slots", [1, 2])
def test_epilogue_slots_layout(slots):
    """Each consumer warpgroup owns `slots` staging slots and a res_full/res_empty pair per
    slot; no two barriers or buffers overlap."""
    p = _problem("r50_l3_1x1_256_1024")                 # residual in place (f16)
    lay = ws_layout(p, "sm90_ws_pingpong", 128, 128, 3, slots=slots)
    assert lay.res_in_place and lay.res0 == lay.out0
    assert lay.bars == lay.out0 + 2 * slots * lay.out_slot
    bars = ([lay.full.at(i) for i in range(3)] + [lay.empty.at(i) for i in range(3)]
            + [lay.res_full.at(k) for k in range(2 * slots)] + [lay.res_empty.at(k) for k in range(2 * slots)]
            + [lay.turn.at(w) for w in range(2)])
    assert len(set(bars)) == len(bars) and max(bars) + 8 == lay.total


def test_swap_refusals():
    p = _problem("r50_l3_1x1_1024_256")
    with pytest.raises(PlanError, match="multiple of 16"):
        plan_sm90_ws(p, T, "sm90_ws_cooperative", 104, 128, swap=True)
    with pytest.raises(PlanError, match="cluster"):
        plan_sm90_ws(p, T, "sm90_ws_cooperative", 96, 128, cluster_m=2, swap=True)
    with pytest.raises(PlanError, match="stream-K"):
        plan_sm90_ws(p, T, "sm90_ws_streamk", 96, 128, swap=True)
    with pytest.raises(PlanError, match="channels per consumer warpgroup"):
        plan_sm90_ws(p, T, "sm90_ws_cooperative", 96, 64, swap=True)
    f32 = dataclasses.replace(p, out_dtype="f32", epilogue=())
    with pytest.raises(PlanError, match="16-bit"):
        plan_sm90_ws(f32, T, "sm90_ws_cooperative", 96, 128, swap=True)


def test_knobs_of_old_caches_still_match():
    """Schedules at the default slot count and orientation keep the six knobs older caches
    store; the others carry both."""
    p = _problem("r50_l3_1x1_1024_256")
    assert len(knobs_of(plan_sm90(p, T))) == 6 or _swapped(plan_sm90(p, T))
    s = plan_sm90_ws(p, T, "sm90_ws_cooperative", 96, 128, swap=True)
    assert knobs_of(s)[-3:] == (1, True, "direct2")          # one tile per CTA: direct loads
    d = plan_sm90_ws(p, T, "sm90_ws_pingpong", 128, 128, slots=2)
    assert knobs_of(d)[-3:] == (2, False, "direct2")
    assert knobs_of(d.with_config(direct_stages=0))[-2:] == (2, False)
    assert knobs_of(s.with_config(direct_stages=0))[-2:] == (1, True)


@pytest.mark.parametrize("name,swapped", [
    ("r50_l3_3x3_256", True), ("dil2_3x3_256_33x33", True), ("r50_l4_3x3_512", True),
    ("r50_l3_1x1_1024_256", True),        # 1x1, 98 tiles of 64x256 on 132 SMs
    ("r50_l2_1x1_256_128", False),        # 1x1, many waves
    ("r50_l3_1x1_256_1024", False),       # 1x1 with a residual
    ("unet_3x3_320_64x64_bf16", False)])  # F = 320: 160-channel tiles
def test_planner_swaps_where_measured_faster(name, swapped):
    s = plan_sm90(_problem(name), T)
    assert _swapped(s) == swapped, s.describe()
    if swapped:
        assert s.block_m >= 96 and "swapped" in s.reason


def test_two_slots_need_an_in_place_residual():
    p = _problem("r50_l3_1x1_256_1024")
    res = next(st for st in p.epilogue if st.broadcast == "full")
    f32 = dataclasses.replace(p, out_dtype="f32", epilogue=tuple(
        dataclasses.replace(st, dtype="f32") if st.op == "cast" else st for st in p.epilogue))
    assert res.dtype == "f16" and f32.out_dtype == "f32"
    with pytest.raises(PlanError, match="dtype differs"):
        plan_sm90_ws(f32, T, "sm90_ws_pingpong", 128, 128, slots=2)
    plan_sm90_ws(f32, T, "sm90_ws_pingpong", 64, 128)            # one slot: separate residual slots
