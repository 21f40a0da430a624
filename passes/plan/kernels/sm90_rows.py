"""sm_90a: the row-slab TMA + register-A wgmma kernel (lower/nvidia/sm90_rows.py), for convs
whose pixels the im2col TMA cannot address but whose input rows it can."""

from __future__ import annotations

from ...lower.nvidia import row_slab, sm90_rows, tensormap, warp_roles
from ...problem import ConvProblem
from ...kernel_configs import RowSlabConfig
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import SM90_SMEM_RESERVE, PlanError
from ...lower.nvidia.sm90_rows import emit_sm90_rows
from ...kernel_families import KernelFamily, register


def _slab_geometry(p: ConvProblem, t: Target):
    """(the kernel's slab geometry for p, None), or (None, why it cannot serve p)."""
    if not t.has_wgmma:
        return None, f"{t.arch} has no wgmma"
    try:
        return sm90_rows.check_supported(p), None
    except (row_slab.RowSlabUnsupported, tensormap.TensorMapError) as e:
        return None, f"row-slab kernel declined: {e}"


def supports(p: ConvProblem, t: Target) -> str | None:
    return _slab_geometry(p, t)[1]


def plan_sm90_rows(p: ConvProblem, t: Target, why_not_tma: str = "") -> Schedule:
    """Row-slab TMA + register-A wgmma, persistent and warp-specialized, for convs whose pixels
    TMA cannot address but whose input rows it can (e.g. the 3-channel stem); why_not_tma joins
    the reason."""
    g, why = _slab_geometry(p, t)
    if why:
        raise PlanError(why)
    fixed = sm90_rows.RowsLayout(p, g, 0).total
    slot = sm90_rows.RowsLayout(p, g, 1).slot
    stages = min(sm90_rows.MAX_STAGES, (t.smem_bytes - SM90_SMEM_RESERVE - fixed) // (slot + 16)) // 2 * 2
    if stages < 2:
        raise PlanError(f"row-slab kernel declined: two {slot}-byte slab slots do not fit")
    tiles = p.N * p.Ho * (p.F // g.block_n)
    grid = (min(tiles, t.num_sms), 1, 1)
    return Schedule(kernel=Kernel.SM90_ROWS_WGMMA, target=t.arch, block_m=64 * g.subs, block_n=g.block_n, block_k=g.kp,
                    threads=warp_roles.THREADS, config=RowSlabConfig(), stages=stages, grid=grid,
                    smem_bytes=sm90_rows.RowsLayout(p, g, stages).total,
                    reason=f"row-slab TMA + register-A wgmma, warp-specialized persistent (im2col TMA declined: {why_not_tma})",
                    scratch_bytes=grid[0] * sm90_rows.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES)


SM90_ROWS = register(KernelFamily("sm90_rows_wgmma", RowSlabConfig, supports, plan_sm90_rows, emit_sm90_rows))
