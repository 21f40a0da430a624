"""The tensor-core depthwise kernel (passes/plan/kernels/depthwise_mma.py,
lower/nvidia/depthwise_mma.py) without a GPU.

- Geometry: the banded filter (every lane's B pair is T[o], T[o+1] of one copy, aligned), the
  shared-memory regions (raw box, channel slots, bands, barrier) in order and disjoint, slot
  and pitch strides odd multiples of 16 bytes, the transposition's matrices linear in the unit
  (the emitter's compile-time offsets), declines (multiplier, f32, channels without 16-byte
  vectors, boxes past the TMA limit, AMD).
- The kernel modelled in numpy on one shared-memory array laid out as the geometry says: the
  TMA box with zero fill, the ldmatrix.trans transposition into planes, the bands, per warp
  and channel ldmatrix.x4 A fragments x B pairs as m16n8k16 products, the accumulators into
  the slots, the epilogue's read-back; against an independent float64 conv on random shapes
  (strides, dilations, asymmetric pads, odd sizes, partial tiles and channel blocks), conftest's.
- Planning: candidates on sm_90a and sm_100a, schedule agrees with the layout, descriptor
  scratch per CTA; emitted code (mma.sync per fragment, ldmatrix.trans, one 4-D TMA per tile)
  and ptxas for sm_90a/sm_100a on the candidates of three layers, no spills.
"""

import dataclasses
import os
import re
import subprocess

import numpy as np
import pytest

from conftest import grouped_conv_reference, layer_ptx
from convc.passes.plan.kernels.common import PlanError
from convc.passes.plan.kernels.depthwise_mma import mma_candidates, plan_depthwise_mma, small_grid_tile, supports
from convc.passes.lower.common.int_ops import NumpyOps
from convc.passes.lower.nvidia.depthwise_mma import geometry_of
from convc.passes.lower.nvidia.depthwise_mma_geometry import (VEC, DepthwiseMmaUnsupported,
                                                              depthwise_mma_geometry)
from convc.passes.plan.plan_schedule import candidate_schedules, plan_schedule_for
from convc.passes.target import get_target
from convc.tools.layers import load_suite
from convc.tools.sm100_table import find_cuda_tool

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = {L.name: L for L in load_suite(os.path.join(HERE, "..", "..", "tools", "data", "depthwise_grouped.json"))}
SM90, SM100 = get_target("sm_90a"), get_target("sm_100a")
PTXAS = find_cuda_tool("ptxas")
OPS = NumpyOps()          # the geometry's index functions on ints, as the kernel's IrOps builds them


def _layer(name, **kw):
    return dataclasses.replace(LAYERS[name], **kw)


def _p(name, **kw):
    return _layer(name, **kw).expected_problem()


def _mma(A, B):
    """m16n8k16 from fragments: A 4 regs/lane (a0: row g, k 2q..; a1: row g+8; a2: k+8; a3:
    both), B 2 regs/lane (k 2q.. / 2q+8.. of column g) -> D as the lanes hold it (rows g, g+8 x
    columns 2q, 2q+1)."""
    a, b = np.zeros((16, 16)), np.zeros((16, 8))
    for L in range(32):
        g, q = L // 4, L % 4
        for reg, (dr, dk) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8)]):
            a[g + dr, 2 * q + dk:2 * q + dk + 2] = A[L][reg]
        for reg in range(2):
            b[2 * q + 8 * reg:2 * q + 8 * reg + 2, g] = B[L][reg]
    return a @ b


