"""Grouped convs on tensor cores: the grouped_mma family (passes/lower/nvidia/grouped_mma.py).

Grouped (not depthwise) f16/bf16 convs on NVIDIA targets with mma.sync (sm_90a, sm_100a) whose
groups have at least MIN_GROUP_CHANNELS input channels and whose blocks of whole groups have
16-byte channel vectors (grouped_mma_geometry.group_block). Near-depthwise groups and f32 stay
on the direct kernel, which remains a tuning candidate everywhere. Dense convs with at most
NARROW_DENSE_F output channels are one group of all C (C <= 128): the sm_90a planner's
default for F <= NARROW_MMA_F (static and dynamic batches), for 1x1 convs with F <=
sm90.NARROW_1X1_F that fill the SMs and for RGB stems (narrow_stem), a tuning candidate up to
NARROW_DENSE_F.
"""

from __future__ import annotations

import dataclasses

from ...lower.nvidia.grouped_mma_geometry import (MIN_GROUP_CHANNELS, THREADS, GroupedMmaUnsupported,
                                                 TileOption, narrow_input, sliced_options, sm_cost, tile_options)
from ...problem import ConvProblem
from ...kernel_configs import GroupedMmaConfig
from ...schedule import Kernel, Schedule
from ...target import Target
from ..tuning import unique_by_knobs
from .common import SM_SMEM, PlanError, cdiv, tile_planning_problem
from .depthwise_mma import DEPTHWISE_MMA, SMALL_GRID_CTAS, mma_candidates, small_grid_tile
from .depthwise_strips import DEPTHWISE_STRIPS, prefers_strips, strips_candidates
from .depthwise_tma import DEPTHWISE_TMA, prefers_tiles, tma_candidates
from .direct_grouped import direct_candidates, plan_grouped
from ...lower.nvidia.grouped_mma import emit_grouped_mma
from ...kernel_families import Declined, KernelFamily, register

TUNING_TILES = 3                # tile options offered to the tuner
NARROW_DENSE_F = 32             # dense convs this narrow may run as one group of all C (tuning)
# Dense convs with at most this many output channels (an RGB or mask output padded to 8 by
# convc-pad-channels) run on the grouped tensor-core kernel as one group: it stages each
# tile's input patch once and reads every tap from it, where the im2col kernels move R*S
# copies of the input through L2 for 8 useful columns (H200, narrow_f suite: SD VAE's output
# conv 131 -> 72 us, 5x5 and 7x7 windows 1.4-1.8x faster; at F = 12-16 mixed, so not there).
NARROW_MMA_F = 8
# RGB stems (a dense conv with C < 8, windows up to 3x3) this narrow in F run on it too, on
# sm_90a and sm_100a: TMA cannot read their 6-byte pixels, and the gathered im2col kernel
# measured 1.4-2.7x slower at batch 32 (H200, tools/data/rgb_stems.json; a 7x7 stem 6% faster
# gathered, so not those)
NARROW_STEM_F = 32


def supports(p: ConvProblem, t: Target) -> str | None:
    if t.backend != "nvidia":
        return f"{t.arch} has no mma.sync"
    if not p.grouped and p.F > NARROW_DENSE_F:
        return f"a dense conv with F={p.F} > {NARROW_DENSE_F}"
    if p.depthwise:
        return "depthwise conv (one input channel per group)"
    if p.dtype not in ("f16", "bf16"):
        return f"{p.dtype} inputs (mma.sync m16n8k16 takes f16/bf16)"
    if p.dynamic_batch and p.gemm_form:
        return "a dynamic batch of GEMM-form rows (one pixel per batch unit)"
    if p.channel_windows:
        return "a channel window of its input"
    if p.grouped and p.C // p.groups < MIN_GROUP_CHANNELS:
        return f"C/G={p.C // p.groups} < {MIN_GROUP_CHANNELS} channels per group"
    return None


def _options(p: ConvProblem, t: Target, narrow: bool = False) -> list[TileOption]:
    why = supports(p, t)
    if why:
        raise GroupedMmaUnsupported(why)
    return tile_options(tile_planning_problem(p), t.smem_bytes, SM_SMEM, t.num_sms, narrow)


