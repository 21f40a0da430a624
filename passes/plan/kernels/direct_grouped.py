"""Grouped and depthwise convs: the direct kernel (lower/common/direct_grouped.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...kernel_configs import DirectGroupedConfig
from ...problem import DTYPE_BYTES, ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import PlanError, cdiv, largest_vector
from ...lower.common.direct_grouped import emit_direct_grouped, direct_grouped_batch_grid
from ...kernel_families import KernelFamily, register

# outputs along W per thread (register blocking of input columns and, grouped, filter vectors):
# depthwise convs without multiplier, and grouped ones with a window and >= 8 channels per group
# (bench/NOTES.md)
ROW_PIXELS = 4
# output channels per thread of a grouped conv (its P x V scalar accumulators)
GROUPED_CHANNELS = 4


def supports(p: ConvProblem, t: Target) -> str | None:
    if p.pool and p.C < 2:
        return "a pooling window over one channel"
    return None if p.grouped else "not a grouped or depthwise conv"


def input_columns(p: ConvProblem, pixels: int) -> int:
    """Input columns the taps of `pixels` neighbouring outputs along W touch."""
    return len({i * p.stride[1] + sx * p.dilation[1] for i in range(pixels) for sx in range(p.S)})


def _staging(p: ConvProblem, t: Target, pixels: int, threads: int, v: int, rows: int) -> tuple[int, int]:
    """(stages, workgroup bytes) of the staged depthwise path: `rows` filter rows in flight
    through async copies of 16-byte vectors into a ring of rows + 1 per thread; (1, 0) where the
    conv or target has none (multiplier, narrow vectors, no async copies, over the budget)."""
    rows = min(rows, p.R)
    if rows < 2 or not (p.depthwise and p.F == p.C) or t.backend != "nvidia" \
            or v * DTYPE_BYTES[p.dtype] != 16:
        return 1, 0
    smem = (rows + 1) * input_columns(p, pixels) * threads * 16
    return (rows, smem) if smem <= t.smem_bytes else (1, 0)


@dataclass(frozen=True)
class ItemShape:
    """How the direct kernel walks a depthwise conv: output pixels along W per thread, threads
    per workgroup, filter rows in flight (async-copy staging; 1: plain loads), accumulation
    ("f32" or "f16_rows"), the co-resident workgroups ptxas must allow (a register cap),
    whether the filter rows are unrolled (plain loads only) and, unrolled, the output rows per
    item and how rows in the padding are handled ("branch" or "select", DirectGroupedConfig); the
    bytes of an item's channel vector (16; 8 doubles the items, halving each one's registers);
    the threads an item's filter rows are split over (row_groups: threads / row_groups items per
    workgroup, each on min(row_groups, R) threads)."""
    pixels: int = ROW_PIXELS
    threads: int = 256
    rows_in_flight: int = 1
    accumulate: str = "f32"
    min_ctas: int = 0
    unrolled: bool = False
    out_rows: int = 1
    padding: str = "branch"
    vector_bytes: int = 16
    row_groups: int = 1


# workgroups per SM above which an 8-pixel item's grid counts as large (ample parallelism, so
# the column reuse of 8 pixels wins; below it smaller items fill the machine better)
LARGE_GRID_CTAS = 8
# workgroups per SM of 4-pixel x 2-row items from which 4 pixels beat 2 (a narrower window's
# grid below it is small: 2-pixel items spread it over more SMs)
MEDIUM_GRID_CTAS = 2
# f16 windows of 7+ columns: workgroups per SM of 4-pixel items of 8-byte vectors (wide_items_grid)
# from which the 8-pixel loop of 16-byte vectors wins (ConvNeXt 56 px at batch 32, 36 per SM on an
# H200); below it the 4-pixel 8-byte items, and on small grids (split_rows_grid) the same items
# with their filter rows split over threads
WIDE_LARGE_GRID_CTAS = 25
# windows of 7+ columns: outputs per SM (N*Ho*Wo*F / SMs) below which an item's filter rows are
# split over threads: under 2 workgroups per SM of the 4-pixel 8-byte f16 items (ConvNeXt-T shapes
# at batch 1-8, f16 on an H200, bf16 and f32 on an H100, bench/NOTES.md)
SPLIT_OUTPUTS_PER_SM = 2 * 128 * 4 * 4       # outputs of 2 workgroups of 4-pixel x 4-channel items
# the most threads an item's rows are split over (groups of rows g, g + 8, ... beyond)
MAX_ROW_GROUPS = 8
STATIC_SMEM = 48 * 1024      # workgroup memory a kernel may allocate statically


def item_grid(p: ConvProblem, pixels: int, threads: int = 128, v: int = 0, rows: int = 1) -> int:
    """Workgroups of the direct kernel at `pixels` x `rows` outputs of v channels per item
    (v 0: the depthwise kernel's 16-byte channel vectors), `threads` items per workgroup."""
    v = v or largest_vector(p.F, p.dtype)
    return cdiv(p.N * cdiv(p.Ho, rows) * cdiv(p.Wo, pixels) * (p.F // v), threads)


def wide_items_grid(p: ConvProblem) -> int:
    """Workgroups of the direct kernel's item for 7+ column f16 windows on small and medium
    grids: 4 output pixels of 8-byte channel vectors."""
    return item_grid(p, 4, v=largest_vector(p.F, p.dtype, 8))


def default_accumulation(p: ConvProblem) -> str:
    """Packed-f16 filter-row sums (f32 across rows) for f16 inputs, else f32: the depthwise
    kernels' default (rel. L2 4-5e-4 for f16, bench/NOTES.md)."""
    return "f16_rows" if p.dtype == "f16" else "f32"


def split_rows_grid(p: ConvProblem, t: Target) -> bool:
    """Whether a depthwise conv (multiplier 1, 7+ columns, batch fixed at compile time) has a
    grid small enough that splitting its items' filter rows over threads wins on NVIDIA."""
    return (t.backend == "nvidia" and p.depthwise and p.F == p.C and p.S >= 7 and not p.runtime_sizes
            and p.N * p.Ho * p.Wo * p.F < SPLIT_OUTPUTS_PER_SM * t.num_sms)


def depthwise_shape(p: ConvProblem, t: Target) -> ItemShape:
    """The rule table for depthwise convs with multiplier 1 on NVIDIA (tuning on an H200,
    bench/NOTES.md): 128-thread workgroups, f16 filter rows summed in packed f16, and
    - 7+ column windows: padding rows skipped by a branch (loading them all would spill); on
      small grids (split_rows_grid) each item's filter rows split over up to MAX_ROW_GROUPS
      threads, 32 items of 4 pixels of 8-byte vectors per workgroup (f32, or Wo < 8: 16 items
      of 8 or all Wo pixels; ConvNeXt-T at batch 1: 16-50% faster than the items below and the
      tile kernels); f16 ones on grids under WIDE_LARGE_GRID_CTAS workgroups per SM 4 pixels of
      8-byte vectors
      (4 channels: twice the items, half the registers each), rows unrolled, a bound of 2
      workgroups (ConvNeXt-T shapes at batch 1-32: 5-39% faster, 14 px at batch 32 6% slower);
      else 8 pixels per item, rows as a loop, or 4 pixels unrolled where the output is narrower
      than 8 pixels (7 px: an item of 4 + 3 beats one of 7);
    - narrower windows: rows unrolled, 2 output rows per item, padding rows loaded as zeros
      (no branch, so all rows' loads go out together), and a 1-2 workgroup co-residency bound
      that leaves ptxas the registers to issue them (small and medium grids are latency-bound):
      strided or 5+ columns 2 pixels; 3 columns 4 pixels on a large grid (8-pixel items
      filling LARGE_GRID_CTAS workgroups per SM: no bound) or a medium one (4-pixel items
      filling 2 workgroups per SM: bound 2), else 2 pixels.
    A batch (or image size) read at run time takes the small grids' shape: its grid is unknown, and 4-pixel
    items cost 2x at batch 1 (MobileNetV2 14 px) where 2-pixel ones lose ~7% on large grids;
    7-column windows plan it as large (16-byte vectors)."""
    if not (p.depthwise and p.F == p.C) or t.backend != "nvidia":
        return ItemShape()
    acc = default_accumulation(p)
    if p.S >= 7:
        if split_rows_grid(p, t):
            if p.Wo < 8 or p.dtype == "f32":   # 16 items of 8 (or all Wo) pixels per workgroup
                return ItemShape(8, 16 * MAX_ROW_GROUPS, 1, acc, 0, False, 1, "branch", 8, MAX_ROW_GROUPS)
            return ItemShape(4, 32 * MAX_ROW_GROUPS, 1, acc, 0, False, 1, "branch", 8, MAX_ROW_GROUPS)
        if acc == "f16_rows" and not p.runtime_sizes and wide_items_grid(p) < WIDE_LARGE_GRID_CTAS * t.num_sms:
            return ItemShape(4, 128, 1, acc, 2, True, 1, "branch", 8)
        return ItemShape(8, 128, 1, acc) if p.Wo >= 8 else ItemShape(4, 128, 1, acc, 0, True)
    small = ItemShape(2, 128, 1, acc, 1, True, 2, "select")
    if p.stride[1] > 1 or p.S > 3 or p.runtime_sizes:
        return small
    if item_grid(p, 8) >= LARGE_GRID_CTAS * t.num_sms:
        return ItemShape(4, 128, 1, acc, 0, True, 2, "select")
    if item_grid(p, 4, rows=2) >= MEDIUM_GRID_CTAS * t.num_sms:
        return ItemShape(4, 128, 1, acc, 2, True, 2, "select")
    return small


def plan_grouped(p: ConvProblem, t: Target, shape: ItemShape | None = None) -> Schedule:
    """Grouped and depthwise convs: the direct kernel (few channels per output; memory-bound).
    An item is V output channels (16 bytes of channels where they divide the output channels
    of a group, at most GROUPED_CHANNELS for grouped convs) of `shape.pixels` pixels along W
    (one pixel for a depthwise conv with a channel multiplier); `shape` defaults to the rule
    table's (depthwise_shape)."""
    why = supports(p, t)
    if why:
        raise PlanError(why)
    fg = p.F // p.groups
    shape = shape or depthwise_shape(p, t)
    v = largest_vector(p.F if p.depthwise else fg, p.dtype, shape.vector_bytes)
    hwcf = p.filter_layout == "hwcf"
    vc = 1 if p.depthwise or hwcf else largest_vector(p.C // p.groups, p.dtype)
    rows = p.F == p.C if p.depthwise else (hwcf or (p.R * p.S > 1 and p.C // p.groups >= 8))
    if rows and not (p.depthwise or hwcf):      # outer products: P x V accumulators
        v = min(v, GROUPED_CHANNELS)
    threads, per_thread = (1, 64) if t.backend == "cpu" else (shape.threads, 1)
    pw = min(shape.pixels, p.Wo) if rows else 1
    # filter rows split over threads: depthwise (multiplier 1) rows as a loop, at most R groups
    groups = min(shape.row_groups, p.R) if p.depthwise and p.F == p.C and not shape.unrolled else 1
    stages, smem = _staging(p, t, pw, threads, v, shape.rows_in_flight if groups == 1 else 1)
    accumulate = shape.accumulate if p.depthwise and p.F == p.C and p.dtype == "f16" else "f32"
    unrolled = shape.unrolled and stages == 1 and p.depthwise and p.F == p.C
    out_rows = min(shape.out_rows, p.Ho) if unrolled else 1
    padding = shape.padding if unrolled else "branch"
    block = threads * per_thread
    if groups > 1:
        if t.backend != "cpu":
            if threads % shape.row_groups:
                raise PlanError(f"{threads} threads do not split into {shape.row_groups} row groups")
            block = threads // shape.row_groups         # items; R < row_groups: fewer threads
            threads = block * groups
        smem = groups * block * pw * v * 4          # the f32 partial sums, a static allocation
        if smem > min(t.smem_bytes, STATIC_SMEM):
            raise PlanError(f"{smem} B of partial sums exceed static workgroup memory")
    grid = (item_grid(p, pw, block, v, out_rows), 1, 1)
    if grid[0] >= 2**31:
        raise PlanError("too many workgroups")
    kind = ("depthwise" + (f" (multiplier {p.F // p.C})" if p.F != p.C else "") if p.depthwise
            else f"{p.groups} groups of {p.C // p.groups} channels")
    if p.pool:
        kind = f"{p.pool}-pool"
    what = f"{pw} pixels x {v} channels" if pw > 1 else f"{v} output channels"
    what = f"{out_rows} rows x {what}" if out_rows > 1 else what
    head = ("elementwise map on the direct kernel (a 1x1 sum window: its epilogue is the map)" if p.is_map
            else "pooling window on the direct kernel" if p.pool else "direct grouped conv")
    return Schedule(kernel=Kernel.DIRECT_GROUPED, target=t.arch, block_m=block, block_n=v, block_k=vc,
                    threads=threads, stages=stages, grid=grid, smem_bytes=smem,
                    config=DirectGroupedConfig(pixels=pw, accumulate=accumulate,
                                               ctas_per_sm=shape.min_ctas if t.backend == "nvidia" else 0,
                                               unrolled=unrolled, rows=out_rows, padding=padding,
                                               row_groups=groups),
                    reason=f"{head}: {what} per thread" + (", batch read at run time" if p.dynamic_batch else "")
                    if p.is_map else
                    f"{head}: {kind}, {what} per thread, "
                           + ("filter rows summed in packed f16, f32 across rows" if accumulate == "f16_rows"
                              else f"max in {p.dtype if t.backend != 'cpu' else 'f32'}" if p.pool == "max"
                              else "f32 accumulation")
                           + (f", {stages} filter rows in flight" if stages > 1 else "")
                           + ((", window rows unrolled" if p.pool else ", filter rows unrolled") if unrolled else "")
                           + ((f", padding taps loaded as {'-inf' if p.pool == 'max' else 'zero'}" if p.pool
                               else ", padding rows loaded and zero-selected") if padding == "select" else "")
                           + (f", filter rows split over {groups} threads per item (partial sums in workgroup "
                              "memory)" if groups > 1 else "")
                           + (", batch read at run time" if p.dynamic_batch else ""))


# (pixels, co-resident workgroups, output rows) of the candidates with padding rows loaded
# (a 7-column window's rows would spill)
SELECT_SHAPES = ((2, 0, 1), (4, 0, 1), (2, 1, 1), (4, 1, 1), (2, 0, 2), (4, 0, 2), (2, 1, 2), (4, 1, 2), (4, 2, 2))
# (pixels, co-resident workgroups, output rows, padding rows) of items with 8-byte channel vectors:
# 2-row select items 3-5% faster than 16 bytes on MobileNetV2 112/56/28 px and EfficientNet 5x5 s2,
# slower on others; 7+ column windows: 4 unrolled pixels under a bound of 1-2 beat the 8-pixel loop
# by 13-26% on ConvNeXt shapes at batch 8 and the tensor-core kernel at batch 1 (bench/NOTES.md)
HALF_VECTOR_SHAPES = ((4, 0, 2, "select"), (4, 2, 2, "select"), (2, 1, 2, "select"))
WIDE_HALF_VECTOR_SHAPES = ((4, 1, 1, "branch"), (4, 2, 1, "branch"), (4, 1, 1, "select"), (2, 1, 2, "branch"))
# (pixels, channel vector bytes, items per workgroup, row groups: 0 up to MAX_ROW_GROUPS, else that many)
# of items whose filter rows are split over threads (small grids: shorter chains per thread)
SPLIT_SHAPES = ((4, 8, 32, 0), (4, 8, 16, 0), (8, 8, 16, 0), (4, 16, 16, 0), (4, 8, 32, 4), (2, 16, 32, 4))


def direct_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """Depthwise (multiplier 1) tuning grid: pixels per item x filter rows in flight x
    accumulation at 128 threads, register caps, unrolled rows (also in 64-thread workgroups and
    with 2 or 4 output rows per item; below 7 columns also with padding rows loaded, under
    co-residency bounds of 1-2 workgroups; 8-byte channel vectors), 256-thread workgroups, and
    items whose filter rows are split over 4 or up to MAX_ROW_GROUPS threads (SPLIT_SHAPES)."""
    if not (p.depthwise and p.F == p.C) or t.backend != "nvidia":
        return []
    out = [plan_grouped(p, t, ItemShape(pw, 256)) for pw in (2, 4, 8)]
    for acc in ("f32", "f16_rows") if p.dtype == "f16" else ("f32",):
        for pw in (2, 4, 8):
            for u in sorted({1, 2, 3} & set(range(1, p.R + 1))):
                out.append(plan_grouped(p, t, ItemShape(pw, 128, u, acc)))
        for pw, ctas in ((4, 6), (4, 8), (2, 8), (2, 12)):  # register caps: 85, 64 and 42 per thread
            out.append(plan_grouped(p, t, ItemShape(pw, 128, 1, acc, ctas)))
        for pw, ctas in ((2, 0), (4, 0), (8, 0), (4, 6), (2, 8)):      # the rows unrolled
            out.append(plan_grouped(p, t, ItemShape(pw, 128, 1, acc, ctas, True)))
        for pw in (2, 4):                                               # small grids: more workgroups
            out.append(plan_grouped(p, t, ItemShape(pw, 64, 1, acc, 0, True)))
        for pw, rows in ((2, 2), (4, 2), (2, 4)):                       # several output rows per item
            out.append(plan_grouped(p, t, ItemShape(pw, 128, 1, acc, 0, True, rows)))
        for pw, ctas, rows in SELECT_SHAPES if p.S < 7 else ():        # padding rows loaded (no branch)
            out.append(plan_grouped(p, t, ItemShape(pw, 128, 1, acc, ctas, True, rows, "select")))
        for pw, ctas, rows, padding in HALF_VECTOR_SHAPES if p.S < 7 else WIDE_HALF_VECTOR_SHAPES:  # 8-byte vectors
            out.append(plan_grouped(p, t, ItemShape(pw, 128, 1, acc, ctas, True, rows, padding, 8)))
    acc = default_accumulation(p)
    for pw, vb, items, groups in SPLIT_SHAPES if p.R > 1 else ():       # filter rows split over threads
        g = min(groups or MAX_ROW_GROUPS, p.R)
        out.append(plan_grouped(p, t, ItemShape(pw, items * g, 1, acc, 0, False, 1, "branch", vb, g)))
    return list(dict.fromkeys(out))


def plan_pool(p: ConvProblem, t: Target) -> Schedule:
    """Pooling windows (max or sum): the depthwise item of the rule table (depthwise_shape: a
    pool moves the bytes of a depthwise conv of its window, without the filter's), with the
    window's rows always unrolled (the pool emitter's one form) and its padding taps selecting
    the combine's identity."""
    shape = dataclasses.replace(depthwise_shape(p, t), rows_in_flight=1, row_groups=1, unrolled=True,
                                accumulate="f32")
    if t.backend != "nvidia":
        shape = dataclasses.replace(shape, padding="select")
    return plan_grouped(p, t, shape)


DIRECT_GROUPED = register(KernelFamily("direct_grouped", DirectGroupedConfig, supports, plan_grouped,
                                       emit_direct_grouped, direct_candidates, batch_grid=direct_grouped_batch_grid))
