"""The strip tensor-core depthwise kernel (passes/plan/kernels/depthwise_strips.py,
lower/nvidia/depthwise_strips.py) without a GPU.

- The kernel modelled in numpy as the geometry says: per item and input row the TMA box (zero
  fill, the swizzle written here from its definition), per warp and lane the 8 gathers of 4
  channels and the A fragments they make, the band's B pairs from the kernel's tap formula, m16n8k16
  products into the ring slot (i - r) mod R, the finished row through the f32 stage (NaN-poisoned:
  a slot two pixels share shows) and the epilogue's read-back; against an independent float64
  conv on random shapes (batches not a multiple of 16, windows 1-9 x 1-7, asymmetric pads, rows
  not a multiple of the strip height, columns not of 8), conftest's.
- Geometry: regions disjoint and aligned, gathers inside the box, declines.
- Planning: the rule (7+ column windows, batch 16+, 2R+ output rows, 16k+ outputs per SM), schedules agree with the
  layout, candidates; emitted code and ptxas for sm_90a/sm_100a, no spills.
"""

import dataclasses
import os
import re
import subprocess

import numpy as np
import pytest

from conftest import grouped_conv_reference, layer_ptx
from convc.passes.plan.kernels.common import PlanError
from convc.passes.plan.kernels.depthwise_strips import (plan_depthwise_strips, prefers_strips, strip_rows,
                                                   strips_candidates, supports)
from convc.passes.lower.common.int_ops import NumpyOps
from convc.passes.lower.nvidia.depthwise_strips import geometry_of
from convc.passes.lower.nvidia.depthwise_strips_geometry import (BOX_COLS, CG, IMAGES, OUT_COLS,
                                                                 DepthwiseStripsUnsupported, depthwise_strips)
from convc.passes.plan.plan_schedule import candidate_schedules, plan_schedule_for
from convc.passes.target import get_target
from convc.tools.layers import load_suite
from convc.tools.sm100_table import find_cuda_tool

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = {L.name: L for L in load_suite(os.path.join(HERE, "..", "..", "tools", "data", "depthwise_grouped.json"))}
SM90, SM100 = get_target("sm_90a"), get_target("sm_100a")
PTXAS = find_cuda_tool("ptxas")
OPS = NumpyOps()


def _layer(name, **kw):
    return dataclasses.replace(LAYERS[name], **kw)


def _p(name, **kw):
    return _layer(name, **kw).expected_problem()


def tma_swizzle(byte: int, span: int) -> int:
    """Where a box's byte lands under the TMA swizzle of a span of 32/64/128 bytes: its 16-byte
    chunk index (bits 4..) XOR the 128-byte row index, both taken modulo span / 16."""
    chunks = span // 16
    return (byte & ~(16 * (chunks - 1))) | ((((byte >> 4) & (chunks - 1)) ^ ((byte >> 7) & (chunks - 1))) << 4)


