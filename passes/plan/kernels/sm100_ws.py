"""Planning for sm_100a (Blackwell): the warp-specialized tcgen05 kernel
(lower/nvidia/sm100_ws.py) where it applies, else the portable kernel with the reason.

The kernel takes f16/bf16 static-shape convs the im2col TMA path reads (C a multiple of 64
channels, 128-byte K rows; or of 32 / one filter tap, 64-byte rows: tma_loader.k_tile_channels)
with F a multiple of 8. Tiles are 128 output pixels (the 1-SM MMA's M, one tensor-memory
lane each) by block_n channels, block_n a multiple of 32 up to 256 (MMA N; tcgen05.ld chunks
of 32 columns): the one that minimises the busiest SM's main-loop time, a B200 model like the
sm_90a planner's swapped-tile one (sm90_ws.swap_block_ms): waves of tiles times one k-step, bound
by the tensor cores (128 x block_n x block_k MACs) or the operand feed ((128 + block_n) rows).
Nothing here was timed on a B200: the rates are the B200's published dense f16 rate per SM
and the operand feed measured per SM on the H200.
"""

from __future__ import annotations

import dataclasses

from ...lower.nvidia.sm100_ws import (BLOCK_M, DESCRIPTORS, KERNEL, MAX_STAGES, THREADS, Sm100Unsupported,
                                     check_supported, sm100_layout)
from ...lower.nvidia import tcgen05 as tc
from ...lower.nvidia.tensormap import DESCRIPTOR_BYTES
from ...lower.nvidia.tma_loader import k_tile_channels
from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import Sm100WsConfig
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import PlanError, cdiv, require_descriptors
from .grouped_mma import narrow_stem
from .portable import plan_portable
from ...lower.nvidia.sm100_ws import emit_sm100_ws
from ...kernel_families import Declined, KernelFamily, register

# Per-SM rates behind the tile model: 2.25 PFLOP/s dense f16 over 148 SMs (MACs per ns), and
# the operand bytes per ns an SM was measured to receive from L2 on the H200 (sm90_ws.py).
B200_SM_MACS_PER_NS = 2.25e15 / 2 / 148 / 1e9
SM_FEED_BYTES_PER_NS = 140
BLOCK_NS = tuple(range(32, 257, 32))
SMEM_RESERVE = 1024


