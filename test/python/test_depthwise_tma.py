"""The TMA depthwise kernel (passes/plan/kernels/depthwise_tma.py, lower/nvidia/depthwise_tma.py)
without a GPU.

- Geometry: the input box of a tile (halo rows and columns, strides, dilation), slot sizes,
  tile counts, the bank-group model, and the declines (multiplier, channels TMA cannot stride,
  boxes past the TMA limit).
- Planning: the rule (7-column windows at batch 1) takes it on sm_90a and sm_100a, every other
  depthwise conv with multiplier 1 has it among its tuning candidates; AMD, a channel
  multiplier and channels TMA cannot stride keep the direct kernel, with the reason; the
  schedule's shared memory is the layout's, CTAs fit an SM, one descriptor slot per CTA.
- The tile walk, modelled in numpy: every output of random problems is computed exactly once
  from zero-filled boxes (the kernel's index algebra against an independent conv).
- The emitted code: one 4-D TMA per tile, an mbarrier wait, packed f16 FMAs; ptxas for sm_90a
  and sm_100a on a spread of the candidates of two layers.
"""

import dataclasses
import os
import re
import subprocess

import numpy as np
import pytest

from conftest import grouped_conv_reference, layer_ptx
from convc.passes.plan.kernels.common import CTA_SMEM_RESERVE, SM_SMEM
from convc.passes.plan.kernels.depthwise_tma import (depthwise_shape, plan_depthwise_tma,
                                                supports, tma_candidates)
from convc.passes.lower.nvidia.depthwise_tile import DepthwiseTileUnsupported, depthwise_tile, filter_map_args
from convc.passes.lower.nvidia.depthwise_tma import DepthwiseLayout, tile_geometry
from convc.passes.plan.plan_schedule import candidate_schedules, plan_schedule_for
from convc.passes.plan.tuning import knobs_of
from convc.passes.target import get_target
from convc.tools.layers import load_suite
from convc.tools.sm100_table import find_cuda_tool

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = {L.name: L for L in load_suite(os.path.join(HERE, "..", "..", "tools", "data", "depthwise_grouped.json"))}
SM90, SM100 = get_target("sm_90a"), get_target("sm_100a")
PTXAS = find_cuda_tool("ptxas")


def _p(name, **kw):
    return dataclasses.replace(LAYERS[name], **kw).expected_problem()


def test_geometry():
    p = _p("convnext_dw7x7_56")
    g = depthwise_tile(p, 32, 4, 56, 8)
    assert (g.in_rows, g.in_cols, g.lanes, g.segments, g.items) == (10, 62, 4, 7, 112)
    assert g.box_bytes == 32 * 62 * 10 * 2 and g.slot_bytes % 128 == 0
    # the taps follow the window in the slot: a 2-D box [R*S][channels] of the filter
    assert g.taps_offset == 39680 and g.taps_bytes == 49 * 32 * 2 and g.slot_bytes == 39680 + 3200
    f = filter_map_args(p, g)
    assert (tuple(f.global_dim), tuple(f.global_strides), tuple(f.box_dim)) == ((96, 49), (192,), (32, 49))
    assert (g.tiles_h, g.tiles_w, g.tiles_c, g.tiles) == (14, 1, 3, 32 * 14 * 3)
    s2 = depthwise_tile(_p("effnet_dw5x5_s2"), 16, 3, 32, 8)
    assert (s2.in_rows, s2.in_cols) == ((3 - 1) * 2 + 5, (32 - 1) * 2 + 5)
    dil = depthwise_tile(_p("mbv2_dw3x3_56", dilation=[2, 2], pad=[2, 2, 2, 2]), 16, 2, 56, 4)
    assert (dil.in_rows, dil.in_cols) == (1 + 4 + 1, 55 + 4 + 1)
    # channel lanes fastest: with 8 lanes a quarter warp reads one pixel's 128 bytes
    assert depthwise_tile(_p("mbv2_dw3x3_28"), 64, 2, 28, 4).bank_ways(_p("mbv2_dw3x3_28")) == 1
    # 2 lanes, segments 4 pixels (8 chunks) apart: four segments share a bank group
    assert depthwise_tile(_p("mbv2_dw3x3_56"), 16, 2, 56, 4).bank_ways(_p("mbv2_dw3x3_56")) == 4


@pytest.mark.parametrize("kw, cols, why", [
    (dict(F=288), 56, "multiplier"),
    (dict(C=36, F=36, groups=36), 56, "16 bytes"),
    (dict(W=300), 300, "TMA limit"),
])
def test_declines(kw, cols, why):
    with pytest.raises(DepthwiseTileUnsupported, match=why):
        depthwise_tile(_p("mbv2_dw3x3_56", **kw), 16, 1, cols, 4)


def test_wide_rows_split_into_column_tiles():
    p = _p("mbv2_dw3x3_56", W=300)
    s = plan_depthwise_tma(p, SM90)
    g = tile_geometry(p, s)
    assert g.tiles_w == 2 and g.in_cols <= 256 and g.cols * g.tiles_w >= p.Wo


