"""convc-plan-schedule: choose a Schedule for every matched problem.

The one owner of tiling decisions. Reads `convc.problem`, writes `convc.schedule`. Shapes the
planner cannot serve become `convc.decline` (IREE fallback) with the reason.
"""

from __future__ import annotations

import dataclasses

from .ir import ir, attr_to_py, dict_attr, walk_ops
from .match import PROBLEM_ATTR, DECLINE_ATTR
from .problem import ConvProblem, DTYPE_BYTES
from .schedule import Schedule
from .target import Target, get_target

SCHEDULE_ATTR = "convc.schedule"


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _largest_vector(n: int, dtype: str, limit_bytes: int = 16) -> int:
    """Largest power-of-two vector (<= limit_bytes) whose width divides n."""
    v = limit_bytes // DTYPE_BYTES[dtype]
    while v > 1 and n % v:
        v //= 2
    return v


class PlanError(ValueError):
    pass


def plan_portable(p: ConvProblem, t: Target) -> Schedule:
    """The portable implicit GEMM: workgroup-memory tiles, plain vector loads, f32 FMAs."""
    if t.backend == "cpu":
        bm, bn, bk, tm, tn, threads = 8, 16, 16, 8, 16, 1
    else:
        threads = 256
        bk = 32
        bm = 64
        bn = 64 if p.F > 32 else 32
        tm = 4
        tn = bm * bn // threads // tm
    vec_a = _largest_vector(p.C, p.dtype)
    vec_b = _largest_vector(p.gemm_k, p.dtype)
    smem = bk * (bm + bn) * DTYPE_BYTES[p.dtype]
    if smem > t.smem_bytes:
        raise PlanError(f"tiles need {smem} B of workgroup memory, target has {t.smem_bytes}")
    grid = (_cdiv(p.gemm_m, bm) * _cdiv(p.gemm_n, bn), 1, 1)
    if grid[0] >= 2**31:
        raise PlanError("too many workgroups")
    return Schedule(kernel="portable_igemm", target=t.arch, block_m=bm, block_n=bn, block_k=bk,
                    thread_m=tm, thread_n=tn, threads=threads, vec_a=vec_a, vec_b=vec_b,
                    stages=1, grid=grid, smem_bytes=smem, subgroup_size=t.subgroup_size,
                    reason="portable implicit GEMM (no faster path for this target yet)")


SM90_SMEM_RESERVE = 1024
SPLIT_K_MIN_KTILES = 64          # barriers and alignment slack inside the one allocation


