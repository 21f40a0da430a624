"""The portable implicit GEMM: the kernel every target has, and the fallback of every other."""

from __future__ import annotations

from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import PortableConfig
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import PlanError, cdiv, largest_vector
from ...lower.common.igemm import emit_portable_igemm, portable_batch_grid
from ...kernel_families import KernelFamily, register


def plan_portable(p: ConvProblem, t: Target) -> Schedule:
    """The portable implicit GEMM: workgroup-memory tiles, plain vector loads, f32 FMAs."""
    if t.backend == "cpu":
        bm, bn, bk, tm, tn, threads = 8, 16, 16, 8, 16, 1
    else:
        threads = 256
        bk = 32
        bm = 64
        bn = 64 if p.F > 32 else 32 if p.F > 16 else 16     # few channels (an RGB output): fewer idle columns
        tm = 4
        tn = bm * bn // threads // tm
    vec_a = largest_vector(p.C, p.dtype)
    vec_b = largest_vector(p.gemm_k, p.dtype)
    smem = bk * (bm + bn) * DTYPE_BYTES[p.dtype]
    if smem > t.smem_bytes:
        raise PlanError(f"tiles need {smem} B of workgroup memory, target has {t.smem_bytes}")
    grid = (cdiv(p.gemm_m, bm) * cdiv(p.gemm_n, bn), 1, 1)
    if grid[0] >= 2**31:
        raise PlanError("too many workgroups")
    return Schedule(kernel=Kernel.PORTABLE_IGEMM, target=t.arch, block_m=bm, block_n=bn, block_k=bk,
                    threads=threads, config=PortableConfig(thread_m=tm, thread_n=tn, vec_a=vec_a, vec_b=vec_b),
                    stages=1, grid=grid, smem_bytes=smem,
                    reason="portable implicit GEMM (no faster path for this target yet)")


def supports(p: ConvProblem, t: Target) -> str | None:
    """Every conv on every target (a tile that does not fit is a planning decline)."""
    return None


PORTABLE = register(KernelFamily("portable_igemm", PortableConfig, supports, plan_portable,
                                 emit_portable_igemm, batch_grid=portable_batch_grid))