def test_planner_routes():
    """The rule: small grids of 7-column windows (batch 1) split the direct kernel's items'
    filter rows over threads, whatever the type; above them bf16 takes depthwise_mma where the
    direct grid is under one workgroup per SM; the direct kernel elsewhere; the tile kernels
    are tuning candidates (this one is no type's default since the split items: for f32 its
    grids are the split's)."""
    for t in (SM90, SM100):
        for dtype in ("f16", "bf16", "f32"):
            for hw, c in ((56, 96), (14, 384)):
                p = _p("convnext_dw7x7_56_b1", H=hw, W=hw, C=c, F=c, groups=c, dtype=dtype)
                s = plan_schedule_for(p, t)
                assert s.kernel == "direct_grouped" and s.config.row_groups == 7, s.describe()
                assert any(c.kernel == "depthwise_tma" for c in candidate_schedules(p, t))
                assert (s.config.pixels == 8) == (dtype == "f32"), s.describe()
    # 602k outputs: over the split threshold (4096 per SM) on 132 SMs, not on sm_100a's 148
    s = plan_schedule_for(_p("convnext_dw7x7_56_b1", N=4, H=28, W=28, C=192, F=192, groups=192, dtype="bf16"), SM90)
    assert s.kernel == "depthwise_mma" and "workgroups on" in s.reason
    for t in (SM90, SM100):
        for name in ("mbv2_dw3x3_56", "effnet_dw5x5_s2", "convnext_dw7x7_56", "mbv2_dw3x3_56_b1"):
            # 7x7 at batch 32: the strip tensor-core kernel (test_depthwise_strips)
            want = "depthwise_strips" if name == "convnext_dw7x7_56" else "direct_grouped"
            assert plan_schedule_for(_p(name), t).kernel == want
            assert any(c.kernel == "depthwise_tma" for c in candidate_schedules(_p(name), t))
    assert plan_schedule_for(_p("convnext_dw7x7_56_b1"), get_target("gfx942")).kernel == "direct_grouped"
    assert plan_schedule_for(_p("convnext_dw7x7_56_b1", F=192), SM90).kernel == "direct_grouped"
    # channels the tile kernels cannot take: their candidates say why, the split items run it
    odd = _p("convnext_dw7x7_56_b1", C=36, F=36, groups=36, dtype="bf16")
    assert plan_schedule_for(odd, SM90).config.row_groups == 7
    assert "16 bytes" in supports(odd, SM90)
    assert not any(c.kernel in ("depthwise_tma", "depthwise_mma") for c in candidate_schedules(odd, SM90))
    assert plan_schedule_for(_p("resnext_g3x3_s1"), SM90).kernel == "grouped_mma"


def depthwise_shape_config(p):
    s = plan_depthwise_tma(p, SM90)
    return s.config


def test_schedule_agrees_with_layout():
    for name in LAYERS:
        p = _p(name)
        for s in tma_candidates(p, SM90):
            g = tile_geometry(p, s)
            assert s.smem_bytes == DepthwiseLayout(g, s.stages).total
            assert s.config.ctas_per_sm * (s.smem_bytes + CTA_SMEM_RESERVE) <= SM_SMEM
            assert s.grid[0] <= g.tiles and s.scratch_bytes == s.grid[0] * 2 * 128      # the input's and the filter's maps
            assert s.threads % 32 == 0 and s.threads <= 1024


def test_candidates_are_distinct_and_start_with_the_default():
    for name, first in (("convnext_dw7x7_56", "depthwise_strips"), ("convnext_dw7x7_56_b1_bf16", "direct_grouped"),
                        ("convnext_dw7x7_56_b1_f32", "direct_grouped")):
        p = _p(name.rsplit("_", 1)[0], dtype=name.rsplit("_", 1)[1]) if name.endswith(("_f32", "_bf16")) else _p(name)
        cands = candidate_schedules(p, SM90)
        assert cands[0] == plan_schedule_for(p, SM90) and cands[0].kernel == first
        assert {s.kernel for s in cands} >= {"direct_grouped", "depthwise_tma"}
        assert len({knobs_of(s) for s in cands}) == len(cands)
    shape = depthwise_shape(_p("convnext_dw7x7_56_b1"))
    assert (shape.pixels, shape.threads, shape.stages, shape.channels, shape.rows) == (4, 128, 2, 32, 2)
    assert depthwise_shape(_p("mbv2_dw3x3_56", dtype="bf16")).accumulate == "f32"
    assert plan_depthwise_tma(_p("mbv2_dw3x3_56", dtype="bf16"), SM90).config.accumulate == "f32"