def plan_sm90_tma(p: ConvProblem, t: Target) -> Schedule:
    """im2col TMA + wgmma (sm_90a). Raises PlanError with the reason when it cannot serve p."""
    from .lower.nvidia.tma_loader import CHANNELS_PER_TILE, DESCRIPTORS_PER_CTA, tensor_maps
    from .lower.nvidia.tensormap import DESCRIPTOR_BYTES, TensorMapError
    if not (t.has_tma and t.has_wgmma):
        raise PlanError(f"{t.arch} has no TMA + wgmma path")
    if p.C % CHANNELS_PER_TILE:
        raise PlanError(f"C={p.C} is not a multiple of {CHANNELS_PER_TILE} (one 128-byte swizzled row per K step)")
    if p.F % 8:
        raise PlanError(f"F={p.F} is not a multiple of 8 (16-byte filter rows)")
    bm, bk = 128, CHANNELS_PER_TILE
    bn = 128 if p.F > 64 else 64
    ktiles = p.gemm_k // bk
    tiles = _cdiv(p.gemm_m, bm) * _cdiv(p.F, bn)
    split_k = 1
    if 2 * tiles <= t.num_sms:
        # Under half the SMs busy: split K over a cluster (reduced through distributed shared
        # memory) when K is long, else halve the tile height. Measured on an H200: 64-row
        # tiles help at 52 tiles and hurt at 98; split-K wins at 72 k-tiles and loses to
        # 64-row tiles at 18 and 32.
        for cand in (4, 2):
            if tiles * cand <= t.num_sms and ktiles % cand == 0 and ktiles >= SPLIT_K_MIN_KTILES:
                split_k = cand
                break
        else:
            bm = 64
    ktiles //= split_k
    stage = (bm + bn) * bk * DTYPE_BYTES[p.dtype]
    epilogue_tile = bm * (bn + 4) * 4            # f32 accumulators staged for the epilogue
    # Size the ring for two CTAs per SM (one's epilogue overlaps the other's main loop), and
    # never deeper than the K extent.
    per_cta = t.smem_bytes // 2 - SM90_SMEM_RESERVE
    stages = max(1, min(ktiles, per_cta // stage, 6))
    smem = max(stages * stage, epilogue_tile) + 16 * stages
    grid = (_cdiv(p.gemm_m, bm) * _cdiv(p.F, bn) * split_k, 1, 1)
    s = Schedule(kernel="sm90_tma_wgmma", target=t.arch, block_m=bm, block_n=bn, block_k=bk,
                 thread_m=64, thread_n=bn if bm == 128 else bn // 2, threads=256, vec_a=bk, vec_b=bk, stages=stages,
                 grid=grid, smem_bytes=smem, subgroup_size=32,
                 reason="im2col TMA + wgmma, mbarrier ring" + (f", split-K x{split_k} over a cluster" if split_k > 1 else ""),
                 scratch_bytes=grid[0] * DESCRIPTORS_PER_CTA * DESCRIPTOR_BYTES, split_k=split_k)
    try:
        tensor_maps(p, s)
    except TensorMapError as e:
        raise PlanError(f"TMA descriptor refused: {e}") from None
    return s


def plan_sm90_gather(p: ConvProblem, t: Target, why_not_tma: str) -> Schedule:
    """wgmma with a thread-gathered im2col tile, for convs TMA cannot read (e.g. C = 3)."""
    from .lower.nvidia.sm90_gather import gather_smem_bytes
    if not t.has_wgmma:
        raise PlanError(f"{t.arch} has no wgmma")
    if p.F % 8:
        raise PlanError(f"F={p.F} is not a multiple of 8")
    bm, bn = 128, (128 if p.F > 64 else 64)
    if 2 * _cdiv(p.gemm_m, bm) * _cdiv(p.F, bn) <= t.num_sms:
        bm = 64
    grid = (_cdiv(p.gemm_m, bm) * _cdiv(p.F, bn), 1, 1)
    s = Schedule(kernel="sm90_gather_wgmma", target=t.arch, block_m=bm, block_n=bn, block_k=64,
                 thread_m=64, thread_n=bn if bm == 128 else bn // 2, threads=256, vec_a=1, vec_b=1,
                 stages=1, grid=grid, smem_bytes=0, subgroup_size=32,
                 reason=f"gathered im2col + wgmma (TMA declined: {why_not_tma})")
    return dataclasses.replace(s, smem_bytes=gather_smem_bytes(s))


def plan_schedule_for(p: ConvProblem, t: Target) -> Schedule:
    """The fastest path that applies, else the portable kernel with the reasons."""
    if t.has_wgmma:
        try:
            return plan_sm90_tma(p, t)
        except PlanError as why:
            try:
                return plan_sm90_gather(p, t, str(why))
            except PlanError as why2:
                s = plan_portable(p, t)
                return dataclasses.replace(s, reason=f"portable implicit GEMM: TMA path declined ({why}); {why2}")
    return plan_portable(p, t)


def plan_schedule(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-plan-schedule: attach convc.schedule next to each convc.problem."""
    target = get_target(getattr(options, "target", None) or "sm_90a")
    with module.context:
        for exe in walk_ops(module.operation, "flow.executable"):
            if PROBLEM_ATTR not in exe.attributes:
                continue
            prob = ConvProblem.from_dict(attr_to_py(exe.attributes[PROBLEM_ATTR]))
            try:
                sched = plan_schedule_for(prob, target)
            except PlanError as e:
                exe.attributes[DECLINE_ATTR] = ir.StringAttr.get(str(e))
                continue
            exe.attributes[SCHEDULE_ATTR] = dict_attr(sched.to_dict())
    return module
