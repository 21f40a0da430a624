"""Depthwise convs (channel multiplier 1) on TMA targets: the persistent shared-memory tile
kernel (lower/nvidia/depthwise_tma.py, geometry in lower/nvidia/depthwise_tile.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...kernel_configs import DepthwiseTmaConfig
from ...lower.nvidia import depthwise_tile as dt
from ...lower.nvidia import depthwise_tma, tensormap
from ...problem import DTYPE_BYTES, ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import CTA_SMEM_RESERVE, MAX_CTAS, SM_REGISTERS, SM_SMEM, SM_THREADS, PlanError, accepted, cdiv
from .direct_grouped import default_accumulation, item_grid, split_rows_grid
from ...lower.nvidia.depthwise_tma import emit_depthwise_tma
from ...kernel_families import KernelFamily, register



@dataclass(frozen=True)
class TileShape:
    """A point of the tile space: channels per tile, output rows x columns, outputs along W
    per thread, ring slots, thread cap, accumulation, co-resident CTAs (0: as many as shared
    memory, threads and the register estimate allow)."""
    channels: int
    rows: int
    cols: int
    pixels: int
    stages: int = 2
    threads: int = 256
    accumulate: str = "f32"
    ctas: int = 0


def supports(p: ConvProblem, t: Target) -> str | None:
    if not (t.backend == "nvidia" and t.has_tma):
        return f"{t.arch} has no TMA"
    if not (p.depthwise and p.F == p.C):
        return "not a depthwise conv with channel multiplier 1"
    if p.dynamic_batch:
        return "batch read at run time (the persistent tile walk is sized at compile time)"
    try:
        dt.depthwise_tile(p, *_default_tile(p))
    except (dt.DepthwiseTileUnsupported, tensormap.TensorMapError) as why:
        return str(why)
    return None


def _channels(p: ConvProblem, vec: int) -> int:
    """Channels per tile: of 2, 4 and 8 vectors, the one padding C least (then the widest)."""
    return min((vec * k for k in (8, 4, 2)), key=lambda cb: (cdiv(p.C, cb) * cb, -cb))


def _cols(p: ConvProblem, pixels: int) -> int:
    """Output columns per tile: all of Wo (rounded up to `pixels`) where the input box allows,
    else the fewest equal splits that fit the TMA box limit."""
    span = lambda cols: (cols - 1) * p.stride[1] + (p.S - 1) * p.dilation[1] + 1
    for parts in range(1, p.Wo + 1):
        cols = cdiv(cdiv(p.Wo, parts), pixels) * pixels
        if span(cols) <= dt.BOX_DIM:
            return cols
    return pixels


def _default_tile(p: ConvProblem) -> tuple[int, int, int, int]:
    """(channels, rows, cols, pixels) of the rule table (depthwise_shape)."""
    s = depthwise_shape(p)
    return s.channels, s.rows, s.cols, s.pixels


def _vec(p: ConvProblem) -> int:
    return 16 // DTYPE_BYTES[p.dtype]


def tile_shape(p: ConvProblem, channels: int, pixels: int, slot_bytes: int, threads: int,
               stages: int = 2, ctas: int = 0) -> TileShape:
    """Tiles across all of Wo (where the TMA box allows) and as many output rows as fit
    `slot_bytes` of input per slot (at least one)."""
    pixels = min(pixels, p.Wo)
    cols = _cols(p, pixels)
    in_cols = (cols - 1) * p.stride[1] + (p.S - 1) * p.dilation[1] + 1
    rows = 1
    while rows < p.Ho and channels * DTYPE_BYTES[p.dtype] * in_cols \
            * (rows * p.stride[0] + (p.R - 1) * p.dilation[0] + 1) <= slot_bytes:
        rows += 1
    return TileShape(channels, rows, cols, pixels, stages, threads, default_accumulation(p), ctas)


def depthwise_shape(p: ConvProblem) -> TileShape:
    """The tile rule (tuned on an H200, bench/NOTES.md): 4 outputs per thread, channel blocks of
    2, 4 or 8 vectors, whichever pads C least (then the widest); 32 KiB of input per slot, 2
    slots, 128-thread CTAs; f16 filter rows summed in packed f16."""
    return tile_shape(p, _channels(p, _vec(p)), 4, 32 * 1024, 128)


def prefers_tiles(p: ConvProblem, t: Target) -> bool:
    """Whether the planner takes a tile kernel (depthwise_mma for bf16, else this one) over the
    direct one, for windows of 7 or more columns (not for a batch read at run time: the grid is
    then unknown): bf16 and f32 where the direct kernel at 8 pixels per item would have fewer
    workgroups than the target has SMs, except the small grids whose items split their filter
    rows over threads (direct_grouped.split_rows_grid; ConvNeXt-T at batch 1 on an H100: 56, 28,
    14, 7 px bf16 3.7/2.7/2.2/1.6 us against depthwise_mma's 4.5/4.1/3.1/3.1, f32 3.5/2.7/2.2/
    1.7 against this kernel's 6.0/4.1/4.5/3.4; bench/NOTES.md). Never for f16 (there the
    direct kernel's items were as fast or faster in every measured shape above those grids).
    Elsewhere the tile kernels are tuning candidates."""
    if not (t.backend == "nvidia" and p.F == p.C and p.S >= 7 and not p.dynamic_batch):
        return False
    if p.dtype == "f16" or split_rows_grid(p, t):
        return False
    return item_grid(p, 8) < t.num_sms


def _registers(p: ConvProblem, g: dt.DepthwiseTile) -> int:
    """A per-thread register estimate (ptxas on sm_90a: 3x3 at 4 pixels ~90, 7x7 at 8 ~160):
    f32 accumulators, one filter row's input columns and taps (4 words each)."""
    cols = (g.pixels - 1) * p.stride[1] + (p.S - 1) * p.dilation[1] + 1
    return g.pixels * g.vec + 4 * (cols + p.S) + 16


def plan_depthwise_tma(p: ConvProblem, t: Target, shape: TileShape | None = None) -> Schedule:
    why = supports(p, t)
    if why:
        raise PlanError(why)
    shape = shape or depthwise_shape(p)
    try:
        g = dt.depthwise_tile(p, shape.channels, shape.rows, shape.cols, shape.pixels)
    except (dt.DepthwiseTileUnsupported, tensormap.TensorMapError) as e:
        raise PlanError(str(e)) from None
    threads = g.threads(shape.threads)
    smem = depthwise_tma.DepthwiseLayout(g, shape.stages).total
    fit = min(SM_SMEM // (smem + CTA_SMEM_RESERVE), SM_THREADS // threads, MAX_CTAS)
    if fit < 1 or smem > t.smem_bytes:
        raise PlanError(f"{shape.stages} slots of {g.slot_bytes} B exceed shared memory")
    ctas = min(fit, shape.ctas or max(1, SM_REGISTERS // (threads * _registers(p, g))))
    grid = (min(g.tiles, t.num_sms * ctas), 1, 1)
    accumulate = shape.accumulate if p.dtype == "f16" else "f32"
    return Schedule(kernel=Kernel.DEPTHWISE_TMA, target=t.arch, block_m=g.rows * g.cols, block_n=g.channels,
                    block_k=g.vec, threads=threads, stages=shape.stages, grid=grid, smem_bytes=smem,
                    config=DepthwiseTmaConfig(g.channels, g.rows, g.cols, g.pixels, accumulate, ctas),
                    reason=f"depthwise TMA tiles: {g.describe()}, {shape.stages}-slot ring, "
                           f"persistent ({ctas} CTAs per SM), "
                           + ("filter rows summed in packed f16, f32 across rows" if accumulate == "f16_rows"
                              else "f32 accumulation"),
                    scratch_bytes=grid[0] * depthwise_tma.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES)


def tma_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """The tuning grid: channel blocks x outputs per thread x input per slot x threads, each
    with 2 slots (CTAs as registers allow) and with 1 slot (as many CTAs as fit, registers
    capped), and the default with 3 slots."""
    if supports(p, t):
        return []
    vec = _vec(p)
    shapes = [dataclasses.replace(depthwise_shape(p), stages=3)]
    pixels = (4, 8, 7) if p.S >= 5 and p.Wo % 7 == 0 else (4, 8)
    for cb in (vec * k for k in (8, 4, 2)):
        if cdiv(p.C, cb) * cb > 1.5 * p.C:
            continue
        for px in pixels:
            for kib in (16, 32) if p.S <= 3 else (32, 64):
                for threads in (128, 256):
                    shapes.append(tile_shape(p, cb, px, kib * 1024, threads))
                    # one slot per CTA, as many CTAs as fit, registers capped at >= 72 per thread
                    shapes.append(tile_shape(p, cb, px, kib * 1024, threads, 1, SM_REGISTERS // (threads * 72)))
    return accepted(plan_depthwise_tma, p, t, shapes)


DEPTHWISE_TMA = register(KernelFamily("depthwise_tma", DepthwiseTmaConfig, supports, plan_depthwise_tma,
                                      emit_depthwise_tma, tma_candidates))
