"""sm_90a: the warp-specialized persistent TMA + wgmma kernels (lower/nvidia/sm90_ws.py):
cooperative, ping-pong and stream-K consumers, clusters, swapped tiles, epilogue slots and
direct prologue loads."""

from __future__ import annotations

from dataclasses import dataclass

from ...lower.nvidia import direct_loads, stream_k, sm90_ws, tensormap, tile_scheduler, tma_loader, warp_roles
from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import Sm90WsConfig
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import SM90_SMEM_RESERVE, PlanError, cdiv, require_descriptors, tile_counts_for
from ...lower.nvidia.sm90_ws import emit_sm90_ws
from ...kernel_families import KernelFamily, register
from .sm90_tma import tma_unsupported

WS_MAX_STAGES = 8
# leading k-tiles of a persistent CTA's first tile that its consumers load with cp.async while
# the tensor maps are written (lower/nvidia/direct_loads.py), when every CTA has one tile (there
# start-up is a large share of the kernel) or the filter has one tap (plain row copies, short
# k-loops); not for multi-tap filters with several tiles per CTA (bench/NOTES.md, planner rules)
WS_DIRECT_STAGES = 2


@dataclass(frozen=True)
class WsTile:
    """One configuration of the persistent kernels: plan_sm90_ws's arguments, as data."""

    kernel: str = Kernel.SM90_WS_COOPERATIVE
    block_m: int = 128
    block_n: int | None = None          # None: 128 channels for F > 64, else 64
    raster: int = 1
    cluster_m: int = 1
    slots: int = 1
    swap: bool = False
    consumers: int = 2                  # consumer warpgroups (3, 4: ping-pong, heavy epilogues)


def k_step_channels(p: ConvProblem) -> int:
    """Channels per K step: 128- or 64-byte swizzled rows (tma_loader.k_tile_channels)."""
    return tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) or 128 // DTYPE_BYTES[p.dtype]


def supports(p: ConvProblem, t: Target) -> str | None:
    """What every tile of the persistent kernels needs (the tiles add their own limits)."""
    return tma_unsupported(p, t, k_step_channels(p))


