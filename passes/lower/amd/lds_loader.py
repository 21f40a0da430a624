"""The LDS-direct im2col loader of the AMD kernel (after MAX's TileLoaderLDSIm2col).

Loading waves fill an LDS ring of `stages` stages; each stage holds the activation tile
[block_m][block_k] then the filter tile [block_n][block_k] (f16/bf16, K contiguous, swizzled as
`im2col_addressing` defines). Every loading lane issues exactly one direct-to-LDS load per
load step (`amdgpu.gather_to_lds` from a `fat_raw_buffer` view: `buffer_load_dword ... lds`
on gfx942, `buffer_load_dwordx4 ... lds` on gfx950), so each K tile costs the same number of
`vmcnt` events on every lane and the ring's waits are static.

All address arithmetic comes from `im2col_addressing` evaluated with `IrOps`, so it is the
code the numpy model test checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ir
from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import LdsMfmaConfig
from ...schedule import Schedule
from ...target import Target, get_target
from ..common.emit import float_type
from .primitives import FP8_DTYPES, LDS_DMA_BYTES, load_to_lds, mfma_k
from ..common.int_ops import IrOps
from .im2col_addressing import (AddressingError, RingPlan, TileGeometry, choose_subpath, lane_source,
                                wave_lds_base)

WAVE = 64
MFMA_WAVES = 4          # 2 x 2 waves, each a (block_m/2) x (block_n/2) accumulator tile


def wave_tile_m(s: Schedule) -> int:
    """Accumulator rows of one MFMA wave (2 x 2 waves share the block tile)."""
    return s.block_m // 2


def wave_tile_n(s: Schedule) -> int:
    return s.block_n // 2


LOADING_WAVES = 2


@dataclass(frozen=True)
class LoaderConfig:
    """Everything static about the loader of one (problem, schedule)."""

    conv: ConvProblem
    act: TileGeometry
    flt: TileGeometry
    subpath: str
    ring: RingPlan

    @property
    def stage_elements(self) -> int:
        return self.act.elements + self.flt.elements

    @property
    def flt_offset(self) -> int:
        """Element offset of the filter tile inside a stage (the activation tile is first)."""
        return self.act.elements

    @property
    def loads_per_tile(self) -> int:
        return self.act.loads_per_lane + self.flt.loads_per_lane


def lane_elements(t: Target, dtype: str) -> int:
    """Elements one loading lane moves per direct-to-LDS load: the target's widest load, or
    the widest one that divides an MFMA operand granule where that is narrower (OCP fp8 on
    gfx950: 8-byte granules and no 8-byte loads, so 4 bytes)."""
    eb = DTYPE_BYTES[dtype]
    granule = mfma_k(t.arch, dtype) // 4 * eb
    sizes = [b for b in LDS_DMA_BYTES[t.arch] if b <= t.lds_dma_bytes and granule % b == 0]
    return max(sizes) // eb


def loader_config(p: ConvProblem, s: Schedule, t: Target | None = None) -> LoaderConfig:
    """Static loader description; raises AddressingError when the loader cannot serve p."""
    t = t or get_target(s.target)
    if not t.lds_dma_bytes or not t.mfma_k:
        raise AddressingError(f"{t.arch} has no direct-to-LDS loads / MFMA")
    if p.dtype not in ("f16", "bf16", "i8") + FP8_DTYPES:
        raise AddressingError(f"{p.dtype} inputs (the MFMA path takes f16/bf16, i8 and OCP fp8)")
    vec = lane_elements(t, p.dtype)
    lane_elems = s.config_as(LdsMfmaConfig).lane_elems
    if lane_elems != vec:
        raise AddressingError(f"schedule lane width {lane_elems} != {vec} elements for {t.arch}")
    lanes = (s.threads // WAVE - MFMA_WAVES) * WAVE
    if lanes <= 0:
        raise AddressingError("schedule has no loading waves")
    granule = mfma_k(t.arch, p.dtype) // 4     # elements of one MFMA operand per lane
    subpath = choose_subpath(p, s.block_k, vec)
    act = TileGeometry(s.block_m, s.block_k, vec, lanes, granule)
    flt = TileGeometry(s.block_n, s.block_k, vec, lanes, granule)
    ktiles = -(-p.gemm_k // s.block_k)
    ring = RingPlan(ktiles, s.stages, act.loads_per_lane + flt.loads_per_lane)
    return LoaderConfig(p, act, flt, subpath, ring)


class LdsLoader:
    """Emits the loading waves' direct-to-LDS loads for one K tile into one ring stage.

    x_buf / w_buf: `fat_raw_buffer` views of the input and filter; lds: the flat ring;
    lane: the loading lane (0 .. lanes-1); wave: the loading wave (wave-uniform value).
    """

    def __init__(self, e, arch: str, cfg: LoaderConfig, dtype: str, x_buf, w_buf, lds, lane, wave, m0, n0):
        self.e, self.arch, self.cfg = e, arch, cfg
        self.ops = IrOps(e)
        self.x_buf, self.w_buf, self.lds = x_buf, w_buf, lds
        self.lane, self.wave, self.m0, self.n0 = lane, wave, m0, n0
        self.transfer = ir.VectorType.get([cfg.act.vec], float_type(dtype))

    def issue(self, k0, stage, *, loc=None, ip=None) -> None:
        """All loads of the K tile starting at k0 into ring stage `stage` (int or index value)."""
        cfg, ops = self.cfg, self.ops
        stage_base = ops.mul(stage, cfg.stage_elements)
        for operand, g, src, row0, tile_off in (("act", cfg.act, self.x_buf, self.m0, 0),
                                                 ("filter", cfg.flt, self.w_buf, self.n0, cfg.flt_offset)):
            for j in range(g.loads_per_lane):
                offset = lane_source(ops, cfg.conv, g, operand, cfg.subpath, row0, k0, j, self.lane)
                dst = ops.add(ops.add(stage_base, tile_off), wave_lds_base(ops, g, j, self.wave))
                load_to_lds(self.arch, src, self.e._v(offset), self.lds, self.e._v(dst), self.transfer,
                            loc=loc, ip=ip)
