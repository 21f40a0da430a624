"""Numpy model of the AMD LDS-direct im2col loader, checked against a numpy im2col.

The loader's address/halo/swizzle logic (passes/lower/amd/im2col_addressing.py) is evaluated
here with numpy lanes — the same code the kernel emitter evaluates into `arith` IR. The
simulation plays the loading waves' program (RingPlan.events: issue / s_waitcnt vmcnt /
s_barrier) against a flat LDS ring with the hardware's rules, not the module's:

- a direct-to-LDS load writes lane i's `vec` elements at M0 + i * vec (lane-contiguous from the
  wave's uniform base), whatever the swizzle;
- a buffer read whose offset is at or past the buffer's end returns zeros (a straddling read,
  which the loader must never issue, fails the test);
- loads complete in issue order; `vmcnt(n)` leaves the last n in flight; an in-flight load may
  land at any time, so no in-flight or newly issued load may target the stage being read.

At each barrier the MFMA side reads the stage back granule by granule through
`lds_read_offset` (the kernel's read addressing) and must see exactly the im2col tile and the
filter tile, zeros past M / K / F. Suite layers run at their planned schedules with N cut to
at most 2 (every layer's C/R/S/stride/dilation/pad kept); random shapes cover strides,
dilations, asymmetric pads, ragged C/K/M/F and each sub-path, with 64 and 128 tiles.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np
import pytest

from convc.passes.lower.amd.im2col_addressing import (
    OOB_SENTINEL, AddressingError, RingPlan, lane_source, lds_read_offset, wave_lds_base)
from convc.passes.lower.common.int_ops import NumpyOps
from convc.passes.lower.amd.lds_loader import loader_config
from convc.passes.plan.plan_schedule import PlanError, plan_schedule_for
from convc.passes.plan.kernels.amd_lds_mfma import plan_amd_lds_mfma
from convc.passes.problem import ConvProblem
from convc.passes.target import get_target
from convc.tools.layers import load_suite

SUITE = load_suite()
AMD = ("gfx942", "gfx950")
OPS = NumpyOps()


def im2col(x: np.ndarray, p: ConvProblem) -> np.ndarray:
    """[M, K] with K ordered (r, s, c), straight from the definition of the conv."""
    pt, pl, pb, pr = p.pad
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    sh, sw = p.stride
    dh, dw = p.dilation
    cols = np.empty((p.N, p.Ho, p.Wo, p.R, p.S, p.C), x.dtype)
    for r in range(p.R):
        for s in range(p.S):
            cols[:, :, :, r, s, :] = xp[:, r * dh: r * dh + (p.Ho - 1) * sh + 1: sh,
                                        s * dw: s * dw + (p.Wo - 1) * sw + 1: sw, :]
    return cols.reshape(p.gemm_m, p.gemm_k)


def buffer_read(buf: np.ndarray, offsets: np.ndarray, vec: int) -> np.ndarray:
    """Raw buffer loads of `vec` elements per lane; out-of-range lanes read zero."""
    offsets = np.asarray(offsets)
    inside = offsets + vec <= buf.size
    straddle = (offsets < buf.size) & ~inside
    assert not straddle.any(), "a lane read straddles the end of the buffer"
    assert (offsets[~inside] >= OOB_SENTINEL).all() or (offsets[~inside] >= buf.size).all()
    idx = np.where(inside, offsets, 0)[..., None] + np.arange(vec)
    return np.where(inside[..., None], buf[idx], 0)


def _tile(ref: np.ndarray, r0: int, rows: int, k0: int, cols: int) -> np.ndarray:
    out = np.zeros((rows, cols), ref.dtype)
    part = ref[r0:r0 + rows, k0:k0 + cols]
    out[:part.shape[0], :part.shape[1]] = part
    return out


class LoaderModel:
    """Plays the loading waves' program for one workgroup tile (m0, n0)."""

    def __init__(self, p: ConvProblem, s, x: np.ndarray, w: np.ndarray):
        self.p, self.s = p, s
        self.cfg = loader_config(p, s)
        self.x, self.w = x.reshape(-1), w.reshape(-1)
        self.a_ref, self.w_ref = im2col(x, p), w.reshape(p.F, p.gemm_k)

    def _writes(self, tile: int, stage: int, m0: int, n0: int):
        """The load instructions of one K tile: [(dst offsets [lanes, vec], data [lanes, vec])]."""
        cfg, s = self.cfg, self.s
        lanes = np.arange(cfg.act.lanes)
        wave, lane_in_wave = lanes // 64, lanes % 64
        out = []
        for operand, g, buf, row0, tile_off in (("act", cfg.act, self.x, m0, 0),
                                                 ("filter", cfg.flt, self.w, n0, cfg.flt_offset)):
            for j in range(g.loads_per_lane):
                src = lane_source(OPS, cfg.conv, g, operand, cfg.subpath, row0, tile * s.block_k, j, lanes)
                data = buffer_read(buf, src, g.vec)
                # Hardware rule: wave w's instruction j writes lane i at M0 + i * vec.
                m0_base = stage * cfg.stage_elements + tile_off + wave_lds_base(OPS, g, j, wave)
                dst = m0_base[:, None] + lane_in_wave[:, None] * g.vec + np.arange(g.vec)
                out.append((tile, stage, dst, data))
        return out

    def _read_stage(self, lds: np.ndarray, stage: int, g, tile_off: int) -> np.ndarray:
        """The MFMA side: granule reads at lds_read_offset for every (row, granule)."""
        rows = np.arange(g.rows)[:, None]
        chunks = np.arange(0, g.chunks_per_row, g.granule // g.vec)[None, :]
        off = stage * self.cfg.stage_elements + tile_off + lds_read_offset(OPS, g, rows, chunks)
        vals = lds[off[..., None] + np.arange(g.granule)]          # [rows, granules, granule]
        return vals.reshape(g.rows, g.cols)

    def run(self, m0: int, n0: int) -> int:
        cfg, s = self.cfg, self.s
        lds = np.full(s.stages * cfg.stage_elements, np.nan)
        pending: list = []
        reading = None
        checked = 0
        for ev in cfg.ring.events():
            if ev[0] == "issue":
                _, tile, stage = ev
                assert stage != reading, f"tile {tile} issued into stage {stage} while it is read"
                pending += self._writes(tile, stage, m0, n0)
            elif ev[0] == "wait":
                keep = ev[1]
                done, pending = pending[:len(pending) - keep], pending[len(pending) - keep:]
                for _, _, dst, data in done:
                    lds[dst] = data
            else:
                t = ev[1]
                reading = t % s.stages
                assert all(tile != t for tile, *_ in pending), f"tile {t} not landed at barrier {t}"
                assert all(stage != reading for _, stage, *_ in pending), "in-flight load into the stage being read"
                k0 = t * s.block_k
                got_a = self._read_stage(lds, reading, cfg.act, 0)
                got_w = self._read_stage(lds, reading, cfg.flt, cfg.flt_offset)
                np.testing.assert_array_equal(got_a, _tile(self.a_ref, m0, s.block_m, k0, s.block_k),
                                              err_msg=f"activation tile m0={m0} k0={k0}")
                np.testing.assert_array_equal(got_w, _tile(self.w_ref, n0, s.block_n, k0, s.block_k),
                                              err_msg=f"filter tile n0={n0} k0={k0}")
                checked += 1
        assert checked == cfg.ring.ktiles and not pending
        return checked


def check_problem(p: ConvProblem, s, seed: int, max_m_tiles: int = 3) -> str:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 100, size=(p.N, p.H, p.W, p.C)).astype(np.float32)   # never 0: OOB shows
    w = rng.integers(1, 100, size=(p.F, p.R, p.S, p.C)).astype(np.float32)
    model = LoaderModel(p, s, x, w)
    m_tiles = -(-p.gemm_m // s.block_m)
    n_tiles = -(-p.F // s.block_n)
    picks = sorted({0, m_tiles - 1, int(rng.integers(0, m_tiles))})[:max_m_tiles]
    for mt in picks:
        nt = n_tiles - 1 if mt == m_tiles - 1 else int(rng.integers(0, n_tiles))
        model.run(mt * s.block_m, nt * s.block_n)
    return model.cfg.subpath


def _small(p: ConvProblem) -> ConvProblem:
    return dataclasses.replace(p, N=min(p.N, 2))


EXPECTED_SUBPATH = {   # per suite layer: (gfx942 block_k 32, gfx950 block_k 64)
    "r50_conv1_7x7s2": (None, None),                       # C = 3: declined
    "dil2_3x3_256_33x33": ("substrip", "substrip"),
    "s2_5x5_96": ("substrip", "per_lane"),                 # 96 % 64 != 0
    "c24_1x1_to_144": ("pointwise", "pointwise"),
    "valid_3x3_64_odd": ("substrip", "substrip"),
}


def expected_subpath(layer, arch: str):
    if layer.name in EXPECTED_SUBPATH:
        return EXPECTED_SUBPATH[layer.name][AMD.index(arch)]
    pointwise = layer.R == layer.S == 1 and tuple(layer.stride) == (1, 1) and not any(layer.pad)
    return "pointwise" if pointwise else "substrip"


@pytest.mark.parametrize("arch", AMD)
@pytest.mark.parametrize("layer", SUITE, ids=[L.name for L in SUITE])
def test_suite_layer_loader_matches_im2col(arch, layer):
    t = get_target(arch)
    p = layer.expected_problem()
    want = expected_subpath(layer, arch)
    if want is None:
        with pytest.raises(PlanError, match="not a multiple of the"):
            plan_amd_lds_mfma(p, t)
        s = plan_schedule_for(p, t)
        assert s.kernel == "portable_igemm" and "LDS-direct MFMA path declined" in s.reason
        return
    s = plan_schedule_for(p, t)
    assert s.kernel == "amd_lds_mfma", s.reason
    assert f"({want}," in s.reason
    assert check_problem(_small(p), s, seed=zlib.crc32(layer.name.encode())) == want


def random_problem(rng, arch: str, subpath: str, dtype: str = "f16") -> ConvProblem:
    """A random conv the loader's `subpath` reads (C in lane vectors, block_k multiples or not);
    i8: i32 sums and output (test_int8_amd.py); fp8: f32 sums and output (test_fp8_amd.py)."""
    from convc.passes.lower.amd.lds_loader import lane_elements
    from convc.passes.lower.amd.primitives import mfma_k
    vec = lane_elements(get_target(arch), dtype)
    bk = 2 * mfma_k(arch, dtype)
    if subpath == "pointwise":
        R = S = 1
        stride, dil, pad = (1, 1), (1, 1), (0, 0, 0, 0)
        C = vec * int(rng.integers(1, 24))
    else:
        R, S = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        stride = tuple(int(v) for v in rng.integers(1, 4, size=2))
        dil = tuple(int(v) for v in rng.integers(1, 4, size=2))
        pad = tuple(int(v) for v in rng.integers(0, 4, size=4))
        if subpath == "substrip":
            C = bk * int(rng.integers(1, 4))
        else:
            C = vec * int(rng.integers(1, 3 * bk // vec))
            if C % bk == 0:
                C += vec
    eff_h, eff_w = dil[0] * (R - 1) + 1, dil[1] * (S - 1) + 1
    H = max(1, eff_h - pad[0] - pad[2]) + int(rng.integers(0, 12))
    W = max(1, eff_w - pad[1] - pad[3]) + int(rng.integers(0, 12))
    ints = (dict(dtype="i8", acc_dtype="i32", out_dtype="i32") if dtype == "i8" else
            dict(dtype=dtype, acc_dtype="f32", out_dtype="f32") if dtype.startswith("f8") else {})
    return ConvProblem(N=int(rng.integers(1, 3)), H=H, W=W, C=C, F=int(rng.integers(1, 200)),
                       R=R, S=S, stride=stride, dilation=dil, pad=pad, **ints)


@pytest.mark.parametrize("arch", AMD)
@pytest.mark.parametrize("subpath", ["pointwise", "substrip", "per_lane"])
@pytest.mark.parametrize("block", [64, 128])
def test_random_shapes_loader_matches_im2col(arch, subpath, block):
    rng = np.random.default_rng(zlib.crc32(f"{arch}/{subpath}/{block}".encode()))
    t = get_target(arch)
    for i in range(6):
        p = random_problem(rng, arch, subpath)
        s = plan_amd_lds_mfma(p, t, block=block)
        assert check_problem(p, s, seed=i) == subpath, p


@pytest.mark.parametrize("arch", AMD)
def test_lane_width_decline(arch):
    """C not a multiple of the lane width: the loader declines, the planner falls back."""
    t = get_target(arch)
    vec = t.lds_dma_bytes // 2
    p = ConvProblem(N=1, H=9, W=9, C=vec * 3 + 1, F=32, R=3, S=3, pad=(1, 1, 1, 1))
    with pytest.raises(PlanError, match=f"C={p.C} is not a multiple of the {vec}-element"):
        plan_amd_lds_mfma(p, t)
    s = plan_schedule_for(p, t)
    assert s.kernel == "portable_igemm" and "declined" in s.reason


def test_ring_plan_waits():
    """vmcnt counts of the ring: steady (stages-2) tiles in flight, the tail drains."""
    r = RingPlan(ktiles=5, stages=3, loads_per_tile=16)
    assert r.prologue == 2 and r.steady == 3 and r.steady_wait() == 16
    assert r.tail_waits() == [(3, 16), (4, 0)]
    assert RingPlan(ktiles=1, stages=3, loads_per_tile=16).events() == [("issue", 0, 0), ("wait", 0), ("barrier", 0)]
    with pytest.raises(AddressingError, match="exceed vmcnt"):
        RingPlan(ktiles=4, stages=3, loads_per_tile=32)
