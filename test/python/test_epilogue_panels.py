"""The TMA-store epilogue's staging panels: 128-byte swizzle rows when block_n allows, 64-byte
ones otherwise (160-channel tiles: F = 320 in two tiles), and the planner's use of them."""

import glob
import os
import re

import pytest

from conftest import compile_layer
from convc.passes.lower.nvidia import tensormap as tm
from convc.passes.lower.nvidia.tile_scheduler import IntOps
from convc.passes.lower.nvidia.tma_loader import epilogue_map_args, epilogue_panel
from convc.passes.plan.plan_schedule import PlanError, candidate_schedules
from convc.passes.plan.kernels.sm90 import plan_sm90
from convc.passes.plan.kernels.sm90_ws import plan_sm90_ws
from convc.passes.problem import ConvProblem
from convc.passes.target import get_target
from convc.tools.layers import load_suite


@pytest.mark.parametrize("dtype,block_n,cols,span", [
    ("f16", 64, 64, 128), ("f16", 256, 64, 128), ("f16", 160, 32, 64), ("bf16", 96, 32, 64),
    ("f32", 160, 32, 128), ("f32", 48, 16, 64)])
def test_panel_choice(dtype, block_n, cols, span):
    p = epilogue_panel(dtype, block_n)
    assert (p.cols, p.span) == (cols, span)
    assert p.swizzle == (tm.Swizzle.B128 if span == 128 else tm.Swizzle.B64)


def test_panel_refuses_ragged_tiles():
    with pytest.raises(ValueError, match="block_n=40"):
        epilogue_panel("f16", 40)


@pytest.mark.parametrize("span", [128, 64])
def test_panel_offsets_are_the_hardware_swizzle(span):
    """Every (row, 16-byte unit) lands on its own unit of the panel, at the address the TMA
    swizzle gives: linear offset with bits [4, 4+b) XORed by bits [7, 7+b)."""
    panel = epilogue_panel("f16", 32 if span == 64 else 64)
    rows, mask = 128, span // 16 - 1
    seen = set()
    for row in range(rows):
        for byte in range(0, span, 2):
            off = panel.offset(IntOps, row, byte)
            linear = row * span + byte
            assert off == linear ^ (((linear >> 7) & mask) << 4)
            seen.add(off)
    assert seen == set(range(0, rows * span, 2))


def test_epilogue_descriptor_for_160_channels():
    p = next(L for L in load_suite() if L.name == "unet_3x3_320_64x64_bf16").expected_problem()
    args = epilogue_map_args(p, p.out_dtype, 128, 160)
    assert args.box_dim == (32, 128) and args.swizzle == tm.Swizzle.B64
    tm.encode_tiled(args)                       # the driver's rules accept it


def test_planner_takes_160_channel_tiles_for_f320():
    t = get_target("sm_90a")
    unet = next(L for L in load_suite() if L.name == "unet_3x3_320_64x64_bf16").expected_problem()
    s = plan_sm90(unet, t)
    assert (s.kernel, s.block_m, s.block_n) == ("sm90_ws_pingpong", 128, 160)
    assert s.smem_bytes <= t.smem_bytes
    tiles = {(c.kernel, c.block_m, c.block_n) for c in candidate_schedules(unet, t)}
    assert ("sm90_ws_cooperative", 128, 160) in tiles and ("sm90_ws_pingpong", 64, 160) in tiles
    vae = next(L for L in load_suite() if L.name == "vae_3x3_512_64x64").expected_problem()
    assert all(c.block_n != 160 for c in candidate_schedules(vae, t))   # 160 would waste columns


def test_accumulator_budget():
    """More than 160 f32 accumulators per consumer thread is refused (ptxas would spill)."""
    t = get_target("sm_90a")
    unet = next(L for L in load_suite() if L.name == "unet_3x3_320_64x64_bf16").expected_problem()
    with pytest.raises(PlanError, match="block_n=192"):
        plan_sm90_ws(unet, t, "sm90_ws_pingpong", 128, 192)


def test_160_channel_ptx(tmp_path):
    unet = next(L for L in load_suite() if L.name == "unet_3x3_320_64x64_bf16")
    _, res = compile_layer(tmp_path, unet, target="sm_90a", dump_dir=str(tmp_path / "d"))
    assert res.reports[0].schedule.block_n == 160
    ptx = "".join(open(f).read() for f in glob.glob(os.path.join(tmp_path / "d" / "binaries", "*.ptx")))
    assert "wgmma.mma_async.sync.aligned.m64n160k16.f32.bf16.bf16" in ptx
    # five 32-channel panel stores per consumer tile
    stores = re.findall(r"cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", ptx)
    assert len(stores) == 5
