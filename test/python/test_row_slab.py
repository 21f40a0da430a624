"""The row-slab geometry (sm_90a kernel for convs too narrow for TMA pixels): the A tile the
fragment loads build from the TMA-loaded slab equals a direct im2col, on random data."""

import numpy as np
import pytest

from convc.passes.problem import ConvProblem
from convc.passes.lower.nvidia import tensormap as tm
from convc.passes.lower.nvidia.row_slab import (RowSlabUnsupported, im2col_from_slab, row_slab,
                                                slab_model)
from convc.passes.lower.nvidia.sm90_rows import RowsLayout, input_map_args


def direct_im2col(p, x, n, ho, g):
    """[Wo, kp] with K ordered (r, lead + s*C + c), each filter row padded to g.sc2."""
    a = np.zeros((p.Wo, g.kp), dtype=x.dtype)
    for wo in range(p.Wo):
        for r in range(p.R):
            hi = p.stride[0] * ho - p.pad[0] + r * p.dilation[0]
            for s in range(p.S):
                wi = p.stride[1] * wo - p.pad[1] + s
                for c in range(p.C):
                    if 0 <= hi < p.H and 0 <= wi < p.W:
                        a[wo, r * g.sc2 + g.lead + s * p.C + c] = x[n, hi, wi, c]
    return a


CASES = [
    dict(N=2, H=224, W=224, C=3, F=64, R=7, S=7, stride=(2, 2), pad=(3, 3, 3, 3)),   # ResNet stem
    dict(N=1, H=40, W=40, C=3, F=64, R=3, S=3, stride=(2, 2), pad=(1, 1, 1, 1)),
    dict(N=1, H=33, W=24, C=2, F=128, R=5, S=3, stride=(1, 1), pad=(2, 0, 1, 2)),
    dict(N=1, H=17, W=64, C=4, F=64, R=2, S=5, stride=(3, 1), pad=(0, 2, 0, 1), dilation=(2, 1)),
]


