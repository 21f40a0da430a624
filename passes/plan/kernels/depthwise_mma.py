"""Depthwise convs (channel multiplier 1, f16/bf16) on tensor cores: the depthwise_mma family
(lower/nvidia/depthwise_mma.py, geometry in lower/nvidia/depthwise_mma_geometry.py).

TMA targets (sm_90a runs it, sm_100a compiles it): mma.sync m16n8k16 for the math, one TMA box
per tile for the input. f32 inputs, a channel multiplier and channel counts without 16-byte
vectors stay on the direct kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...kernel_configs import DepthwiseMmaConfig
from ...lower.nvidia import depthwise_mma, tensormap
from ...lower.nvidia.depthwise_mma_geometry import (DepthwiseMmaGeometry, DepthwiseMmaUnsupported,
                                                   depthwise_mma_geometry)
from ...problem import ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import CTA_SMEM_RESERVE, MAX_CTAS, SM_REGISTERS, SM_SMEM, SM_THREADS, PlanError, accepted, cdiv
from ...lower.nvidia.depthwise_mma import emit_depthwise_mma
from ...kernel_families import KernelFamily, register

MAX_ACCUMULATORS = 64        # f32 accumulators per thread (one channel's fragments)
MAX_SMEM = 64 * 1024         # per CTA: at least 3 CTAs share an SM
TILE_COST = 512              # a tile's fixed cost (barriers, filter rows, addresses) in staged elements
SMALL_GRID_CTAS = 2          # the small-grid rule's bound on CTAs per SM (small_grid_tile)


@dataclass(frozen=True)
class MmaTile:
    """A point of the tile space: channels, output rows x columns, warps."""
    channels: int
    rows: int
    cols: int
    warps: int = 4


def supports(p: ConvProblem, t: Target) -> str | None:
    if not (t.backend == "nvidia" and t.has_tma):
        return f"{t.arch} has no TMA"
    if p.dynamic_batch:
        return "batch read at run time (the tile walk and its tensor map are sized at compile time)"
    try:
        depthwise_mma_geometry(p, 8, 16, 8, 1)
    except (DepthwiseMmaUnsupported, tensormap.TensorMapError) as why:
        return str(why)
    return None


def _geometry(p: ConvProblem, tile: MmaTile) -> DepthwiseMmaGeometry:
    try:
        return depthwise_mma_geometry(p, tile.channels, tile.rows, tile.cols, tile.warps)
    except tensormap.TensorMapError as e:
        raise DepthwiseMmaUnsupported(str(e)) from None


def registers(g: DepthwiseMmaGeometry) -> int:
    """A per-thread register estimate: one channel's accumulators and B registers, A fragments
    in flight, addresses."""
    return g.accumulators + 2 * g.R * len(g.shifts) + 16 + 40


def _fits(g: DepthwiseMmaGeometry, t: Target) -> bool:
    return g.accumulators <= MAX_ACCUMULATORS and g.smem_bytes <= min(MAX_SMEM, t.smem_bytes)


def _cost(p: ConvProblem, g: DepthwiseMmaGeometry) -> float:
    """Staged input and output elements per image and channel (halo and partial tiles
    included), plus a fixed cost per tile: the default tile minimizes it."""
    per_tile = g.in_rows * g.read_cols + g.rows * g.cols + TILE_COST
    return g.tiles_per_image * per_tile * cdiv(p.C, g.channels) * g.channels / p.C


def tiles(p: ConvProblem, t: Target) -> list[MmaTile]:
    """Every tile that fits (accumulators, shared memory), cheapest first (_cost)."""
    out = []
    width = cdiv(p.Wo, 8) * 8
    for channels in (8, 16, 32):
        if channels > 8 and cdiv(p.C, channels) * channels > 1.25 * p.C:
            continue
        for rows in (16, 32):
            if rows > 16 and p.Ho <= 16:
                continue
            for cols in range(8, min(width, 64) + 1, 8):
                for warps in (4, 8):
                    tile = MmaTile(channels, rows, cols, warps)
                    try:
                        g = _geometry(p, tile)
                    except DepthwiseMmaUnsupported:
                        continue
                    if _fits(g, t):
                        out.append((_cost(p, g), -channels, warps, tile))
    return [x[-1] for x in sorted(out, key=lambda x: x[:3])]


def small_grid_tile(p: ConvProblem, t: Target) -> MmaTile | None:
    """The tile for a small problem (the planner's small-grid rule): 8 warps, the most CTAs up
    to one per SM (then the cheaper by _cost), else the fewest; None when that still takes more
    than SMALL_GRID_CTAS CTAs per SM. Measured on an H200: ConvNeXt 7x7 at 56 px, batch 1: 96
    CTAs of 16x32 pixels x 8 channels 4.1 us, 48 of 16x56 5.0 us, 168 of 16x8 4.3-4.6 us; at 7 px,
    batch 16 (768 CTAs) 9.0 us and at 14 px, batch 8 (384) 7.5 us, where the direct kernel takes
    6.0 and 5.9, while 192 CTAs (14 px, batch 4) still won, 4.8 against 5.6 us."""
    best = None
    for tile in tiles(p, t):
        if tile.warps != 8:
            continue
        g = _geometry(p, tile)
        ctas = p.N * g.tiles_per_image * g.channel_blocks
        key = (ctas <= t.num_sms, ctas if ctas <= t.num_sms else -ctas)
        if best is None or key > best[0]:
            best = (key, tile, ctas)
    if best is None or best[2] > SMALL_GRID_CTAS * t.num_sms:
        return None
    return best[1]


def plan_depthwise_mma(p: ConvProblem, t: Target, tile: MmaTile | None = None) -> Schedule:
    why = supports(p, t)
    if why:
        raise PlanError(why)
    if tile is None:
        options = tiles(p, t)
        if not options:
            raise PlanError("no tile fits shared memory and the accumulator budget")
        tile = options[0]
    try:
        g = _geometry(p, tile)
    except DepthwiseMmaUnsupported as e:
        raise PlanError(str(e)) from None
    if not _fits(g, t):
        raise PlanError(f"tile {tile} needs {g.smem_bytes} B of shared memory, {g.accumulators} accumulators")
    ctas = max(1, min(SM_SMEM // (g.smem_bytes + CTA_SMEM_RESERVE), SM_THREADS // g.threads, MAX_CTAS,
                      SM_REGISTERS // (g.threads * registers(g))))
    gy = max(1, min(p.N * g.tiles_per_image, cdiv(ctas * t.num_sms, g.channel_blocks)))
    if g.channel_blocks > 2**31 - 1 or gy > 65535:
        raise PlanError("too many workgroups")
    return Schedule(kernel=Kernel.DEPTHWISE_MMA, target=t.arch, block_m=g.rows * g.cols, block_n=g.channels,
                    block_k=16, threads=g.threads, stages=1, grid=(g.channel_blocks, gy, 1),
                    smem_bytes=g.smem_bytes, config=DepthwiseMmaConfig(g.channels, g.rows, g.cols, ctas),
                    scratch_bytes=g.channel_blocks * gy * depthwise_mma.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES,
                    reason=(f"depthwise on tensor cores (banded filter rows on mma.sync m16n8k16, f32 "
                            f"accumulation): {g.describe()}, {ctas} CTAs per SM, each on one channel block"))


def mma_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """Tuning candidates: the two cheapest tiles (the cost model's column counts) of every
    channel block x rows x warps combination, cheapest first."""
    if supports(p, t):
        return []
    picked, seen = [], {}
    small = small_grid_tile(p, t)
    for tile in ([small] if small else []) + tiles(p, t):
        key = (tile.channels, tile.rows, tile.warps)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= 2:
            picked.append(tile)
    return accepted(plan_depthwise_mma, p, t, picked)


DEPTHWISE_MMA = register(KernelFamily("depthwise_mma", DepthwiseMmaConfig, supports, plan_depthwise_mma,
                                      emit_depthwise_mma, mma_candidates))