def model(p, g, x, w):
    """The kernel in float64 (the f16 products are exact there too). NaN where nothing was written."""
    eb = g.elem_bytes
    lay = g.layout
    assert lay.slots.offset % 1024 == 0 and lay.slots.size % 1024 == 0 and lay.slots.size >= g.box_bytes
    assert lay.slots.end <= lay.stage.offset and lay.stage.offset % 16 == 0
    assert lay.stage.size == 4 * g.stage_words and lay.stage.end <= lay.full.offset < lay.empty.offset
    assert lay.empty.end == g.smem_bytes
    out = np.full((p.N, p.Ho, p.Wo, p.C), np.nan)
    lanes = np.arange(32)
    gl, q = lanes // 4, lanes % 4
    for t in range(g.items):
        ig, st, wb, cb = g.item(OPS, t)
        ring = np.zeros((g.R, g.warps, CG, IMAGES, OUT_COLS))
        for i in range(g.steps):
            # the TMA box of input row i: [image][column][channel], zeros out of bounds, swizzled
            slot = np.full(lay.slots.size // eb, np.nan)
            h = st * g.rows - p.pad[0] + i
            for img in range(IMAGES):
                for col in range(BOX_COLS):
                    n, ww = ig * IMAGES + img, wb * OUT_COLS - p.pad[1] + col
                    ok = n < p.N and 0 <= h < p.H and 0 <= ww < p.W
                    for ch in range(g.channels):
                        byte = ((img * BOX_COLS + col) * g.channels + ch) * eb
                        slot[tma_swizzle(byte, g.pixel_bytes) // eb] = x[n, h, ww, cb * g.channels + ch] if ok else 0.0
            for warp in range(g.warps):
                c_in = warp * CG
                for ch in range(CG):
                    c = cb * g.channels + c_in + ch
                    a = np.zeros((16, 16))
                    for hh in range(2):
                        for kk in range(2):
                            for e in range(2):
                                at = np.array([g.gather(OPS, int(gg) + 8 * hh, 2 * int(qq) + 8 * kk + e, c_in)
                                               for gg, qq in zip(gl, q)])
                                assert (at >= 0).all() and (at + CG <= g.box_bytes // eb).all()
                                a[gl + 8 * hh, 2 * q + 8 * kk + e] = slot[at + ch]
                    for r in range(g.R):
                        b = np.zeros((16, 8))       # lane (g, q): k = 2q + dk of column g, tap k - g
                        for dk in (0, 1, 8, 9):
                            s_ = 2 * q + dk - gl
                            ok = (s_ >= 0) & (s_ < g.S)
                            b[2 * q + dk, gl] = np.where(ok, w[r, np.clip(s_, 0, g.S - 1), c], 0.0)
                        ring[(i - r) % g.R, warp, ch] += a @ b
            o, done = i - (g.R - 1), (i + 1) % g.R
            if o < 0:               # rows above the strip: their slot only zeroed for row i + 1
                ring[done] = 0
                continue
            stage = np.full(g.stage_words, np.nan)
            for warp in range(g.warps):
                for hh in range(2):
                    for e in range(2):
                        for gg, qq in zip(gl, q):
                            at = g.stage_index(OPS, int(gg) + 8 * hh, 2 * int(qq) + e, warp * CG)
                            assert np.isnan(stage[at:at + CG]).all(), "a stage word written twice"
                            stage[at:at + CG] = ring[done, warp, :, gg + 8 * hh, 2 * qq + e]
            ring[done] = 0
            for idx in range(IMAGES * OUT_COLS * g.channels // 8):
                chunk, pix = idx % (g.channels // 8), idx // (g.channels // 8)
                image, col = pix // OUT_COLS, pix % OUT_COLS
                n, oh, ow = ig * IMAGES + image, st * g.rows + o, wb * OUT_COLS + col
                if n < p.N and oh < p.Ho and ow < p.Wo:
                    f = cb * g.channels + 8 * chunk
                    assert np.isnan(out[n, oh, ow, f]), "output written twice"
                    at = g.stage_index(OPS, image, col, 8 * chunk)
                    out[n, oh, ow, f:f + 8] = stage[at:at + 8]
    return out


def _random_layer(rng):
    R, S = int(rng.integers(1, 8)), int(rng.integers(1, 10))
    C = 16 * int(rng.integers(1, 4))
    pad = [int(v) for v in rng.integers(0, 5, 4)]
    H, W = int(rng.integers(3, 14)), int(rng.integers(3, 20))
    N = int(rng.choice([3, 16, 17, 20]))
    return _layer("convnext_dw7x7_56", N=N, H=H, W=W, C=C, F=C, groups=C, R=R, S=S, pad=pad)


@pytest.mark.parametrize("seed", range(4))
def test_model_matches_the_conv(seed):
    rng = np.random.default_rng(300 + seed)
    while True:
        try:
            p = _random_layer(rng).expected_problem()
        except ValueError:
            continue
        if supports(p, SM90) is None:
            break
    x = rng.standard_normal((p.N, p.H, p.W, p.C))
    w = rng.standard_normal((p.R, p.S, p.C))
    ref = grouped_conv_reference(p, x, w)
    channels = 32 if p.C % 32 == 0 else 16
    for rows in sorted({1, strip_rows(p, SM90, channels)[0], max(1, p.Ho - 1)}):
        got = model(p, depthwise_strips(p, channels, rows), x, w)
        assert not np.isnan(got).any(), f"strips of {rows} rows leave outputs unwritten"
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


def test_the_swizzle_spreads_a_warps_gathers():
    """Per gather the 32 lanes hit 8 distinct 16-byte bank groups (the most 4 channels of one
    position allow: 4 wavefronts), for every warp's channels."""
    for channels in (16, 32):
        g = depthwise_strips(_p("convnext_dw7x7_56", C=96, F=96, groups=96), channels, 19)
        for warp in range(g.warps):
            for hh in range(2):
                for kk in range(2):
                    for e in range(2):
                        words = {(g.gather(OPS, L // 4 + 8 * hh, 2 * (L % 4) + 8 * kk + e, warp * CG) * 2 // 16) % 8
                                 for L in range(32)}
                        assert len(words) == 8, (channels, warp, hh, kk, e, words)


@pytest.mark.parametrize("kw, why", [
    (dict(F=192), "multiplier"),
    (dict(dtype="f32"), "f32 inputs"),
    (dict(stride=[2, 2]), "stride"),
    (dict(dilation=[2, 1], pad=[6, 3, 6, 3]), "dilation"),
    (dict(S=11, pad=[3, 5, 3, 5]), "11-column window"),
    (dict(R=9, pad=[4, 3, 4, 3]), "ring accumulators"),
    (dict(C=40, F=40, groups=40), "multiple of the 16-channel block"),
])
def test_declines(kw, why):
    p = _p("convnext_dw7x7_56", **kw)
    assert why in supports(p, SM90)
    assert strips_candidates(p, SM90) == [] and not prefers_strips(p, SM90)
    with pytest.raises(PlanError, match=why):
        plan_depthwise_strips(p, SM90)
    assert "TMA" in supports(_p("convnext_dw7x7_56"), get_target("gfx942"))
    dyn = dataclasses.replace(_p("convnext_dw7x7_56"), batch_constant=0)
    assert "batch read at run time" in supports(dyn, SM90)
    with pytest.raises(DepthwiseStripsUnsupported, match="swizzle span"):
        depthwise_strips(_p("convnext_dw7x7_56"), 24, 19)


def test_rule():
    """7+ column windows at a batch of 16+ with 2R+ output rows and 16k+ outputs per SM take
    this kernel (ConvNeXt-T 56, 28 and 14 px at batch 32, 56 px at batch 16); 7 px, batch 1, a
    small grid (33 px x 48 channels at batch 20: 8k per SM) and 3x3/5x5 windows do not."""
    for name, kw, want in (("convnext_dw7x7_56", {}, True), ("convnext_dw7x7_7", {}, False),
                           ("convnext_dw7x7_56_b1", {}, False), ("convnext_dw7x7_56", dict(N=16), True),
                           ("convnext_dw7x7_56", dict(N=12), False),
                           ("convnext_dw7x7_56", dict(H=14, W=14, C=384, F=384, groups=384), True),
                           ("convnext_dw7x7_56", dict(N=20, H=33, W=33, C=48, F=48, groups=48), False),
                           ("mbv2_dw3x3_56", {}, False), ("effnet_dw5x5_s2", {}, False)):
        p = _p(name, **kw)
        s = plan_schedule_for(p, SM90)
        assert (s.kernel == "depthwise_strips") == want, (name, kw, s.describe())
        assert prefers_strips(p, SM90) == want
    s = plan_schedule_for(_p("convnext_dw7x7_56"), SM90)
    assert (s.config.rows, s.config.channels, s.grid[0]) == (19, 32, 126), s.describe()


def test_schedules_agree_with_the_layout():
    for t in (SM90, SM100):
        p = _p("convnext_dw7x7_56")
        cands = strips_candidates(p, t)
        assert len(cands) == len({c.describe() for c in cands}) >= 4
        for s in cands:
            g = geometry_of(p, s)
            assert s.smem_bytes == g.smem_bytes <= 227 * 1024 and s.threads == g.threads == 32 * g.warps
            assert 1 <= s.grid[0] <= g.items and s.scratch_bytes == s.grid[0] * 128
        assert any(c.kernel == "depthwise_strips" for c in candidate_schedules(p, t))


def test_emitted_code(tmp_path):
    """ConvNeXt 56 px at batch 32 (19-row strips: 25 input rows, 3 groups of 7 and 4 after):
    28 mma.sync per input row of the loop; after it LLVM drops the products into ring slots
    no later row completes (the last row feeds one slot, the one before two, ...); one TMA box
    per input row."""
    p = _p("convnext_dw7x7_56")
    g = geometry_of(p, plan_schedule_for(p, SM90))
    text = open(layer_ptx(tmp_path, LAYERS["convnext_dw7x7_56"], "sm_90a")).read()
    tail = g.steps % g.R
    steps = g.R + tail
    assert text.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == (g.R * g.R + tail * (tail + 1) // 2) * CG
    assert text.count("cp.async.bulk.tensor.4d") >= steps
    assert "mbarrier.try_wait.parity" in text and "ldmatrix" not in text


@pytest.mark.skipif(PTXAS is None, reason="no ptxas (pip install nvidia-cuda-nvcc)")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptxas_without_spills(tmp_path, arch):
    """The rule's schedule of ConvNeXt 56 and 28 px (f16) and of a bf16 residual layer assembles
    without spills."""
    for layer in (LAYERS["convnext_dw7x7_56"],
                  dataclasses.replace(LAYERS["convnext_dw7x7_56"], name="cnx28", H=28, W=28, C=192, F=192, groups=192),
                  dataclasses.replace(LAYERS["convnext_dw7x7_56"], name="cnx_bf16", N=20, dtype="bf16", epilogue="bias_residual_relu")):
        path = layer_ptx(tmp_path, layer, arch)
        assert "mma.sync" in open(path).read()
        res = subprocess.run([PTXAS, f"-arch={arch}", "-v", path, "-o", os.devnull], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-2000:]
        assert not re.search(r"[1-9][0-9]* bytes spill stores", res.stderr), res.stderr[-2000:]
