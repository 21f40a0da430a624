"""The sm_90a tuning candidates: the schedules convc-tune times for a 16-bit conv.

The default (kernels/sm90.py) first, then a declared grid of kernel family configurations,
each kept where its family plans it; tuning caches name a candidate by its knobs
(tuning.knobs_of), so only the knobs, not the order, must stay stable.
"""

from __future__ import annotations

import dataclasses

from ...lower.nvidia import sm90_ws
from ...lower.nvidia.grouped_mma_geometry import narrow_input
from ...problem import ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from ..tuning import unique_by_knobs
from .common import tiles
from .grouped_mma import GROUPED_MMA, NARROW_DENSE_F, grouped_mma_candidates, narrow_stem
from ...kernel_families import KernelFamily
from .sm90 import COOPERATIVE, PINGPONG, STREAMK, fewer_columns_at_160, plan_sm90, transcendental_epilogue
from .sm90_gather import SM90_GATHER
from .sm90_rows import SM90_ROWS
from .sm90_tma import SM90_TMA
from .sm90_ws import SM90_WS, WsTile, swap_block_ms, with_direct_loads


def _ws(*args, **kw) -> tuple[KernelFamily, dict]:
    return SM90_WS, {"tile": WsTile(*args, **kw)}


def candidate_grid(p: ConvProblem, t: Target) -> list[tuple[KernelFamily, dict]]:
    """(family, configuration) pairs the tuner tries after the default, in order."""
    bns = [bn for bn in (64, 128, 256) if bn == 64 or p.F > bn // 2]
    bn0 = 128 if p.F > 64 else 64
    grid = [_ws(COOPERATIVE, 128, bn) for bn in bns]
    grid += [_ws(COOPERATIVE, 128, bn0, raster=r) for r in (4, 16)]
    grid += [_ws(PINGPONG, bm, bn) for bm in (64, 128) for bn in bns if bm * bn <= 128 * 128]
    grid += [_ws(COOPERATIVE, 128, bn, cluster_m=2) for bn in bns if bn >= 128]
    grid += [_ws(PINGPONG, 64, bn, cluster_m=2) for bn in bns if bn >= 128]
    grid += [(SM90_TMA, {})]
    if p.F > 64:               # 128 rows per consumer warpgroup: the filter tile serves 256 rows
        grid += [_ws(COOPERATIVE, 256, 128)]
    if tiles(p, 64, 128) < 2 * t.num_sms:
        # stream-K: tiles that cannot fill the SMs evenly share them by K
        grid += [_ws(STREAMK, 64, bn) for bn in bns if bn >= 128] + [_ws(STREAMK, 128, bn0)]
    if tiles(p, 128, 128) > t.num_sms:
        # several tiles per CTA: two staging slots per warpgroup let a tile's residual land
        # (and the previous store drain) during the previous tile's epilogue, at the cost
        # of ring stages
        grid += [_ws(COOPERATIVE, 128, bn, slots=2) for bn in bns if bn >= 128]
        grid += [_ws(PINGPONG, bm, bn, slots=2) for bm in (64, 128) for bn in bns if bm * bn <= 128 * 256]
    # epilogue staged in ring stages (no staging slots): a deeper ring for cooperative tiles
    # whose staging slots cost a stage (128x256: 4 stages instead of 3)
    grid += [_ws(COOPERATIVE, 128, bn, slots=0) for bn in bns if bn >= 128] + [_ws(COOPERATIVE, 256, 128, slots=0)]
    grid += [_ws(COOPERATIVE, bm, 128, slots=0, swap=True)
             for bm in swap_block_ms(p, t, 128, sm90_ws.swap_max_pixels(COOPERATIVE, 128))]
    # swapped tiles: pixel counts per tile that spread the work evenly over the SMs
    for kernel, bn in ((COOPERATIVE, 128), (COOPERATIVE, 256), (PINGPONG, 64), (PINGPONG, 128)):
        for bm in swap_block_ms(p, t, bn, sm90_ws.swap_max_pixels(kernel, bn)):
            slots = (1, 2) if p.reads_residual and tiles(p, bm, bn) > t.num_sms else (1,)
            grid += [_ws(kernel, bm, bn, slots=n, swap=True) for n in slots]
    if p.F <= NARROW_DENSE_F and not p.grouped:
        # a narrow output: the dense conv as one group on the grouped tensor-core kernel
        grid += [(GROUPED_MMA, {})]
    if transcendental_epilogue(p):
        # an epilogue as long as the main loop or longer (GELU, SiLU): three ping-pong consumer
        # warpgroups, so two can be in their epilogues while one runs its main loop (ConvNeXt-T's
        # GELU GEMMs, H200: within 4% of the two-warpgroup tiles, faster on none by more)
        grid += [_ws(PINGPONG, bm, bn, consumers=3) for bm, bn in ((64, 64), (64, 128), (128, 64))
                 if bn <= max(64, p.F)]
    if fewer_columns_at_160(p):
        # 160-channel tiles (64 B epilogue panels) waste fewer columns, e.g. F = 320
        grid += [_ws(k, bm, 160) for k, bm in ((COOPERATIVE, 256), (COOPERATIVE, 128), (PINGPONG, 128), (PINGPONG, 64))]
    return grid


def sm90_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """Schedules the tuner times for p on sm_90a: the heuristic's choice first, then the
    persistent kernel's cooperative and ping-pong tilings, rasterizations, and the
    non-persistent kernel (split-K / 64-row tiles when the grid is small); convs the im2col
    TMA cannot read: the row-slab kernel's default and the thread-gathered kernel."""
    default = plan_sm90(p, t)
    if default.kernel == Kernel.SM90_ROWS_WGMMA:
        grid = [(SM90_GATHER, {"why_not_tma": "tuning candidate"})]
        if narrow_stem(p, t) is not None:
            grid.append((GROUPED_MMA, {}))           # an RGB stem's other kernel
    elif default.kernel == Kernel.GROUPED_MMA and narrow_input(p):
        # an RGB stem staged element by element: the row-slab kernel (32- or 64-channel tiles)
        # and the thread-gathered im2col kernel it replaced
        grid = [(SM90_ROWS, {"why_not_tma": "tuning candidate"}), (SM90_GATHER, {"why_not_tma": "tuning candidate"})]
    elif default.kernel in (Kernel.SM90_GATHER_WGMMA, Kernel.PORTABLE_IGEMM):
        grid = [(GROUPED_MMA, {})] if p.F <= NARROW_DENSE_F and not p.grouped else []
    else:
        grid = candidate_grid(p, t)
    planned = [family.attempt(p, t, **config) for family, config in grid]
    out = [default] + [s for s in planned if isinstance(s, Schedule)]
    if default.kernel == Kernel.GROUPED_MMA and not p.grouped:
        out += grouped_mma_candidates(p, t)          # its other tiles: narrower, two buffers or CTAs
    if default.kernel.role and default.config.direct_stages:
        # the default without the consumers' direct loads: its first k-tiles by TMA
        out.append(dataclasses.replace(default.with_config(direct_stages=0), reason=default.reason + ", first k-tiles by TMA"))
    elif default.kernel in (COOPERATIVE, PINGPONG):
        # ... or with them, where its CTAs have several tiles of a multi-tap filter
        d = with_direct_loads(p, default)
        if d.config.direct_stages:
            out.append(dataclasses.replace(d, reason=default.reason + ", first k-tiles loaded directly"))
    return unique_by_knobs(out)