def _walk(p, s, x, w):
    """The kernel's tile walk and index algebra (depthwise_tma.py) in numpy; NaN where no item
    wrote an output, and an assertion where two did."""
    g = tile_geometry(p, s)
    out = np.full((p.N, p.Ho, p.Wo, p.C), np.nan)
    grid = s.grid[0]
    for pid in range(grid):
        count = (g.tiles - pid + grid - 1) // grid
        for j in range(count):
            t = pid + j * grid
            cb, rest = t % g.tiles_c, t // g.tiles_c
            wb, rest = rest % g.tiles_w, rest // g.tiles_w
            n, ho0, wo0, c0 = rest // g.tiles_h, (rest % g.tiles_h) * g.rows, wb * g.cols, cb * g.channels
            h0, w0 = ho0 * p.stride[0] - p.pad[0], wo0 * p.stride[1] - p.pad[1]
            box = np.zeros((g.in_rows, g.in_cols, g.channels))         # TMA: zeros out of bounds
            for i in range(g.in_rows):
                for k in range(g.in_cols):
                    h, ww = h0 + i, w0 + k
                    if 0 <= h < p.H and 0 <= ww < p.W:
                        chans = x[n, h, ww, c0:c0 + g.channels]
                        box[i, k, :len(chans)] = chans
            flat = box.reshape(-1)
            for item in range(g.items):
                lane, seg, row = item % g.lanes, (item // g.lanes) % g.segments, item // (g.lanes * g.segments)
                ch = c0 + lane * g.vec
                if ch >= p.C:
                    continue
                base = ((row * p.stride[0] * g.in_cols) + seg * g.pixels * p.stride[1]) * g.channels + lane * g.vec
                accs = np.zeros((g.pixels, g.vec))
                for r in range(p.R):
                    rbase = base + r * p.dilation[0] * g.in_cols * g.channels
                    for i in range(g.pixels):
                        for sx in range(p.S):
                            q = i * p.stride[1] + sx * p.dilation[1]
                            accs[i] += flat[rbase + q * g.channels:rbase + q * g.channels + g.vec] * w[r, sx, ch:ch + g.vec]
                ho, wo = ho0 + row, wo0 + seg * g.pixels
                for i in range(g.pixels):
                    if ho < p.Ho and wo + i < p.Wo:
                        assert np.isnan(out[n, ho, wo + i, ch]), "output written twice"
                        out[n, ho, wo + i, ch:ch + g.vec] = accs[i]
    return out


@pytest.mark.parametrize("seed", range(4))
def test_tile_walk_covers_every_output_once(seed):
    rng = np.random.default_rng(seed)
    R = int(rng.choice([3, 5, 7]))
    st = int(rng.choice([1, 2]))
    dl = int(rng.choice([1, 1, 2]))
    C = int(rng.choice([8, 24, 40, 72]))
    pad = [int(v) for v in rng.integers(0, R, 4)]
    L = dataclasses.replace(LAYERS["mbv2_dw3x3_14"], N=2, H=int(rng.integers(5, 19)), W=int(rng.integers(5, 23)),
                            C=C, F=C, groups=C, R=R, S=R, stride=[st, st], dilation=[dl, dl], pad=pad)
    p = L.expected_problem()
    if p.Ho < 1 or p.Wo < 1:
        pytest.skip("empty output")
    cands = tma_candidates(p, SM90)
    assert cands
    x = rng.standard_normal((p.N, p.H, p.W, p.C))
    w = rng.standard_normal((p.R, p.S, p.C))
    ref = grouped_conv_reference(p, x, w)
    for s in (cands[0], cands[-1], min(cands, key=lambda s: s.config.rows)):
        got = _walk(p, s, x, w)
        assert not np.isnan(got).any(), f"{s.describe()} leaves outputs unwritten"
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


def test_emitted_code(tmp_path):
    first_tma = next(i for i, s in enumerate(candidate_schedules(_p("convnext_dw7x7_56_b1"), SM90))
                     if s.kernel == "depthwise_tma")
    text = open(layer_ptx(tmp_path, LAYERS["convnext_dw7x7_56_b1"], "sm_90a", first_tma)).read()
    # one 4-D box per tile (84 tiles on 84 CTAs: LLVM drops the second slot's fill and the refill)
    assert text.count("cp.async.bulk.tensor.4d") >= 1
    assert "mbarrier.try_wait.parity" in text
    assert text.count("fma.rn.f16x2") == 4 * 7 * 4 and "ld.shared.v4" in text   # pixels x S x 4 pairs, one row


@pytest.mark.skipif(PTXAS is None, reason="no ptxas (pip install nvidia-cuda-nvcc)")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptxas_tile_candidates(tmp_path, arch):
    """A spread of the tile kernel's candidates (every fourth, the default first) of a 3x3 and a
    7x7 layer assembles; the default does not spill."""
    t = get_target(arch)
    for name in ("mbv2_dw3x3_56", "convnext_dw7x7_56_b1"):
        cands = candidate_schedules(_p(name), t)
        tiled = [i for i, s in enumerate(cands) if s.kernel == "depthwise_tma"]
        for k, i in enumerate(tiled[::4]):
            path = layer_ptx(tmp_path, LAYERS[name], arch, i or None)
            res = subprocess.run([PTXAS, f"-arch={arch}", "-v", path, "-o", os.devnull], capture_output=True, text=True)
            assert res.returncode == 0, res.stderr[-2000:]
            if k == 0:
                assert not re.search(r"[1-9][0-9]* bytes spill stores", res.stderr), res.stderr[-2000:]