def sm100_block_n(p: ConvProblem, t: Target, block_k: int, cluster: int = 1) -> int:
    """block_n (a multiple of 32 in [32, 256]) with the lowest modelled time for p; ties go to
    the wider tile (fewer operand bytes per MAC). cluster = 2: tiles of 256 rows on CTA pairs,
    each SM computing 128 rows and loading half of the filter rows."""
    row = block_k * DTYPE_BYTES[p.dtype]
    m_tiles = cdiv(p.gemm_m, 128 * cluster)

    def cost(bn):
        waves = cdiv(m_tiles * cdiv(p.F, bn), t.num_sms // cluster)
        step = max(128 * bn * block_k / B200_SM_MACS_PER_NS, (128 + bn // cluster) * row / SM_FEED_BYTES_PER_NS)
        return (waves * step, -bn)
    # the staging slot's swizzle rows are 64 bytes of output channels: 64 of an i8 output
    panel = 64 // DTYPE_BYTES[p.out_dtype]
    options = [bn for bn in BLOCK_NS
               if (bn < 64 and p.F <= bn or bn >= 64) and bn >= 32 * cluster and bn % panel == 0]
    return min(options, key=cost)


def supports(p: ConvProblem, t: Target) -> str | None:
    if not t.has_tcgen05:
        return f"{t.arch} has no tcgen05"
    if p.dtype not in tc.KIND:
        return f"{p.dtype} operands (the tcgen05 kernel takes f16/bf16, i8 summed in i32, e4m3/e5m2 and TF32 in f32)"
    if k_tile_channels(p.C, p.R * p.S, p.dtype) is None:
        return (f"C={p.C} does not tile into 64- or 128-byte K rows of the im2col TMA "
                f"(a multiple of 32 channels, or of 8 with one filter tap)")
    if p.F % 8:
        return f"F={p.F} is not a multiple of 8 (16-byte filter rows)"
    return None


def plan_sm100_ws(p: ConvProblem, t: Target, block_n: int | None = None, cluster: int = 1) -> Schedule:
    """The tcgen05 kernel for p: 1-SM, or (cluster = 2) on 2x1 CTA pairs issuing cta_group::2
    MMAs of 256 rows; PlanError with the reason when it cannot serve p. block_n forces the tile
    width (tests)."""
    why = supports(p, t)
    if why:
        raise PlanError(why)
    bk = k_tile_channels(p.C, p.R * p.S, p.dtype)
    bn = block_n or sm100_block_n(p, t, bk, cluster)
    try:
        check_supported(p, bn, bk, cluster)
    except Sm100Unsupported as e:
        raise PlanError(str(e)) from None
    fixed = sm100_layout(p, bn, bk, 0, cluster).total
    stage = (BLOCK_M + bn // cluster) * bk * DTYPE_BYTES[p.dtype]
    stages = min(MAX_STAGES * 128 // (bk * DTYPE_BYTES[p.dtype]),
                 (t.smem_bytes - SMEM_RESERVE - fixed) // (stage + 16))
    if stages < 2:
        raise PlanError(f"128x{bn} tiles leave room for {stages} ring stages")
    tiles = cdiv(p.gemm_m, BLOCK_M * cluster) * cdiv(p.F, bn)     # (pair) tiles
    # runtime sizes: one CTA per SM, the tile count read at run time (p.N, H, W only hints)
    grid = (t.num_sms, 1, 1) if p.runtime_sizes else (cluster * min(tiles, t.num_sms // cluster), 1, 1)
    lay = sm100_layout(p, bn, bk, stages, cluster)
    s = Schedule(kernel=KERNEL, target=t.arch, block_m=BLOCK_M, block_n=bn, block_k=bk,
                 threads=THREADS, config=Sm100WsConfig(cluster_m=cluster), stages=stages,
                 grid=grid, smem_bytes=lay.total,
                 reason=("warp-specialized persistent tcgen05 (" + ("1-SM" if cluster == 1 else "CTA pairs: 2x1 "
                         "clusters, cta_group::2 256-row") + f" kind::{tc.KIND[p.dtype]}, {'i32' if p.dtype == 'i8' else 'f32'}"
                        + " accumulators in tensor memory, "
                         "2 accumulator stages), im2col TMA ring, TMA-store epilogue"
                        + (", sizes read at run time" if p.dynamic_spatial else
                           ", batch read at run time" if p.dynamic_batch else "")),
                 scratch_bytes=grid[0] * DESCRIPTORS * DESCRIPTOR_BYTES)
    return require_descriptors(p, s)


# The CTA pair is chosen where the model gives it this much over one SM per tile and the pair
# tiles fill every pair at least twice (large problems; small ones keep 1-SM tiles)
PAIR_GAIN = 0.85
PAIR_MIN_WAVES = 2


def model_us(p: ConvProblem, t: Target, s: Schedule) -> float:
    """The B200 model's main-loop time for schedule s (sm100_block_n's cost): waves of tiles
    times k-steps, each bound by the MMAs or by the operand feed of its SM."""
    row = s.block_k * DTYPE_BYTES[p.dtype]
    cluster = s.config_as(Sm100WsConfig).cluster_m
    waves = cdiv(cdiv(p.gemm_m, BLOCK_M * cluster) * cdiv(p.F, s.block_n), t.num_sms // cluster)
    step = max(BLOCK_M * s.block_n * s.block_k / B200_SM_MACS_PER_NS,
               (BLOCK_M + s.block_n // cluster) * row / SM_FEED_BYTES_PER_NS)
    return waves * step * cdiv(p.gemm_k, s.block_k) / 1e3


def _pair_pays(p: ConvProblem, t: Target, one: Schedule, pair: Schedule) -> bool:
    pair_tiles = cdiv(p.gemm_m, 2 * BLOCK_M) * cdiv(p.F, pair.block_n)
    return pair_tiles >= PAIR_MIN_WAVES * (t.num_sms // 2) and model_us(p, t, pair) < PAIR_GAIN * model_us(p, t, one)


def plan_sm100(p: ConvProblem, t: Target) -> Schedule:
    """sm_100a: the tcgen05 kernel (on CTA pairs for large problems the model says gain from
    the halved filter feed); an RGB stem it declines (C < 8: no TMA rows) on the grouped mma.sync
    kernel as on sm_90a; else the portable kernel with the reason."""
    one = SM100_WS.attempt(p, t)
    if isinstance(one, Declined):
        stem = narrow_stem(p, t)
        if stem is not None:
            return dataclasses.replace(stem, reason=f"{stem.reason}; tcgen05 kernel declined ({one})")
        s = plan_portable(p, t)
        return dataclasses.replace(s, reason=f"portable implicit GEMM: tcgen05 kernel declined ({one})")
    pair = SM100_WS.attempt(p, t, cluster=2)
    if isinstance(pair, Declined) or not _pair_pays(p, t, one, pair):
        return one
    return dataclasses.replace(pair, reason=f"{pair.reason}; chosen over one SM per tile: modelled "
                                            f"{model_us(p, t, pair):.1f} us against {model_us(p, t, one):.1f} us "
                                            "(B200 model, not timed)")


def sm100_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """Schedules the tuner times for p on sm_100a: the default first, then the other variant
    (1-SM or CTA pair) where it plans."""
    out = [plan_sm100(p, t)]
    if out[0].kernel == Kernel.SM100_WS:
        out.append(SM100_WS.attempt(p, t, cluster=1 if out[0].config.cluster_m == 2 else 2))
    return [s for s in out if isinstance(s, Schedule)]


SM100_WS = register(KernelFamily("sm100_ws", Sm100WsConfig, supports, plan_sm100_ws,
                                 emit_sm100_ws, sm100_candidates))