@pytest.mark.parametrize("case", CASES)
def test_fragments_equal_im2col(case):
    p = ConvProblem(**case)
    g = row_slab(p)
    assert g.xs % 8 == 0 and g.shift % 2 == 0        # 16-byte box starts, 4-byte fragment pairs
    rng = np.random.default_rng(0)
    x = rng.standard_normal((p.N, p.H, p.W, p.C)).astype(np.float32)
    for n, ho in [(0, 0), (p.N - 1, p.Ho - 1), (0, p.Ho // 2)]:
        slab = slab_model(p, g, x, n, ho)
        np.testing.assert_array_equal(im2col_from_slab(p, g, slab, p.Wo), direct_im2col(p, x, n, ho, g))


F32_CASES = [dict(c, dtype="f32", out_dtype="f32") for c in CASES] + [
    dict(N=1, H=9, W=20, C=3, F=64, R=3, S=3, stride=(1, 1), pad=(1, 1, 1, 1), dtype="f32"),   # stride_w*C odd
]


@pytest.mark.parametrize("case", F32_CASES)
def test_tf32_fragments_equal_im2col(case):
    """f32 operands (TF32 k8): no leading slot, K a multiple of 8, any stride_w*C."""
    p = ConvProblem(**case)
    g = row_slab(p)
    assert g.lead == 0 and g.kstep == 8 and g.pair == 1 and g.kp % 8 == 0
    assert g.xs % 4 == 0                                 # 16-byte box starts
    rng = np.random.default_rng(1)
    x = rng.standard_normal((p.N, p.H, p.W, p.C)).astype(np.float32)
    for n, ho in [(0, 0), (p.N - 1, p.Ho - 1)]:
        slab = slab_model(p, g, x, n, ho)
        np.testing.assert_array_equal(im2col_from_slab(p, g, slab, p.Wo), direct_im2col(p, x, n, ho, g))


def _wgmma_a_layout(kstep: int, warp: int, lane: int, reg: int, i: int) -> tuple[int, int]:
    """(row, k) of element i of A register `reg` held by (warp, lane) in a register-A wgmma
    m64k{kstep}, written from CUTLASS's ALayout_64x16 (16-bit pairs) and ALayout_64x8 (TF32)."""
    g, q = lane // 4, lane % 4
    if kstep == 16:      # values (k-pair bit, row half, k half): strides 64, 8, 512 of m + 64k
        return 16 * warp + g + 8 * (reg % 2), 2 * q + i + 8 * (reg // 2)
    return 16 * warp + g + 8 * (reg % 2), q + 4 * (reg // 2)        # strides 8, 256


@pytest.mark.parametrize("case", [CASES[0], F32_CASES[0], F32_CASES[-1]])
def test_registers_hold_the_wgmma_a_fragment(case):
    """What the consumer loads into each fragment register (RowSlab.registers: slab row and K
    slot, the lane's pair*q offset, the per-row pixel offset, masking of zero-weight slots)
    is the im2col A tile at the (row, k) the wgmma expects there, for every lane and k-step."""
    p = ConvProblem(**case)
    g = row_slab(p)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((p.N, p.H, p.W, p.C)).astype(np.float32)
    slab = slab_model(p, g, x, 0, p.Ho // 2).reshape(-1)
    a = direct_im2col(p, x, 0, p.Ho // 2, g)
    for sub in range(g.subs):
        for warp in range(4):
            for lane in range(32):
                for kk in range(g.ksteps):
                    for reg, at in enumerate(g.registers(kk)):
                        for i in range(g.pair):
                            m, k = _wgmma_a_layout(g.kstep, warp, lane, reg, i)
                            m += 64 * sub
                            k += g.kstep * kk
                            if at is None:
                                assert k >= g.rows_r * g.sc2
                                continue
                            hr, r, j = at
                            assert hr == (m // 8) % 2
                            jl = j + g.pair * (lane % 4) + i
                            got = slab[g.offset(min(m, p.Wo - 1), r, jl)] if g.valid(jl) else 0.0
                            want = a[m, k] if m < p.Wo else a[p.Wo - 1, k]
                            assert got == want, (sub, warp, lane, kk, reg, i)


def test_stem_geometry():
    g = row_slab(ConvProblem(N=32, H=224, W=224, C=3, F=64, R=7, S=7, stride=(2, 2), pad=(3, 3, 3, 3)))
    # x0 = -9: 96-element groups (672 = 7 * 96), the slab starts at -96; one leading zero K
    # slot keeps pairs aligned; all 7 rows in one box of 7 x 9 x 96
    assert (g.sc, g.lead, g.sc2, g.kp, g.ksteps, g.xs, g.shift, g.subs) == (21, 1, 24, 176, 11, -96, 86, 2)
    assert (g.group, g.groups, g.rows_box, g.boxes, g.pitch) == (96, 9, 7, 1, 864)
    assert g.shift + 6 * (112 - 1) + g.sc2 <= g.pitch          # the last pixel's window fits
    assert g.carry                                             # (44 + 32) x 2 registers


def test_f32_stem_geometry():
    g = row_slab(ConvProblem(N=32, H=224, W=224, C=3, F=64, R=7, S=7, stride=(2, 2), pad=(3, 3, 3, 3),
                             dtype="f32", out_dtype="f32"))
    # no leading slot; 7 rows of 24 K slots = 168 = 21 k8 steps, 84 fragment registers per
    # sub-block: two sub-blocks' would not fit beside the accumulators, one at a time does
    assert (g.sc, g.lead, g.sc2, g.kp, g.ksteps, g.subs, g.fragment_registers) == (21, 0, 24, 168, 21, 2, 84)
    assert not g.carry and g.ktiles == 6
    assert g.shift + 6 * (112 - 1) + g.sc2 <= g.pitch


@pytest.mark.parametrize("case", CASES)
def test_one_box_holds_the_slab(case):
    """The input map's box is the slab of rows_box rows, the driver's encoder accepts it, and
    the boxes of a tile add up to the bytes the producer expects."""
    p = ConvProblem(**case)
    g = row_slab(p)
    args = input_map_args(p, g)
    tm.encode_tiled(args)
    assert args.box_dim == (g.group, g.groups, g.rows_box, 1)
    assert g.boxes * g.group * g.groups * g.rows_box * g.elem_bytes == g.slab_bytes
    assert g.xs % g.group == 0 and (p.W * p.C) % g.group == 0 and (g.group * g.elem_bytes) % 16 == 0
    assert g.rows_box == (p.R if p.dilation[0] == 1 else 1)
    assert g.boxes == 1 or (g.pitch * g.elem_bytes) % 128 == 0     # every box's destination 128-byte aligned


@pytest.mark.parametrize("case, why", [
    (dict(N=1, H=8, W=8, C=3, F=64, R=3, S=3, dilation=(1, 2)), "dilation"),
    (dict(N=1, H=8, W=8, C=3, F=64, R=3, S=3), "odd"),
    (dict(N=1, H=8, W=10, C=2, F=64, R=3, S=3), "16-byte"),
    (dict(N=1, H=8, W=300, C=2, F=64, R=1, S=1), "Wo="),
    (dict(N=1, H=8, W=8, C=2, F=48, R=3, S=3), "F=48"),
    # convc-fuzz: a box per filter row at 816-byte steps faulted (misaligned TMA destination)
    (dict(N=4, H=29, W=34, C=12, F=256, R=3, S=1, stride=(1, 2), dilation=(2, 1)), "128-byte"),
])
def test_declines_with_reason(case, why):
    with pytest.raises(RowSlabUnsupported, match=why):
        row_slab(ConvProblem(**case))


@pytest.mark.parametrize("case", CASES + [
    dict(N=1, H=8, W=512, C=4, F=64, R=3, S=3, stride=(4, 4), pad=(1, 1, 1, 1)),   # slab > filter
])
def test_prefetch_source_covers_a_slab(case):
    """A warpgroup without a next tile prefetches fragments from the filter region, so that
    region must span a whole slab slot (in bounds, never rewritten)."""
    p = ConvProblem(**case)
    g = row_slab(p)
    lay = RowsLayout(p, g, 2)
    assert lay.stage0 - lay.filt0 >= lay.slot >= g.slab_bytes
    assert lay.stage0 - lay.filt0 >= g.ktiles * lay.filt_tile
