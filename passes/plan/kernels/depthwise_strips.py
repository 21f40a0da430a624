"""Depthwise convs (channel multiplier 1, stride 1, f16/bf16) on tensor cores with 16 images as
the mma rows: the depthwise_strips family (lower/nvidia/depthwise_strips.py, geometry in
lower/nvidia/depthwise_strips_geometry.py).

TMA targets (sm_90a runs it, sm_100a compiles it). Its items are 16 images x L output rows, so
it is for batches of 16 and more; the planner takes it for 7+ column windows there (rule:
prefers_strips), where the SIMT kernels are bound by their ~25 packed FMAs per output.
"""

from __future__ import annotations

from ...kernel_configs import DepthwiseStripsConfig
from ...lower.nvidia import depthwise_strips, tensormap
from ...lower.nvidia.depthwise_strips_geometry import (CG, DepthwiseStrips, DepthwiseStripsUnsupported,
                                                      depthwise_strips as strips_geometry)
from ...problem import DTYPE_BYTES, ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import CTA_SMEM_RESERVE, SM_REGISTERS, SM_SMEM, PlanError, accepted, cdiv
from ...lower.nvidia.depthwise_strips import emit_depthwise_strips
from ...kernel_families import KernelFamily, register

STAGES = 5                   # input-row slots (3 rows in flight: LAG = 2)
MIN_BATCH = 16               # one item's images: below, mma rows idle
MIN_WINDOW = 7               # window columns from which the rule takes this kernel
MIN_OUTPUTS_PER_SM = 16_384  # the rule's smallest grid (outputs per SM)


def supports(p: ConvProblem, t: Target) -> str | None:
    if not (t.backend == "nvidia" and t.has_tma):
        return f"{t.arch} has no TMA"
    try:
        strips_geometry(p, _channels(p), 1, STAGES)
    except (DepthwiseStripsUnsupported, tensormap.TensorMapError) as why:
        return str(why)
    return None


def _channels(p: ConvProblem) -> int:
    """The channel block: a 64-byte pixel span (8 warps) where C allows, else 32 bytes (4)."""
    per64 = 64 // DTYPE_BYTES.get(p.dtype, 2)
    return per64 if p.C % per64 == 0 else per64 // 2


def registers(g: DepthwiseStrips) -> int:
    """A per-thread register estimate: the ring, the B registers, gathers and A fragments in
    flight, addresses (ptxas on sm_90a, 7x7 with 4 channels per warp: ~230)."""
    return g.R * CG * 4 + 2 * g.R * CG + 64


def ctas_per_sm(g: DepthwiseStrips) -> int:
    regs = -(-registers(g) // 8) * 8
    return max(1, min(SM_SMEM // (g.smem_bytes + CTA_SMEM_RESERVE), SM_REGISTERS // (g.threads * regs)))


def strip_rows(p: ConvProblem, t: Target, channels: int) -> list[int]:
    """Rows per strip, best first: a CTA runs its items one after another and each costs its
    L + R - 1 input rows, so the time is ~ rounds x (L + R - 1), rounds = items over resident
    CTAs (fewer items on a tie). ConvNeXt 7x7 56 px at batch 32 on an H100 (bench/NOTES.md):
    L = 19 (126 items, one round) 21.3 us, 28 (84) 28.2, 14 (168, two rounds) 32.3."""
    scored = []
    for rows in range(1, p.Ho + 1):
        if rows > 1 and cdiv(p.Ho, rows) == cdiv(p.Ho, rows - 1):
            continue                      # as many strips as with a row fewer: more steps each
        g = strips_geometry(p, channels, rows, STAGES)
        rounds = cdiv(g.items, t.num_sms * ctas_per_sm(g))
        scored.append((rounds * g.steps, g.items, rows))
    return [rows for *_, rows in sorted(scored)]


def plan_depthwise_strips(p: ConvProblem, t: Target, rows: int | None = None,
                          channels: int | None = None) -> Schedule:
    why = supports(p, t)
    if why:
        raise PlanError(why)
    channels = channels or _channels(p)
    try:
        rows = rows or strip_rows(p, t, channels)[0]
        g = strips_geometry(p, channels, rows, STAGES)
    except (DepthwiseStripsUnsupported, tensormap.TensorMapError) as e:
        raise PlanError(str(e)) from None
    ctas = ctas_per_sm(g)
    grid = max(1, min(g.items, ctas * t.num_sms))
    return Schedule(kernel=Kernel.DEPTHWISE_STRIPS, target=t.arch, block_m=16 * 8, block_n=g.channels,
                    block_k=16, threads=g.threads, stages=STAGES, grid=(grid, 1, 1), smem_bytes=g.smem_bytes,
                    config=DepthwiseStripsConfig(g.channels, g.rows, ctas),
                    scratch_bytes=grid * depthwise_strips.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES,
                    reason=(f"depthwise on tensor cores, 16 images as the mma rows (each input row's fragments "
                            f"feed all {p.R} filter rows; mma.sync m16n8k16, f32 accumulation): {g.describe()}, "
                            f"{ctas} CTAs per SM"))


def prefers_strips(p: ConvProblem, t: Target) -> bool:
    """Whether the planner takes this kernel: windows of MIN_WINDOW+ columns at a batch of
    MIN_BATCH+, images of 2R+ output rows (a strip re-reads R - 1 rows above its own) and
    MIN_OUTPUTS_PER_SM+ outputs per SM (each item's R - 1 extra rows and its per-row barrier
    need enough rows to spread over). H100, strips against the direct kernel (bench/NOTES.md):
    ConvNeXt-T 7x7 at batch 32: 56 px 21.7 against 31.2 us, 28 px 17.1 / 17.4, 14 px 9.9 / 11.2
    (18k outputs per SM), 7 px 7.2 / 5.7; 56 px at batch 16/24/64 14.8/19.6/41.8 against
    18.4/26.5/57.0; but 7x7 at 33 px x 48 channels, batch 20, 7.9 / 6.2 and at 29 x 31 px x 32
    channels, batch 32, 5.9 / 5.3 (7-8k outputs per SM)."""
    if not (p.S >= MIN_WINDOW and p.N >= MIN_BATCH and p.Ho >= 2 * p.R):
        return False
    return p.N * p.Ho * p.Wo * p.C >= MIN_OUTPUTS_PER_SM * t.num_sms and supports(p, t) is None


def strips_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """Tuning candidates: the three best strip heights of each channel block."""
    if supports(p, t):
        return []
    picked = []
    for channels in sorted({_channels(p), 16 // DTYPE_BYTES[p.dtype] * 2}, reverse=True):
        if p.C % channels:
            continue
        for rows in strip_rows(p, t, channels)[:3]:
            picked.append(dict(rows=rows, channels=channels))
    return accepted(lambda p_, t_, kw: plan_depthwise_strips(p_, t_, **kw), p, t, picked)


DEPTHWISE_STRIPS = register(KernelFamily("depthwise_strips", DepthwiseStripsConfig, supports, plan_depthwise_strips,
                                         emit_depthwise_strips, strips_candidates))