def _schedule(p: ConvProblem, t: Target, o: TileOption) -> Schedule:
    g = o.geometry
    total = p.N * g.tiles_per_image
    slots = cdiv(o.ctas_per_sm * t.num_sms, g.channel_blocks)
    # a runtime batch or image may exceed the planned one: fill the SMs whatever the planned size
    gx = max(1, slots if p.runtime_sizes else min(total, slots))
    # one tile per CTA: one buffer (slices keep theirs: the next slice's copies overlap this one's math)
    stages = o.stages if cdiv(total, gx) > 1 or p.runtime_sizes or g.slices > 1 else 1
    if gx * g.channel_blocks >= 2**31 or g.channel_blocks > 65535:
        raise GroupedMmaUnsupported("too many workgroups")
    return Schedule(kernel=Kernel.GROUPED_MMA, target=t.arch, block_m=g.block_m, block_n=g.bn, block_k=16,
                    threads=THREADS, config=GroupedMmaConfig(rows=g.bh, cols=g.bw, ctas_per_sm=o.ctas_per_sm,
                                                             slices=g.slices),
                    stages=stages, grid=(gx, g.channel_blocks, 1), smem_bytes=g.filter_bytes + stages * g.patch_bytes,
                    reason=(f"grouped implicit GEMM on tensor cores (mma.sync m16n8k16, f32 accumulation): "
                            f"{g.gb} group{'s' if g.gb > 1 else ''} ({g.bn} channels) per CTA, {g.bh}x{g.bw}-pixel tiles, "
                            + (f"{g.slices} channel slices in {stages} slice buffers, " if g.slices > 1 else
                               f"{stages} patch buffer{'s' if stages > 1 else ''}, ") + f"{o.ctas_per_sm} CTA"
                            f"{'s' if o.ctas_per_sm > 1 else ''} per SM, block-diagonal filter staged once"
                            + (", batch read at run time" if p.dynamic_batch and not p.dynamic_spatial else "")))


def narrow_dense(p: ConvProblem, t: Target, max_f: int = NARROW_MMA_F) -> Schedule | None:
    """The grouped kernel's schedule for a dense conv with F <= max_f (NARROW_MMA_F: the sm_90a
    planner's choice for static and dynamic batches; the planner passes more for 1x1 convs
    that fill the SMs), or None where it does not apply."""
    if p.grouped or p.F > max_f:
        return None
    got = GROUPED_MMA.attempt(p, t)
    if isinstance(got, Declined):
        return None
    return dataclasses.replace(got, reason=f"{got.reason} (F={p.F}: a dense conv as one group, input "
                                           f"patch staged once instead of im2col tiles per tap)")


def narrow_stem(p: ConvProblem, t: Target) -> Schedule | None:
    """The grouped kernel's schedule for an RGB stem (NARROW_STEM_F), or None where it is not one
    or the kernel declines it."""
    if not narrow_input(p) or p.R * p.S > 9:
        return None
    return narrow_dense(p, t, NARROW_STEM_F)


def plan_grouped_mma(p: ConvProblem, t: Target) -> Schedule:
    """The tensor-core grouped kernel's schedule; GroupedMmaUnsupported with the reason.
    A dense conv as one group (an RGB or mask output, not a stem) also weighs half-width
    tiles at one CTA per SM: taller tiles of fewer columns stage less halo per output and
    fill the SMs in whole waves (the VAE decoder's 256 -> 8 output conv at 256 px, convc-tune
    on an H200: 2x64 tiles 35.5 us, 4x32 32.5, 8x32 26.8, as their costs rank them; its
    half-width tiles at two CTAs per SM, which the cost favours, 48.5 and 81.2). Its patch
    staged in channel slices (sliced_options: the copies of the next slice overlap the math of
    this one) where that makes the busiest SM's work smaller (sm_cost): that conv 27.0 -> 20.4 us
    on 16x32 tiles in four 64-channel slices, two slice buffers."""
    dense = not p.grouped and not narrow_input(p)
    opts = _options(p, t, narrow=dense)
    full = max(o.geometry.bw for o in opts)
    best = next(o for o in opts if o.geometry.bw == full or o.ctas_per_sm == 1)
    # slices: static sizes (what the GPU checks covered)
    sliced = sliced_options(p, t.smem_bytes, SM_SMEM, t.num_sms) if dense and not p.runtime_sizes else []
    if sliced and sliced[0].cost < sm_cost(best.geometry, best.ctas_per_sm, t.num_sms):
        return _schedule(p, t, sliced[0])
    return _schedule(p, t, best)


