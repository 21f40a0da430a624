"""The sm_90a tuning candidates: the schedules convc-tune times for a 16-bit conv."""

from __future__ import annotations

import dataclasses

from ..lower.nvidia import sm90_ws
from ..problem import ConvProblem
from ..schedule import Schedule
from ..target import Target
from ..tuning import knobs_of
from .common import PlanError, tiles
from .sm90 import fewer_columns_at_160, plan_sm90
from .sm90_gather import plan_sm90_gather
from .sm90_tma import plan_sm90_tma
from .sm90_ws import plan_sm90_ws, swap_block_ms, with_direct_loads


def sm90_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """Schedules the tuner times for p on sm_90a: the heuristic's choice first, then the
    persistent kernel's cooperative and ping-pong tilings, rasterizations, and the
    non-persistent kernel (split-K / 64-row tiles when the grid is small)."""
    out = [plan_sm90(p, t)]
    if out[0].kernel == "sm90_rows_wgmma":
        try:
            out.append(plan_sm90_gather(p, t, "tuning candidate"))
        except PlanError:
            pass
    if out[0].kernel in ("sm90_rows_wgmma", "sm90_gather_wgmma", "portable_igemm"):
        return out
    bns = [bn for bn in (64, 128, 256) if bn == 64 or p.F > bn // 2]
    tries = [("sm90_ws_cooperative", 128, bn, 1) for bn in bns]
    tries += [("sm90_ws_cooperative", 128, 128 if p.F > 64 else 64, r) for r in (4, 16)]
    tries += [("sm90_ws_pingpong", bm, bn, 1) for bm in (64, 128) for bn in bns if bm * bn <= 128 * 128]
    tries = [(*x, 1) for x in tries]
    tries += [("sm90_ws_cooperative", 128, bn, 1, 2) for bn in bns if bn >= 128]
    tries += [("sm90_ws_pingpong", 64, bn, 1, 2) for bn in bns if bn >= 128]
    for kernel, bm, bn, raster, cluster in tries:
        try:
            out.append(plan_sm90_ws(p, t, kernel, bm, bn, raster, cluster))
        except PlanError:
            pass
    try:
        out.append(plan_sm90_tma(p, t))
    except PlanError:
        pass
    if p.F > 64:
        try:               # 128 rows per consumer warpgroup: the filter tile serves 256 rows
            out.append(plan_sm90_ws(p, t, "sm90_ws_cooperative", 256, 128))
        except PlanError:
            pass
    if tiles(p, 64, 128) < 2 * t.num_sms:
        # stream-K: tiles that cannot fill the SMs evenly share them by K
        for bm, bn in [(64, bn) for bn in bns if bn >= 128] + [(128, 128 if p.F > 64 else 64)]:
            try:
                out.append(plan_sm90_ws(p, t, "sm90_ws_streamk", bm, bn))
            except PlanError:
                pass
    if tiles(p, 128, 128) > t.num_sms:
        # several tiles per CTA: two staging slots per warpgroup let a tile's residual land
        # (and the previous store drain) during the previous tile's epilogue, at the cost
        # of ring stages
        for kernel, bm, bn in [("sm90_ws_cooperative", 128, bn) for bn in bns if bn >= 128] + \
                [("sm90_ws_pingpong", bm, bn) for bm in (64, 128) for bn in bns if bm * bn <= 128 * 256]:
            try:
                out.append(plan_sm90_ws(p, t, kernel, bm, bn, slots=2))
            except PlanError:
                pass
    # epilogue staged in ring stages (no staging slots): a deeper ring for cooperative tiles
    # whose staging slots cost a stage (128x256: 4 stages instead of 3)
    for bm, bn in [(128, bn) for bn in bns if bn >= 128] + [(256, 128)]:
        try:
            out.append(plan_sm90_ws(p, t, "sm90_ws_cooperative", bm, bn, slots=0))
        except PlanError:
            pass
    for bm in swap_block_ms(p, t, 128, sm90_ws.swap_max_pixels("sm90_ws_cooperative", 128)):
        try:
            out.append(plan_sm90_ws(p, t, "sm90_ws_cooperative", bm, 128, slots=0, swap=True))
        except PlanError:
            pass
    for kernel, bn in (("sm90_ws_cooperative", 128), ("sm90_ws_cooperative", 256),
                       ("sm90_ws_pingpong", 64), ("sm90_ws_pingpong", 128)):
        # swapped tiles: pixel counts per tile that spread the work evenly over the SMs
        for bm in swap_block_ms(p, t, bn, sm90_ws.swap_max_pixels(kernel, bn)):
            for slots in (1, 2) if p.reads_residual and tiles(p, bm, bn) > t.num_sms else (1,):
                try:
                    out.append(plan_sm90_ws(p, t, kernel, bm, bn, slots=slots, swap=True))
                except PlanError:
                    pass
    if fewer_columns_at_160(p):
        # 160-channel tiles (64 B epilogue panels) waste fewer columns, e.g. F = 320
        for kernel, bm in (("sm90_ws_cooperative", 256), ("sm90_ws_cooperative", 128),
                           ("sm90_ws_pingpong", 128), ("sm90_ws_pingpong", 64)):
            try:
                out.append(plan_sm90_ws(p, t, kernel, bm, 160))
            except PlanError:
                pass
    if out[0].direct_stages:
        # the default without the consumers' direct loads: its first k-tiles by TMA
        out.append(dataclasses.replace(out[0], direct_stages=0, reason=out[0].reason + ", first k-tiles by TMA"))
    elif out[0].kernel in ("sm90_ws_cooperative", "sm90_ws_pingpong"):
        # ... or with them, where its CTAs have several tiles of a multi-tap filter
        d = with_direct_loads(p, out[0])
        if d.direct_stages:
            out.append(dataclasses.replace(d, reason=out[0].reason + ", first k-tiles loaded directly"))
    return _unique(out)



def _unique(scheds: list[Schedule]) -> list[Schedule]:
    seen, out = set(), []
    for s in scheds:
        k = knobs_of(s)
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out
