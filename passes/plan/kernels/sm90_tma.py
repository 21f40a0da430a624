"""sm_90a: the non-persistent im2col TMA + wgmma kernel (split-K over a cluster for small
grids), and the TMA constraints the persistent kernels share with it."""

from __future__ import annotations

from ...lower.nvidia import tensormap, tma_loader
from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import TmaWgmmaConfig
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import SM90_SMEM_RESERVE, PlanError, cdiv, require_descriptors, tiles
from ...lower.nvidia.sm90_igemm import emit_sm90_tma_wgmma
from ...kernel_families import KernelFamily, register

SPLIT_K_MIN_KTILES = 64


def tma_unsupported(p: ConvProblem, t: Target, block_k: int | None = None) -> str | None:
    """Why the constraints every im2col-TMA + wgmma kernel shares do not hold (None: they do).
    block_k: the K step's channels (default 64: one 128-byte swizzled row)."""
    if not (t.has_tma and t.has_wgmma):
        return f"{t.arch} has no TMA + wgmma path"
    bk = block_k or tma_loader.CHANNELS_PER_TILE
    if p.C % bk and not (block_k and tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) == bk):
        return f"C={p.C} is not a multiple of {bk} (one {DTYPE_BYTES[p.dtype] * bk}-byte swizzled row per K step)"
    if p.F % 8:
        return f"F={p.F} is not a multiple of 8 (16-byte filter rows)"
    return None


def supports(p: ConvProblem, t: Target) -> str | None:
    return tma_unsupported(p, t)


def plan_sm90_tma(p: ConvProblem, t: Target) -> Schedule:
    """im2col TMA + wgmma (sm_90a): 128-row tiles, or, under half the SMs busy, K split over a
    cluster (reduced through distributed shared memory) when K is long, else 64-row tiles
    (bench/NOTES.md, planner rules). Raises PlanError with the reason when it cannot serve p."""
    why = supports(p, t)
    if why:
        raise PlanError(why)
    bm, bk = 128, tma_loader.CHANNELS_PER_TILE
    bn = 128 if p.F > 64 else 64
    ktiles = p.gemm_k // bk
    n_tiles = tiles(p, bm, bn)
    split_k = 1
    if 2 * n_tiles <= t.num_sms:
        for cand in (4, 2):
            if n_tiles * cand <= t.num_sms and ktiles % cand == 0 and ktiles >= SPLIT_K_MIN_KTILES:
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
    grid = (cdiv(p.gemm_m, bm) * cdiv(p.F, bn) * split_k, 1, 1)
    s = Schedule(kernel=Kernel.SM90_TMA_WGMMA, target=t.arch, block_m=bm, block_n=bn, block_k=bk,
                 threads=256, config=TmaWgmmaConfig(split_k=split_k), stages=stages,
                 grid=grid, smem_bytes=smem,
                 reason="im2col TMA + wgmma, mbarrier ring" + (f", split-K x{split_k} over a cluster" if split_k > 1 else ""),
                 scratch_bytes=grid[0] * tma_loader.DESCRIPTORS_PER_CTA * tensormap.DESCRIPTOR_BYTES)
    return require_descriptors(p, s)


def narrow_k_steps(p: ConvProblem, t: Target) -> bool:
    """C = 32 (mod 64), or any multiple of 8 with one filter tap: the persistent kernels can
    still step K by 32 channels (64 B rows)."""
    return (tma_loader.k_tile_channels(p.C, p.R * p.S) == tma_loader.NARROW_CHANNELS_PER_TILE
            and p.dtype in ("f16", "bf16") and tma_unsupported(p, t, tma_loader.NARROW_CHANNELS_PER_TILE) is None)


SM90_TMA = register(KernelFamily("sm90_tma_wgmma", TmaWgmmaConfig, supports, plan_sm90_tma,
                                 emit_sm90_tma_wgmma))

