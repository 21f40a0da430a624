"""int8 convs (s8 x s8 summed in i32, then the epilogue program that requantizes them): on
sm_90a the warp-specialized persistent TMA + wgmma kernel with s8 wgmma (lower/nvidia/sm90_ws.py:
the same ring, swizzle and descriptors as 16-bit operands, 32 bytes of K per instruction); on
sm_100a the tcgen05 kernel with kind::i8 MMAs (lower/nvidia/sm100_ws.py, the same 32 bytes);
elsewhere, and where that kernel declines (e.g. C not a multiple of 64 with several filter taps),
the portable kernel, which sums in i32 too and is the reference path."""

from __future__ import annotations

import dataclasses

from ...lower.nvidia import tma_loader
from ...problem import ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .portable import plan_portable
from .common import tiles
from .sm90_ws import SM90_WS, WsTile


def plan_int8(p: ConvProblem, t: Target) -> Schedule:
    """sm_90a: the f16 rules' tile where its registers allow (below), else ping-pong or
    cooperative 128x128 / 128x64 tiles (an i8 output's narrowest TMA-store panel is 64
    channels). The kernel refuses stream-K for int8 and loads no direct prologue k-tiles
    (16-bit chunks only). sm_100a: the tcgen05 kernel with kind::i8 MMAs (i32 accumulators in
    tensor memory), tiled as for f16; gfx942 / gfx950: the LDS-direct MFMA kernel with
    v_mfma_i32_16x16x{32,64}_i8 (both compile-only: neither a Blackwell nor an Instinct was
    available to time or check them)."""
    if t.has_tcgen05:
        from .sm100_ws import SM100_WS
        s = SM100_WS.attempt(p, t)
        if isinstance(s, Schedule):
            return s
        return _portable(p, t, f"portable implicit GEMM (int8, i32 sums: tcgen05 kernel declined: {s})")
    if t.backend == "amd":
        from .amd_lds_mfma import plan_amd        # the MFMA kernel takes i8 (else portable, with the reason)
        return plan_amd(p, t)
    if not t.has_wgmma:
        return _portable(p, t, f"portable implicit GEMM (int8, i32 sums: no s8 tensor-core kernel for {t.arch})")
    if p.dynamic_batch:
        return _portable(p, t, "portable implicit GEMM (int8 with a run-time batch: the s8 wgmma kernel is built "
                               "for static shapes so far)")
    return _plan_sm90_8bit(p, t, "int8, i32 sums")


def plan_fp8(p: ConvProblem, t: Target) -> Schedule:
    """fp8 convs (OCP e4m3 or e5m2 operands, f32 sums): on sm_90a the int8 tiles and kernel
    with e4m3 / e5m2 wgmma (m64nNk32, f32 accumulators: the f16 epilogue); on sm_100a the
    tcgen05 kernel with kind::f8f6f4 MMAs (f32 accumulators in tensor memory, 32 bytes of K
    per instruction as kind::i8; compile-only: no Blackwell was available); on gfx950 the
    LDS-direct MFMA kernel with v_mfma_f32_16x16x32_{fp8,bf8} (compile-only); elsewhere (gfx942:
    its fp8 MFMAs take the FNUZ variants, not the OCP types) the portable kernel."""
    what = f"{p.dtype}, f32 sums"
    if t.backend == "amd":
        from .amd_lds_mfma import plan_amd        # the MFMA kernel on gfx950 (else portable, with the reason)
        return plan_amd(p, t)
    if t.has_tcgen05:
        from .sm100_ws import SM100_WS
        s = SM100_WS.attempt(p, t)
        if isinstance(s, Schedule):
            return s
        return _portable(p, t, f"portable implicit GEMM ({what}: tcgen05 kernel declined: {s})")
    if not t.has_wgmma:
        return _portable(p, t, f"portable implicit GEMM ({what}: no fp8 tensor-core kernel for {t.arch} yet)")
    if p.runtime_sizes:
        return _portable(p, t, f"portable implicit GEMM ({what} with runtime sizes)")
    return _plan_sm90_8bit(p, t, what)


def _mma(p: ConvProblem) -> str:
    """The 8-bit wgmma a schedule's reason names: s8 (i32 sums) or e4m3 / e5m2 (f32 sums)."""
    from ...lower.nvidia.primitives import WGMMA_OPERANDS
    return "s8 wgmma (i32 accumulation)" if p.dtype == "i8" else \
        f"{WGMMA_OPERANDS[p.dtype][0]} wgmma (f32 accumulation)"


def eight_bit_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """The schedules convc-tune times for an int8 or fp8 conv: the default, then every
    persistent-kernel tile of the 16-bit candidate grid (sm90_candidates.candidate_grid) the
    8-bit kernel takes within the register budget (no stream-K, swapped tiles or direct
    prologue loads: the family refuses or this strips them). Elsewhere the default alone."""
    default = plan_int8(p, t) if p.dtype == "i8" else plan_fp8(p, t)
    if default.kernel not in (Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_PINGPONG):
        return [default]
    from ..tuning import unique_by_knobs
    from .sm90_candidates import candidate_grid
    out = [default]
    for family, config in candidate_grid(p, t):
        if family is not SM90_WS:
            continue
        s = family.attempt(p, t, **config)
        if isinstance(s, Schedule) and _registers(p, s) <= REGISTER_BUDGET:
            out.append(_as_8bit(s, _mma(p)))
    return unique_by_knobs(out)


