"""GEMMs of few rows: the subgroup dot-product kernel (lower/common/skinny_gemm.py).

The squeeze-excitation FCs run on one pixel per image: at batch 32 a GEMM of M = 32 rows with
K = 96-1152 and F = 4-1152, whose weights fit in L2 several times over. The tile kernels give
such a GEMM one or a few workgroups that walk all of K in sequence (EfficientNet-B0's 32 x 672 ->
28 took 35 us on the portable kernel at batch 32 on an H100: F = 28 is no multiple of 8, so no
TMA). Here each subgroup computes a few rows x channels outputs as dot products, its lanes
splitting K into 16-byte vectors and summing their partials by shuffles, so the grid has
hundreds of subgroups, each with a few loads per lane.
"""

from __future__ import annotations

from ...kernel_configs import SkinnyGemmConfig
from ...problem import ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import PlanError, cdiv, largest_vector
from ...lower.common.skinny_gemm import emit_skinny_gemm
from ...kernel_families import KernelFamily, register

# rows a GEMM may have to take this kernel, and the weights (F x K elements) it may read: the
# tile kernels keep larger ones (a classifier's 1000 x 1280 weights re-read per row block)
MAX_ROWS = 64
MAX_WEIGHTS = 256 * 1024
ROWS, CHANNELS = 2, 4             # outputs per subgroup: 8 f32 vector accumulators per lane
SUBGROUPS = 4                     # per workgroup


def supports(p: ConvProblem, t: Target) -> str | None:
    if not p.gemm_form or p.R * p.S != 1 or p.grouped or p.pool or p.filter_layout != "fhwc":
        return "not a GEMM-form 1x1 conv"
    if p.dynamic_batch:
        return "the row count is read at run time"
    if p.acc_dtype != "f32":
        return f"{p.dtype} operands (the skinny kernel sums in f32)"
    if p.gemm_m > MAX_ROWS:
        return f"{p.gemm_m} rows (more than {MAX_ROWS}: the tile kernels' work)"
    if p.F * p.C > MAX_WEIGHTS:
        return f"{p.F} x {p.C} weights (more than {MAX_WEIGHTS}: the tile kernels' work)"
    if p.stride != (1, 1):
        return "a strided GEMM"
    return None


def plan_skinny(p: ConvProblem, t: Target) -> Schedule:
    why = supports(p, t)
    if why:
        raise PlanError(why)
    v = largest_vector(p.C, p.dtype)
    rows, channels = min(ROWS, p.gemm_m), min(CHANNELS, p.F)
    groups = cdiv(p.gemm_m, rows) * cdiv(p.F, channels)
    if t.backend == "cpu":
        threads, grid = 1, groups
    else:
        threads, grid = SUBGROUPS * t.subgroup_size, cdiv(groups, SUBGROUPS)
    return Schedule(kernel=Kernel.SKINNY_GEMM, target=t.arch, block_m=rows, block_n=channels, block_k=v,
                    threads=threads, stages=1, grid=(grid, 1, 1), smem_bytes=0,
                    config=SkinnyGemmConfig(rows=rows, channels=channels),
                    reason=f"GEMM of {p.gemm_m} rows as dot products: {rows} rows x {channels} channels per "
                           f"subgroup, lanes splitting K = {p.C} into {v}-element vectors, f32 sums across lanes")


SKINNY_GEMM = register(KernelFamily("skinny_gemm", SkinnyGemmConfig, supports, plan_skinny, emit_skinny_gemm))
