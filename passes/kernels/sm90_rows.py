"""sm_90a: the row-slab TMA + register-A wgmma kernel (lower/nvidia/sm90_rows.py), for convs
whose pixels the im2col TMA cannot address but whose input rows it can."""

from __future__ import annotations

from ..lower.nvidia import row_slab, sm90_rows, tensormap, warp_roles
from ..problem import ConvProblem
from ..schedule import Schedule
from ..target import Target
from .common import SM90_SMEM_RESERVE, PlanError


def plan_sm90_rows(p: ConvProblem, t: Target, why_not_tma: str) -> Schedule:
    """Row-slab TMA + register-A wgmma, persistent and warp-specialized, for convs whose pixels
    TMA cannot address but whose input rows it can (e.g. the 3-channel stem)."""
    if not t.has_wgmma:
        raise PlanError(f"{t.arch} has no wgmma")
    try:
        g = sm90_rows.check_supported(p)
    except (row_slab.RowSlabUnsupported, tensormap.TensorMapError) as e:
        raise PlanError(f"row-slab kernel declined: {e}") from None
    fixed = sm90_rows.RowsLayout(p, g, 0).total
    slot = sm90_rows.RowsLayout(p, g, 1).slot
    stages = min(sm90_rows.MAX_STAGES, (t.smem_bytes - SM90_SMEM_RESERVE - fixed) // (slot + 16)) // 2 * 2
    if stages < 2:
        raise PlanError(f"row-slab kernel declined: two {slot}-byte slab slots do not fit")
    tiles = p.N * p.Ho * (p.F // 64)
    grid = (min(tiles, t.num_sms), 1, 1)
    return Schedule(kernel="sm90_rows_wgmma", target=t.arch, block_m=64 * g.subs, block_n=64, block_k=g.kp,
                    thread_m=64, thread_n=64, threads=warp_roles.THREADS, vec_a=1, vec_b=1, stages=stages, grid=grid,
                    smem_bytes=sm90_rows.RowsLayout(p, g, stages).total, subgroup_size=32,
                    reason=f"row-slab TMA + register-A wgmma, warp-specialized persistent (im2col TMA declined: {why_not_tma})",
                    scratch_bytes=grid[0] * sm90_rows.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES,
                    min_ctas_per_sm=1)     # ptxas ignores setmaxnreg without a known entry register count