def grouped_mma_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """The next-best tile options after the default (tuning candidates); for a dense conv as
    one group, every option with half-width tiles too."""
    try:
        default = plan_grouped_mma(p, t)
        opts = _options(p, t, narrow=not p.grouped)
    except GroupedMmaUnsupported:
        return []
    scheds = [_schedule(p, t, o) for o in opts]
    others = [s for s in scheds if (s.config, s.stages) != (default.config, default.stages)]
    if p.grouped:
        return others[:TUNING_TILES - 1]
    # channel-sliced patches (static sizes): the best tile of each (slices, buffers, CTAs per SM)
    seen, sliced = set(), []
    for o in sliced_options(p, t.smem_bytes, SM_SMEM, t.num_sms) if not p.runtime_sizes else []:
        key = (o.geometry.slices, o.stages, o.ctas_per_sm)
        if key not in seen:
            seen.add(key)
            sliced.append(_schedule(p, t, o))
    return others + sliced


def plan_grouped_choice(p: ConvProblem, t: Target) -> Schedule:
    """Grouped convs: the tensor-core kernel where it applies, else the direct kernel, with the
    tensor-core kernel's reason on NVIDIA targets. Depthwise convs: the direct kernel, or, where
    the rule prefers tiles (prefers_tiles: 7+ column windows on a small grid), the tensor-core
    depthwise kernel with its small-grid tile for f16/bf16 (the direct kernel when that tile
    would take more than SMALL_GRID_CTAS CTAs per SM), else the TMA tile kernel; 7+ column
    windows at a batch of 16 and more (prefers_strips): the strip tensor-core kernel."""
    if p.depthwise:
        s = plan_grouped(p, t)
        if prefers_strips(p, t):
            got = DEPTHWISE_STRIPS.attempt(p, t)
            if not isinstance(got, Declined):
                return got
            s = dataclasses.replace(s, reason=f"{s.reason} (depthwise_strips declined: {got})")
        if not prefers_tiles(p, t):
            return s
        mma_why = DEPTHWISE_MMA.supports(p, t)
        if mma_why is None:             # f16/bf16: the tensor-core kernel, unless its grid is too big
            small = small_grid_tile(p, t)
            if small is None:
                return dataclasses.replace(s, reason=f"{s.reason} (depthwise_mma's small-grid tile would take more "
                                                     f"than {SMALL_GRID_CTAS} CTAs per SM)")
            got = DEPTHWISE_MMA.attempt(p, t, tile=small)
            why = f"depthwise_mma declined: {got}"
        else:                           # f32 and what the tensor-core kernel declines: the TMA tile kernel
            got = DEPTHWISE_TMA.attempt(p, t)
            why = f"depthwise_mma declined: {mma_why}; depthwise_tma declined: {got}"
        if isinstance(got, Declined):
            return dataclasses.replace(s, reason=f"{s.reason} ({why})")
        return dataclasses.replace(got, reason=f"{got.reason} (the direct kernel would run {s.grid[0]} "
                                               f"workgroups on {t.num_sms} SMs)")
    got = GROUPED_MMA.attempt(p, t)
    if not isinstance(got, Declined):
        return got
    s = plan_grouped(p, t)
    if t.backend != "nvidia":
        return s
    return dataclasses.replace(s, reason=f"{s.reason} (tensor-core kernel declined: {got})")


def grouped_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """The default, then the direct kernel and the next tile options when the default is the
    tensor-core kernel."""
    first = plan_grouped_choice(p, t)
    if first.kernel != Kernel.GROUPED_MMA:
        cands = ([first, plan_grouped(p, t)] + strips_candidates(p, t) + mma_candidates(p, t) + tma_candidates(p, t)
                 + direct_candidates(p, t))
        return unique_by_knobs(cands)    # one schedule per knob tuple, the first (the default's reason)
    return [first, plan_grouped(p, t)] + grouped_mma_candidates(p, t)


def _plan(p: ConvProblem, t: Target) -> Schedule:
    """The registry's contract: a decline is a PlanError."""
    try:
        return plan_grouped_mma(p, t)
    except GroupedMmaUnsupported as why:
        raise PlanError(str(why)) from None


GROUPED_MMA = register(KernelFamily("grouped_mma", GroupedMmaConfig, supports, _plan,
                                    emit_grouped_mma, grouped_mma_candidates))