def model(p, g, x, w):
    """The kernel on one shared-memory array (elements; the f32 stage aliases the slots,
    modelled as its own array checked to fit them). NaN where nothing was written."""
    eb = g.elem_bytes
    out = np.full((x.shape[0], p.Ho, p.Wo, p.C), np.nan)
    assert g.region_bytes <= g.raw_offset and g.raw_offset % 128 == 0
    assert g.raw_offset + g.box_bytes <= g.taps_offset <= g.taps_index(OPS, g.channels, 0, 0, 0) * eb <= g.barrier_offset
    assert g.barrier_offset + 8 <= g.smem_bytes
    assert (g.slot_bytes // 16) % 2 == 1 and (g.pitch // 8) % 2 == 1 and g.read_cols == g.pitch
    assert g.stage_index(OPS, g.channels - 1, g.rows - 1, g.stage_pitch - 1) < g.region_bytes // 4
    assert g.plane <= g.slot_bytes // eb and g.R * g.S * g.channels <= g.region_bytes // eb
    slot = g.slot_bytes // eb
    for cb in range(g.channel_blocks):
        c0 = cb * g.channels
        smem = np.full(g.smem_bytes // eb, np.nan)
        # the raw filter into the slot region, then the bands (compile-time tap table)
        for t in range(g.R * g.S):
            for c in range(g.channels):
                smem[g.filter_index(OPS, 0, t, c)] = w.reshape(-1, p.C)[t, c0 + c] if c0 + c < p.C else 0.0
        for c in range(g.channels):
            for r in range(g.R):
                for copy in range(2):
                    for j in range(g.taps_len):
                        s = g.tap(j + g.taps_lo - copy)
                        smem[g.taps_index(OPS, c, r, copy, j)] = 0.0 if s is None else smem[g.filter_index(OPS, r, s, c)]
        for t in range(x.shape[0] * g.tiles_per_image):
            n, oh0, ow0 = g.tile_origin(OPS, t)
            ih0, iw0 = oh0 * g.sh - g.pad_top, ow0 * g.sw - g.pad_left
            raw = g.raw_offset // eb          # the TMA box, zeros outside the image
            for row in range(g.in_rows):
                for col in range(g.read_cols):
                    h, ww = ih0 + row, iw0 + col
                    inside = 0 <= h < p.H and 0 <= ww < p.W
                    for c in range(g.channels):
                        smem[raw + g.raw_index(row, col, c)] = x[n, h, ww, c0 + c] if inside and c0 + c < p.C else 0.0
            smem[:g.region_bytes // eb] = np.nan                  # the slots: stale
            for u in range(-(-g.matrices // 4)):                  # ldmatrix.trans + 32-bit stores
                rows_ = []
                for L in range(32):
                    grp, chunk = g.matrix(OPS, min(4 * u + L // 8, g.matrices - 1))
                    a = raw + g.matrix_source(OPS, grp, chunk) + (L % 8) * g.channels
                    rows_.append(smem[a:a + 8])
                for k in range(4):
                    grp, chunk = g.matrix(OPS, min(4 * u + k, g.matrices - 1))
                    m = np.array(rows_[8 * k:8 * k + 8])
                    for L in range(32):
                        word = g.matrix_target(OPS, grp, chunk) + (L // 4) * (g.slot_bytes // 4) + L % 4
                        smem[2 * word:2 * word + 2] = m[2 * (L % 4):2 * (L % 4) + 2, L // 4]
            stage = np.full(g.region_bytes // 4, np.nan)
            for warp in range(g.warps):
                for c in range(warp, g.channels, g.warps):
                    B = {}
                    for r in range(g.R):
                        for sh in g.shifts:
                            B[r, sh] = []
                            for L in range(32):
                                copy, off = g.b_lane(OPS, L)
                                pair = []
                                for h in range(2):
                                    i = g.taps_index(OPS, c, r, copy, off + g.b_offset(h, sh))
                                    assert i % 2 == 0 and g.taps_index(OPS, c, r, 0, 0) <= i < g.taps_index(OPS, c, r, 2, 0) - 1
                                    pair.append(smem[i:i + 2])
                                B[r, sh].append(pair)
                    acc = {(mi, j): np.zeros((16, 8)) for mi in range(g.mt) for j in range(g.nt)}
                    for mi in range(g.mt):
                        for r in range(g.R):
                            for chunk in range(g.chunks):
                                rows_ = []        # ldmatrix.x4: lane L gives row L%8 of matrix L/8
                                for L in range(32):
                                    a = c * slot + g.a_offset(0, mi, r, chunk) + g.a_lane_offset(OPS, L)
                                    assert a + 8 <= c * slot + g.plane
                                    rows_.append(smem[a:a + 8])
                                A = [[rows_[8 * mat + L // 4][2 * (L % 4):2 * (L % 4) + 2] for mat in range(4)]
                                     for L in range(32)]
                                for j, c_, sh in g.pairs:
                                    if c_ == chunk:
                                        acc[mi, j] += _mma(A, B[r, sh])
                    for mi in range(g.mt):
                        for j in range(g.nt):
                            d = acc[mi, j]
                            for L in range(32):
                                gg, q = L // 4, L % 4
                                for half in range(2):
                                    at = g.stage_index(OPS, c, 16 * mi + gg + 8 * half, 8 * j + 2 * q)
                                    stage[at:at + 2] = d[gg + 8 * half, 2 * q:2 * q + 2]
            for i in range(g.store_items):
                chunk, pix = i % (g.channels // VEC), i // (g.channels // VEC)
                row, col = pix // g.cols, pix % g.cols
                oh, ow, ch = oh0 + row, ow0 + col, c0 + VEC * chunk
                if oh < p.Ho and ow < p.Wo and ch < p.C:
                    assert np.isnan(out[n, oh, ow, ch]), "output written twice"
                    out[n, oh, ow, ch:ch + VEC] = [stage[g.stage_index(OPS, VEC * chunk + k, row, col)] for k in range(VEC)]
    return out


def _random_layer(rng):
    R, S = (int(v) for v in rng.integers(1, 8, 2))
    st = [int(v) for v in rng.integers(1, 3, 2)]
    dl = [int(v) for v in rng.integers(1, 3, 2)]
    C = 8 * int(rng.integers(1, 6))
    pad = [int(v) for v in rng.integers(0, 4, 4)]
    H, W = (int(v) for v in rng.integers(5, 40, 2))
    return _layer("mbv2_dw3x3_14", N=2, H=H, W=W, C=C, F=C, groups=C, R=R, S=S, stride=st, dilation=dl, pad=pad)


@pytest.mark.parametrize("seed", range(6))
def test_model_matches_the_conv(seed):
    rng = np.random.default_rng(100 + seed)
    while True:
        L = _random_layer(rng)
        try:
            p = L.expected_problem()
        except ValueError:
            continue
        cands = mma_candidates(p, SM90)
        if cands:
            break
    x = rng.standard_normal((p.N, p.H, p.W, p.C))
    w = rng.standard_normal((p.R, p.S, p.C))
    ref = grouped_conv_reference(p, x, w)
    for s in (cands[0], cands[-1]):
        got = model(p, geometry_of(p, s), x, w)
        assert not np.isnan(got).any(), f"{s.describe()} leaves outputs unwritten"
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


def test_transposition_is_linear_in_the_unit():
    """The emitter's fast path: with chunks dividing 4, matrix 4u + k's source and target are
    unit 0's plus u times unit 1's step."""
    for name in ("mbv2_dw3x3_112", "convnext_dw7x7_56", "effnet_dw5x5_s2", "mbv2_dw3x3_14"):
        p = _p(name)
        for s in mma_candidates(p, SM90):
            g = geometry_of(p, s)
            if 4 % (g.channels // VEC):
                continue
            for u in range(g.matrices // 4):
                for k in range(4):
                    m = 4 * u + k
                    assert g.matrix_source(OPS, *g.matrix(OPS, m)) == (u * g.matrix_source(OPS, *g.matrix(OPS, 4))
                                                                   + g.matrix_source(OPS, *g.matrix(OPS, k)))
                    assert g.matrix_target(OPS, *g.matrix(OPS, m)) == (u * g.matrix_target(OPS, *g.matrix(OPS, 4))
                                                                   + g.matrix_target(OPS, *g.matrix(OPS, k)))


def test_band_pairs_are_aligned_and_in_range():
    for kw in (dict(), dict(stride=[2, 2]), dict(dilation=[2, 2], pad=[2, 2, 2, 2])):
        g = depthwise_mma_geometry(_p("mbv2_dw3x3_56", **kw), 16, 16, 32, 4)
        for L in range(32):
            copy, off = g.b_lane(OPS, L)
            assert off % 2 == 0 and 0 <= off
            for d in g.shifts:
                assert off + g.b_offset(1, d) + 2 <= g.taps_len
                for h in range(2):
                    for e in range(2):      # the pair's element is T[k + d - n*sw] (k = 2q + e + 8h)
                        k = 2 * (L % 4) + e + 8 * h
                        assert off + g.b_offset(h, d) + e + g.taps_lo - copy == k + d - (L // 4) * g.sw


@pytest.mark.parametrize("kw, why", [
    (dict(F=288), "multiplier"),
    (dict(dtype="f32"), "f32"),
    (dict(C=36, F=36, groups=36), "multiple of 8"),
])
def test_declines(kw, why):
    p = _p("mbv2_dw3x3_56", **kw)
    assert why in supports(p, SM90)
    assert mma_candidates(p, SM90) == []
    with pytest.raises(PlanError, match=why):
        plan_depthwise_mma(p, SM90)
    assert "TMA" in supports(_p("mbv2_dw3x3_56"), get_target("gfx942"))
    with pytest.raises(DepthwiseMmaUnsupported, match="TMA limit"):
        depthwise_mma_geometry(_p("mbv2_dw3x3_56", W=300), 8, 16, 256, 4)


def test_schedules_agree_with_the_layout():
    for t in (SM90, SM100):
        for name in LAYERS:
            p = _p(name)
            if not p.depthwise:
                assert mma_candidates(p, t) == []
                continue
            cands = mma_candidates(p, t)
            assert cands, name
            for s in cands:
                g = geometry_of(p, s)
                assert s.smem_bytes == g.smem_bytes <= 64 * 1024 and g.accumulators <= 64
                assert s.grid[0] == g.channel_blocks and 1 <= s.grid[1] <= p.N * g.tiles_per_image
                assert s.scratch_bytes == s.grid[0] * s.grid[1] * 128
                assert s.threads == 32 * g.warps and g.channels % g.warps == 0
            assert any(c.kernel == "depthwise_mma" for c in candidate_schedules(p, t))


def test_dynamic_batch_stays_on_the_direct_kernel():
    """A batch read at run time: the kernel declines (its tile walk and tensor map are sized at
    compile time), and the small-grid rule does not apply (the grid is unknown)."""
    p = dataclasses.replace(_p("convnext_dw7x7_56_b1"), batch_constant=0)
    assert "batch read at run time" in supports(p, SM90) and mma_candidates(p, SM90) == []
    assert plan_schedule_for(p, SM90).kernel == "direct_grouped"


def _mma_indices(p, t):
    return [i for i, s in enumerate(candidate_schedules(p, t)) if s.kernel == "depthwise_mma"]


def test_emitted_code(tmp_path):
    p = _p("convnext_dw7x7_56")
    i = _mma_indices(p, SM90)[0]
    s = candidate_schedules(p, SM90)[i]
    g = geometry_of(p, s)
    text = open(layer_ptx(tmp_path, LAYERS["convnext_dw7x7_56"], "sm_90a", i)).read()
    # the channel loop's body: per row fragment and filter row, one mma per (block, chunk) pair
    assert text.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == g.mt * g.R * len(g.pairs)
    assert text.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == g.mt * g.R * g.chunks
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in text
    assert text.count("cp.async.bulk.tensor.4d") >= 1 and "mbarrier.try_wait.parity" in text


@pytest.mark.skipif(PTXAS is None, reason="no ptxas (pip install nvidia-cuda-nvcc)")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptxas_candidates(tmp_path, arch):
    """Every depthwise_mma candidate of a 3x3, a strided 5x5 and a 7x7 layer assembles without
    spills."""
    t = get_target(arch)
    for name in ("mbv2_dw3x3_56", "effnet_dw5x5_s2", "convnext_dw7x7_7"):
        for i in _mma_indices(_p(name), t)[::2]:
            path = layer_ptx(tmp_path, LAYERS[name], arch, i)
            res = subprocess.run([PTXAS, f"-arch={arch}", "-v", path, "-o", os.devnull], capture_output=True, text=True)
            assert res.returncode == 0, res.stderr[-2000:]
            assert not re.search(r"[1-9][0-9]* bytes spill stores", res.stderr), res.stderr[-2000:]


def test_small_grid_rule():
    """7+ column windows: small grids (under 2 x 128 x 16 outputs per SM) split the direct
    kernel's items' filter rows over threads whatever the type; above them bf16 takes this
    kernel with its small-grid tile (8 warps, the most CTAs up to one per SM) where the direct
    kernel's 8-pixel items fill under all SMs, unless that tile takes more than 2 CTAs per SM
    (then the direct kernel: measured faster there); f16 stays on the direct kernel (below a
    batch of 16 and 2R output rows: above, depthwise_strips, test_depthwise_strips); 3x3
    windows never leave it."""
    for hw, c, n, groups in ((14, 384, 1, 7), (7, 768, 1, 7), (28, 192, 1, 7), (56, 96, 1, 7), (14, 384, 4, 7),
                             (14, 384, 8, 1), (7, 768, 16, 1), (7, 768, 32, 1)):
        p = _p("convnext_dw7x7_56_b1", N=n, H=hw, W=hw, C=c, F=c, groups=c)
        s = plan_schedule_for(p, SM90)
        assert s.kernel == "direct_grouped" and s.config.row_groups == groups, (hw, n, s.describe())
        assert s.block_n == 4 or n == 32, s.describe()      # 8-byte vectors
    for n, hw, c, kernel in ((1, 14, 384, "direct_grouped"), (4, 14, 384, "direct_grouped"),
                             (4, 28, 192, "depthwise_mma"), (8, 14, 384, "direct_grouped")):
        p = _p("convnext_dw7x7_56_b1", N=n, H=hw, W=hw, C=c, F=c, groups=c, dtype="bf16")
        s = plan_schedule_for(p, SM90)
        assert s.kernel == kernel, (n, s.describe())
        if kernel == "depthwise_mma":
            g = geometry_of(p, s)
            assert s.threads == 256 and s.config == small_grid_schedule(p).config
            assert p.N * g.tiles_per_image * g.channel_blocks <= 2 * SM90.num_sms
        elif n < 8:
            assert s.config.row_groups == 7
        else:
            assert "2 CTAs per SM" in s.reason
    assert plan_schedule_for(_p("mbv2_dw3x3_56_b1"), SM90).kernel == "direct_grouped"


def small_grid_schedule(p):
    return plan_depthwise_mma(p, SM90, small_grid_tile(p, SM90))
