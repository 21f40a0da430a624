"""sm_90a: wgmma with a thread-gathered im2col tile (lower/nvidia/sm90_gather.py), for convs
no TMA path can read."""

from __future__ import annotations

import dataclasses

from ...lower.nvidia import sm90_gather
from ...problem import ConvProblem
from ...kernel_configs import GatherConfig
from ...schedule import Kernel, Schedule
from ...target import Target
from ...lower.common.igemm import portable_batch_grid   # one CTA per output tile, the same layout
from .common import PlanError, cdiv, tile_planning_problem
from ...lower.nvidia.sm90_gather import emit_sm90_gather_wgmma
from ...kernel_families import KernelFamily, register


def supports(p: ConvProblem, t: Target) -> str | None:
    if not t.has_wgmma:
        return f"{t.arch} has no wgmma"
    if p.F % 8:
        return f"F={p.F} is not a multiple of 8"
    return None


def plan_sm90_gather(p: ConvProblem, t: Target, why_not_tma: str = "") -> Schedule:
    """wgmma with a thread-gathered im2col tile, for convs TMA cannot read (e.g. C = 3);
    why_not_tma joins the reason."""
    why = supports(p, t)
    if why:
        raise PlanError(why)
    bm, bn = 128, (128 if p.F > 64 else 64)
    # 64-row tiles where 128 would leave SMs idle (runtime image sizes: on the tile-planning image)
    if 2 * cdiv(tile_planning_problem(p).gemm_m, bm) * cdiv(p.F, bn) <= t.num_sms:
        bm = 64
    grid = (cdiv(p.gemm_m, bm) * cdiv(p.F, bn), 1, 1)
    s = Schedule(kernel=Kernel.SM90_GATHER_WGMMA, target=t.arch, block_m=bm, block_n=bn, block_k=64,
                 threads=256, config=GatherConfig(), stages=1, grid=grid, smem_bytes=0,
                 reason=f"gathered im2col + wgmma (TMA declined: {why_not_tma})")
    return dataclasses.replace(s, smem_bytes=sm90_gather.gather_smem_bytes(s))


SM90_GATHER = register(KernelFamily("sm90_gather_wgmma", GatherConfig, supports, plan_sm90_gather,
                                    emit_sm90_gather_wgmma, batch_grid=portable_batch_grid))
