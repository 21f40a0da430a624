"""Grouped and depthwise convs: the direct kernel (lower/common/direct_grouped.py)."""

from __future__ import annotations

from ..problem import ConvProblem
from ..kernel_configs import DirectGroupedConfig
from ..schedule import Kernel, Schedule
from ..target import Target
from .common import PlanError, cdiv, largest_vector
from .registry import KernelFamily, register

# outputs along W per thread (register blocking of input columns and, grouped, filter vectors):
# depthwise convs without multiplier, and grouped ones with a window and >= 8 channels per group
# (bench/NOTES.md)
ROW_PIXELS = 4
# output channels per thread of a grouped conv (its P x V scalar accumulators)
GROUPED_CHANNELS = 4


def supports(p: ConvProblem, t: Target) -> str | None:
    return None if p.grouped else "not a grouped or depthwise conv"


def plan_grouped(p: ConvProblem, t: Target) -> Schedule:
    """Grouped and depthwise convs: the direct kernel (few channels per output; memory-bound).
    An item is V output channels (16 bytes of channels where they divide the output channels
    of a group, at most GROUPED_CHANNELS for grouped convs) of `pixels` pixels along W (one
    pixel for a depthwise conv with a channel multiplier)."""
    why = supports(p, t)
    if why:
        raise PlanError(why)
    fg = p.F // p.groups
    v = largest_vector(p.F if p.depthwise else fg, p.dtype)
    hwcf = p.filter_layout == "hwcf"
    vc = 1 if p.depthwise or hwcf else largest_vector(p.C // p.groups, p.dtype)
    rows = p.F == p.C if p.depthwise else (hwcf or (p.R * p.S > 1 and p.C // p.groups >= 8))
    if rows and not (p.depthwise or hwcf):      # outer products: P x V accumulators
        v = min(v, GROUPED_CHANNELS)
    threads, per_thread = (1, 64) if t.backend == "cpu" else (256, 1)
    pw = min(ROW_PIXELS, p.Wo) if rows else 1
    block = threads * per_thread
    grid = (cdiv(p.N * p.Ho * cdiv(p.Wo, pw) * (p.F // v), block), 1, 1)
    if grid[0] >= 2**31:
        raise PlanError("too many workgroups")
    kind = ("depthwise" + (f" (multiplier {p.F // p.C})" if p.F != p.C else "") if p.depthwise
            else f"{p.groups} groups of {p.C // p.groups} channels")
    what = f"{pw} pixels x {v} channels" if pw > 1 else f"{v} output channels"
    return Schedule(kernel=Kernel.DIRECT_GROUPED, target=t.arch, block_m=block, block_n=v, block_k=vc,
                    threads=threads, config=DirectGroupedConfig(pixels=pw), stages=1, grid=grid, smem_bytes=0,
                    reason=f"direct grouped conv: {kind}, {what} per thread, f32 accumulation"
                           + (", batch read at run time" if p.dynamic_batch else ""))


DIRECT_GROUPED = register(KernelFamily("direct_grouped", (Kernel.DIRECT_GROUPED,), supports, plan_grouped))
