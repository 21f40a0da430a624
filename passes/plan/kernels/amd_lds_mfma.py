"""gfx942 / gfx950: the LDS-direct im2col loader + MFMA kernel (lower/amd)."""

from __future__ import annotations

import dataclasses

from ...lower.amd import im2col_addressing, lds_loader
from ...lower.amd.primitives import FP8_DTYPES, FP8_MFMA_ARCHS, mfma_k
from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import LdsMfmaConfig
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import PlanError, cdiv
from .portable import plan_portable
from ...lower.amd.igemm_mfma import emit_amd_lds_mfma
from ...kernel_families import Declined, KernelFamily, register

AMD_MAX_STAGES = 3


def supports(p: ConvProblem, t: Target) -> str | None:
    if t.backend != "amd" or not (t.lds_dma_bytes and t.mfma_k):
        return f"{t.arch} has no direct-to-LDS loads with MFMA"
    if p.dtype in FP8_DTYPES and t.arch not in FP8_MFMA_ARCHS:
        return f"{p.dtype} inputs ({t.arch}'s fp8 MFMAs take the FNUZ encodings, not the OCP types)"
    if p.dtype not in ("f16", "bf16", "i8") + FP8_DTYPES:
        return f"{p.dtype} inputs (MFMA path takes f16/bf16, i8 summed in i32, and OCP fp8 in f32 on gfx950)"
    if p.dtype in ("i8",) + FP8_DTYPES and p.groups > 1:
        return f"a grouped {p.dtype} conv"
    return None


def plan_amd_lds_mfma(p: ConvProblem, t: Target, block: int | None = None) -> Schedule:
    """gfx942 / gfx950: LDS-direct im2col loader + MFMA (passes/lower/amd). 128x128 tiles, or
    64x64 when 128-tiles would leave CUs idle; block_k = two MFMA K steps; 4 MFMA waves + 2
    loading waves; as many ring stages (2..3) as vmcnt (63 loads in flight) and LDS allow.
    `block` forces the square tile (64 or 128; tests and tuning). Raises PlanError with the
    reason when the loader cannot serve p."""
    why = supports(p, t)
    if why:
        raise PlanError(why)
    vec = lds_loader.lane_elements(t, p.dtype)
    k = mfma_k(t.arch, p.dtype)
    bk = 2 * k
    bm = bn = 128
    if cdiv(p.gemm_m, 128) * cdiv(p.F, 128) < t.num_sms:
        bm = bn = 64
    if block is not None:
        if block not in (64, 128):
            raise PlanError(f"tile {block} (the MFMA kernel takes 64 or 128)")
        bm = bn = block
    threads = (lds_loader.MFMA_WAVES + lds_loader.LOADING_WAVES) * lds_loader.WAVE
    loads_per_tile = (bm + bn) * bk // (vec * lds_loader.LOADING_WAVES * lds_loader.WAVE)
    stage_bytes = (bm + bn) * bk * DTYPE_BYTES[p.dtype]
    ktiles = cdiv(p.gemm_k, bk)
    stages = min(AMD_MAX_STAGES, 1 + 63 // loads_per_tile, t.smem_bytes // stage_bytes, max(2, ktiles))
    if stages < 2:
        raise PlanError(f"two {stage_bytes}-byte ring stages do not fit {t.smem_bytes} B of LDS")
    grid = (cdiv(p.gemm_m, bm) * cdiv(p.F, bn), 1, 1)
    s = Schedule(kernel=Kernel.AMD_LDS_MFMA, target=t.arch, block_m=bm, block_n=bn, block_k=bk,
                 threads=threads, config=LdsMfmaConfig(lane_elems=vec),
                 stages=stages, grid=grid, smem_bytes=stages * stage_bytes)
    try:
        cfg = lds_loader.loader_config(p, s, t)
    except im2col_addressing.AddressingError as e:
        raise PlanError(f"LDS-direct loader: {e}") from None
    return dataclasses.replace(
        s, reason=(f"LDS-direct im2col ({cfg.subpath}, {vec * DTYPE_BYTES[p.dtype]} B/lane) + MFMA 16x16x{k}"
                   + (" (i8, i32 sums)" if p.dtype == "i8" else f" ({p.dtype}, f32 sums)" if p.dtype in FP8_DTYPES else "")
                   + ", "
                   f"{lds_loader.LOADING_WAVES} loading + {lds_loader.MFMA_WAVES} MFMA waves"))


AMD_LDS_MFMA = register(KernelFamily("amd_lds_mfma", LdsMfmaConfig, supports, plan_amd_lds_mfma,
                                     emit_amd_lds_mfma))


def plan_amd(p: ConvProblem, t: Target) -> Schedule:
    """gfx942 / gfx950: the MFMA kernel, else the portable one with the reason."""
    s = AMD_LDS_MFMA.attempt(p, t)
    if isinstance(s, Declined):
        return dataclasses.replace(plan_portable(p, t), reason=f"portable implicit GEMM: LDS-direct MFMA path declined ({s})")
    return s