def plan_sm90_ws(p: ConvProblem, t: Target, kernel: str = Kernel.SM90_WS_COOPERATIVE, block_m: int = 128,
                 block_n: int | None = None, raster: int = 1, cluster_m: int = 1, slots: int = 1,
                 swap: bool = False, consumers: int = 2) -> Schedule:
    """Warp-specialized persistent TMA + wgmma kernel (cooperative or ping-pong consumers),
    TMA-store epilogue with `slots` staging slots per consumer warpgroup (0: each warpgroup
    stages in a ring stage lent to it per tile, cooperative only); `swap`: channels on
    the wgmma's M, block_m pixels on its N. Raises PlanError with the reason when it cannot
    serve p."""
    bk = k_step_channels(p)
    why = supports(p, t)
    if why:
        raise PlanError(why)
    bn = block_n or (128 if p.F > 64 else 64)
    try:
        sm90_ws.check_supported(p, kernel, block_m, bn, slots, swap, cluster_m, bk, consumers)
    except sm90_ws.WsUnsupported as e:
        raise PlanError(str(e)) from None
    stage = (block_m + bn) * bk * DTYPE_BYTES[p.dtype]
    fixed = sm90_ws.ws_layout(p, kernel, block_m, bn, 0, bk, slots, swap, consumers).total
    # the same bytes in flight with 64-byte K rows: twice the stages
    stages = min(WS_MAX_STAGES * 128 // (bk * DTYPE_BYTES[p.dtype]),
                 (t.smem_bytes - SM90_SMEM_RESERVE - fixed) // (stage + 16))
    if stages < 2:
        raise PlanError(f"{block_m}x{bn} tiles leave room for {stages} stages")
    if slots == 0 and stages < 3:
        # a warpgroup hands its lent stage back after the next tile's first k-step, which
        # needs a third stage
        raise PlanError(f"epilogue staged in a {stages}-stage ring")
    if cluster_m not in (1, 2) or (bn // cluster_m) % 8:
        raise PlanError(f"cluster {cluster_m}x1 with block_n={bn}")
    m_tiles, n_tiles = tile_counts_for(p, block_m, bn)
    m_tiles = cdiv(m_tiles, cluster_m)                 # cluster tiles along M
    grid = (cluster_m * min(m_tiles * n_tiles, t.num_sms // cluster_m), 1, 1)
    raster = max(1, min(raster, m_tiles))
    lay = sm90_ws.ws_layout(p, kernel, block_m, bn, stages, bk, slots, swap, consumers)
    scratch = grid[0] * sm90_ws.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES
    if kernel == Kernel.SM90_WS_STREAMK:
        if cluster_m != 1:
            raise PlanError("stream-K with a cluster")
        if m_tiles * n_tiles >= 1 << 16:
            raise PlanError(f"stream-K over {m_tiles * n_tiles} tiles (flags carry 16-bit tile indices)")
        why = tile_scheduler.StreamKWork.why_not(m_tiles * n_tiles, tma_loader.k_tiles(p, bk), t.num_sms)
        if why:
            raise PlanError(f"stream-K: {why}")
        grid = (tile_scheduler.StreamKWork.grid_for(m_tiles * n_tiles, t.num_sms), 1, 1)
        scratch = stream_k.streamk_scratch(grid[0], block_m, bn, grid[0] * sm90_ws.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES).total
    s = Schedule(kernel=kernel, target=t.arch, block_m=block_m, block_n=bn, block_k=bk,
                 threads=warp_roles.threads_for(consumers), stages=stages, grid=grid, smem_bytes=lay.total,
                 reason=f"warp-specialized persistent TMA + wgmma ({Kernel(kernel).role.value}), TMA-store epilogue"
                        + (f", {cluster_m}x1 cluster with filter multicast" if cluster_m > 1 else "")
                        + (f", {slots} epilogue slots per warpgroup" if slots > 1 else "")
                        + (", epilogue staged in ring stages" if slots == 0 else "")
                        + (", channels on the wgmma M (swapped)" if swap else "")
                        + (f", {consumers} consumer warpgroups" if consumers != 2 else ""),
                 scratch_bytes=scratch,
                 config=Sm90WsConfig(raster=raster, cluster_m=cluster_m, epilogue_slots=slots, swap_ab=swap,
                                     late_channel_ops=kernel != Kernel.SM90_WS_STREAMK and
                                     sm90_ws.consumer_registers(p, kernel, block_m, bn, swap)
                                     > sm90_ws.channel_operand_budget(consumers),
                                     consumers=consumers))
    if m_tiles * n_tiles <= grid[0] // cluster_m or p.R * p.S == 1:
        s = with_direct_loads(p, s)
    return require_descriptors(p, s)


def plan_tile(p: ConvProblem, t: Target, tile: WsTile = WsTile()) -> Schedule:
    return plan_sm90_ws(p, t, tile.kernel, tile.block_m, tile.block_n, tile.raster, tile.cluster_m, tile.slots, tile.swap,
                        tile.consumers)


def with_direct_loads(p: ConvProblem, s: Schedule) -> Schedule:
    """s with WS_DIRECT_STAGES direct prologue loads, as many as its kernel can take (none in
    a cluster or with stream-K: direct_stages_for)."""
    return s.with_config(direct_stages=direct_loads.direct_stages_for(
        p, s.with_config(direct_stages=WS_DIRECT_STAGES), tma_loader.k_tiles(p, s.block_k)))


# Per-SM rates behind the swapped-tile model (H200 traces, bench/NOTES.md): wgmma MACs per ns
# (800 TFLOP/s over 132 SMs) and operand bytes per ns from L2 (64x128 k-steps ran at 175-190 ns).
SM_MACS_PER_NS = 3030
SM_FEED_BYTES_PER_NS = 140


def swap_block_ms(p: ConvProblem, t: Target, bn: int, max_bm: int, count: int = 2) -> list[int]:
    """Pixel counts (multiples of 16) for swapped tiles of bn channels, best first by the
    busiest SM's main-loop time: its tiles (waves) x one tile's k-step, which is bound by the
    tensor cores (bm x bn MACs) or by the operand feed ((bm + bn) rows), whichever is slower."""
    n_tiles = cdiv(p.F, bn)
    if 4 * n_tiles * bn > 5 * p.F:
        return []                  # over a quarter of the tile's channels past F
    row = 64 * DTYPE_BYTES[p.dtype]

    def cost(bm):
        tiles = cdiv(p.gemm_m, bm) * n_tiles
        step = max(bm * bn * 64 / SM_MACS_PER_NS, (bm + bn) * row / SM_FEED_BYTES_PER_NS)
        return (cdiv(tiles, t.num_sms) * step, tiles)
    return sorted(range(16, max_bm + 1, 16), key=cost)[:count]


SM90_WS = register(KernelFamily("sm90_ws", Sm90WsConfig, supports, plan_tile, emit_sm90_ws))