def _as_8bit(s: Schedule, mma: str) -> Schedule:
    """A persistent-kernel schedule as the 8-bit kernel runs it (its reason naming the wgmma)."""
    if s.config.direct_stages:                # cp.async prologue chunks are 16-bit ones
        s = s.with_config(direct_stages=0)
    return dataclasses.replace(s, reason=f"{s.reason}, {mma}")


def _plan_sm90_8bit(p: ConvProblem, t: Target, what: str) -> Schedule:
    """The 8-bit operands' sm_90a plan (s8 or fp8 wgmma: 32 bytes of K per instruction):
    RESIDUAL_TILE for a conv with a residual and RESIDUAL_TILES_PER_SM 128x128 tiles per SM or
    more, else the f16 rules' tile where its registers allow."""
    mma = _mma(p)
    if p.residual_loads and tiles(p, 128, 128) >= RESIDUAL_TILES_PER_SM * t.num_sms:
        s = SM90_WS.attempt(p, t, tile=RESIDUAL_TILE)
        if isinstance(s, Schedule) and _registers(p, s) <= REGISTER_BUDGET:
            return _as_8bit(s, mma)
    s = _f16_rules(p, t)
    if not isinstance(s, Schedule) or _registers(p, s) > REGISTER_BUDGET:
        s = next((c for c in (SM90_WS.attempt(p, t, tile=tile) for tile in _FALLBACK_TILES)
                  if isinstance(c, Schedule) and _registers(p, c) <= REGISTER_BUDGET), None) or \
            SM90_WS.attempt(p, t, tile=WsTile(Kernel.SM90_WS_COOPERATIVE, 128, 128 if p.F > 64 else 64))
    if isinstance(s, Schedule):
        return _as_8bit(s, mma)
    why = str(s)
    if tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) is None:
        why = f"{why}; 64-channel steps need C a multiple of 64, or of 16 with one filter tap"
    return _portable(p, t, f"portable implicit GEMM ({what}: {mma.split(' (')[0]} kernel declined: {why})")


# int8 convs with a residual and many 128x128 tiles per SM: cooperative 128x128 tiles with two
# staging slots per warpgroup (a tile's residual lands during the previous tile's epilogue).
# convc-tune over the int8 suite (H200, results/tuning/h200_int8_suite_tune_latest.json):
# ResNet-50's 1x1 64 -> 256 + residual (12 tiles per SM) 27.8 -> 23.4 us, 128 -> 512 (6)
# 15.7 -> 13.7, the best of 25 candidates each; with fewer tiles it is mixed: 256 -> 1024 (3)
# 10.3 -> 10.9, 512 -> 2048 (1.6) 9.6 -> 8.9, so those keep the f16 rules' tile.
RESIDUAL_TILE = WsTile(Kernel.SM90_WS_COOPERATIVE, 128, 128, slots=2)
RESIDUAL_TILES_PER_SM = 4


# Registers a consumer thread spends on accumulators and per-channel epilogue operands (loaded
# before the main loop): above this the 168-register consumers spill. A QDQ model's epilogue
# reads 2-4 per-channel operands (scales, bias, zero-point terms); with the f16 rules' 64x256
# tiles its ResNet-50 expansion 1x1s spilled 548-1188 bytes and took 99-122 us (H200, against
# 33 us for the f16 conv).
REGISTER_BUDGET = 160
_FALLBACK_TILES = (WsTile(Kernel.SM90_WS_PINGPONG, 128, 128), WsTile(Kernel.SM90_WS_COOPERATIVE, 128, 128),
                   WsTile(Kernel.SM90_WS_PINGPONG, 128, 64), WsTile(Kernel.SM90_WS_COOPERATIVE, 128, 64))


def _registers(p: ConvProblem, s: Schedule) -> int:
    """A consumer thread's accumulators and per-channel operands (the family's estimate,
    sm90_ws_layout.consumer_registers; a QDQ epilogue's operands are f32)."""
    from ...lower.nvidia.sm90_ws_layout import consumer_registers
    return consumer_registers(p, s.kernel, s.block_m, s.block_n, getattr(s.config, "swap_ab", False))


def _f16_rules(p: ConvProblem, t: Target):
    """The tile the f16 rules (sm90.plan_sm90) pick for the same shape, where the s8 kernel
    takes it (they pick stream-K for some grids, which int8 refuses)."""
    from .sm90 import plan_sm90
    from .common import PlanError
    from ...kernel_families import Declined
    try:
        s = plan_sm90(p, t)
    except PlanError as e:
        return Declined(str(e))
    return s if s.kernel in (Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_PINGPONG) else Declined(s.kernel)


def _portable(p: ConvProblem, t: Target, reason: str) -> Schedule:
    return dataclasses.replace(plan_portable(p, t), reason=reason)
