"""convc-plan-schedule: choose a Schedule for every matched problem.

The one owner of tiling decisions. Reads `convc.problem`, writes `convc.schedule`. Shapes the
planner cannot serve become `convc.decline` (IREE fallback) with the reason.
"""

from __future__ import annotations

import dataclasses
import math

from .ir import ir, attr_to_py, dict_attr, walk_ops
from .attrs import DECLINE_ATTR, PROBLEM_ATTR, SCHEDULE_ATTR  # noqa: F401 (SCHEDULE_ATTR re-exported)
from .problem import ConvProblem, DTYPE_BYTES
from .schedule import Schedule
from .target import Target, get_target
from .tuning import load_cache
from .lower.amd import im2col_addressing, lds_loader
from .lower.nvidia import direct_loads, row_slab, sm90_gather, sm90_rows, sm90_ws, stream_k, tensormap, tile_scheduler, tma_loader, warp_roles


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
        bn = 64 if p.F > 32 else 32 if p.F > 16 else 16     # few channels (an RGB output): fewer idle columns
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


SM90_SMEM_RESERVE = 1024        # barriers and alignment slack inside the one allocation
SPLIT_K_MIN_KTILES = 64
WS_MAX_STAGES = 8
# leading k-tiles of a persistent CTA's first tile that its consumers load with cp.async while
# the tensor maps are written (lower/nvidia/direct_loads.py), when every CTA has one tile (there
# start-up is a large share of the kernel: 5-9% faster) or the filter has one tap (plain row
# copies, short k-loops: 0.5-4% faster with 3-6 tiles per CTA); 3x3 layers with several tiles
# per CTA measured 1-10% slower with them (bench/NOTES.md)
WS_DIRECT_STAGES = 2


# outputs along W per thread (register blocking of input columns and, grouped, filter vectors):
# depthwise convs without multiplier, and grouped ones with a window and >= 8 channels per group
# (bench/NOTES.md)
ROW_PIXELS = 4
# output channels per thread of a grouped conv (its P x V scalar accumulators)
GROUPED_CHANNELS = 4


def plan_grouped(p: ConvProblem, t: Target) -> Schedule:
    """Grouped and depthwise convs: the direct kernel (few channels per output; memory-bound).
    An item is V output channels (16 bytes of channels where they divide the output channels
    of a group, at most GROUPED_CHANNELS for grouped convs) of thread_m pixels along W (one
    pixel for a depthwise conv with a channel multiplier)."""
    fg = p.F // p.groups
    v = _largest_vector(p.F if p.depthwise else fg, p.dtype)
    hwcf = p.filter_layout == "hwcf"
    vc = 1 if p.depthwise or hwcf else _largest_vector(p.C // p.groups, p.dtype)
    rows = p.F == p.C if p.depthwise else (hwcf or (p.R * p.S > 1 and p.C // p.groups >= 8))
    if rows and not (p.depthwise or hwcf):      # outer products: P x V accumulators
        v = min(v, GROUPED_CHANNELS)
    threads, per_thread = (1, 64) if t.backend == "cpu" else (256, 1)
    pw = min(ROW_PIXELS, p.Wo) if rows else 1
    block = threads * per_thread
    grid = (_cdiv(p.N * p.Ho * _cdiv(p.Wo, pw) * (p.F // v), block), 1, 1)
    if grid[0] >= 2**31:
        raise PlanError("too many workgroups")
    kind = ("depthwise" + (f" (multiplier {p.F // p.C})" if p.F != p.C else "") if p.depthwise
            else f"{p.groups} groups of {p.C // p.groups} channels")
    what = f"{pw} pixels x {v} channels" if pw > 1 else f"{v} output channels"
    return Schedule(kernel="direct_grouped", target=t.arch, block_m=block, block_n=v, block_k=vc,
                    thread_m=pw, thread_n=v, threads=threads, vec_a=vc if not p.depthwise else v,
                    vec_b=v, stages=1, grid=grid, smem_bytes=0, subgroup_size=t.subgroup_size,
                    reason=f"direct grouped conv: {kind}, {what} per thread, f32 accumulation"
                           + (", batch read at run time" if p.dynamic_batch else ""))


def _require_tma(p: ConvProblem, t: Target, block_k: int | None = None) -> None:
    """The constraints every im2col-TMA + wgmma kernel shares; PlanError with the reason.
    block_k: the K step's channels (default 64: one 128-byte swizzled row)."""
    if not (t.has_tma and t.has_wgmma):
        raise PlanError(f"{t.arch} has no TMA + wgmma path")
    bk = block_k or tma_loader.CHANNELS_PER_TILE
    if p.C % bk and not (block_k and tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) == bk):
        raise PlanError(f"C={p.C} is not a multiple of {bk} "
                        f"(one {DTYPE_BYTES[p.dtype] * bk}-byte swizzled row per K step)")
    if p.F % 8:
        raise PlanError(f"F={p.F} is not a multiple of 8 (16-byte filter rows)")


def _require_descriptors(p: ConvProblem, s: Schedule) -> Schedule:
    """s, once the driver-exact encoder accepts its activation and filter tensor maps."""
    try:
        tma_loader.tensor_maps(p, s)
    except tensormap.TensorMapError as e:
        raise PlanError(f"TMA descriptor refused: {e}") from None
    return s


def plan_sm90_tma(p: ConvProblem, t: Target) -> Schedule:
    """im2col TMA + wgmma (sm_90a). Raises PlanError with the reason when it cannot serve p."""
    _require_tma(p, t)
    bm, bk = 128, tma_loader.CHANNELS_PER_TILE
    bn = 128 if p.F > 64 else 64
    ktiles = p.gemm_k // bk
    tiles = _tiles(p, bm, bn)
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
                 scratch_bytes=grid[0] * tma_loader.DESCRIPTORS_PER_CTA * tensormap.DESCRIPTOR_BYTES, split_k=split_k)
    return _require_descriptors(p, s)


def plan_sm90_ws(p: ConvProblem, t: Target, kernel: str = "sm90_ws_cooperative", block_m: int = 128,
                 block_n: int | None = None, raster: int = 1, cluster_m: int = 1, slots: int = 1,
                 swap: bool = False) -> Schedule:
    """Warp-specialized persistent TMA + wgmma kernel (cooperative or ping-pong consumers),
    TMA-store epilogue with `slots` staging slots per consumer warpgroup (0: each warpgroup
    stages in a ring stage lent to it per tile, cooperative only); `swap`: channels on
    the wgmma's M, block_m pixels on its N. Raises PlanError with the reason when it cannot
    serve p."""
    bk = tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) or 128 // DTYPE_BYTES[p.dtype]    # 128-byte rows
    _require_tma(p, t, bk)
    bn = block_n or (128 if p.F > 64 else 64)
    try:
        sm90_ws.check_supported(p, kernel, block_m, bn, slots, swap, cluster_m, bk)
    except sm90_ws.WsUnsupported as e:
        raise PlanError(str(e)) from None
    stage = (block_m + bn) * bk * DTYPE_BYTES[p.dtype]
    fixed = sm90_ws.ws_layout(p, kernel, block_m, bn, 0, bk, slots, swap).total
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
    m_tiles = _cdiv(m_tiles, cluster_m)                 # cluster tiles along M
    grid = (cluster_m * min(m_tiles * n_tiles, t.num_sms // cluster_m), 1, 1)
    raster = max(1, min(raster, m_tiles))
    lay = sm90_ws.ws_layout(p, kernel, block_m, bn, stages, bk, slots, swap)
    role = {"sm90_ws_cooperative": "cooperative", "sm90_ws_pingpong": "ping-pong",
            "sm90_ws_streamk": "ping-pong, stream-K"}[kernel]
    scratch = grid[0] * sm90_ws.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES
    if kernel == "sm90_ws_streamk":
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
                 thread_m=64, thread_n=bn, threads=warp_roles.THREADS, vec_a=math.gcd(bk, p.C), vec_b=math.gcd(bk, p.C),
                 stages=stages, grid=grid, smem_bytes=lay.total, subgroup_size=32,
                 reason=f"warp-specialized persistent TMA + wgmma ({role}), TMA-store epilogue"
                        + (f", {cluster_m}x1 cluster with filter multicast" if cluster_m > 1 else "")
                        + (f", {slots} epilogue slots per warpgroup" if slots > 1 else "")
                        + (", epilogue staged in ring stages" if slots == 0 else "")
                        + (", channels on the wgmma M (swapped)" if swap else ""),
                 scratch_bytes=scratch, raster=raster, cluster_m=cluster_m, epilogue_slots=slots, swap_ab=swap)
    if m_tiles * n_tiles <= grid[0] // cluster_m or p.R * p.S == 1:
        s = _with_direct_loads(p, s)
    return _require_descriptors(p, s)


def _with_direct_loads(p: ConvProblem, s: Schedule) -> Schedule:
    """s with WS_DIRECT_STAGES direct prologue loads, as many as its kernel can take (none in
    a cluster or with stream-K: direct_stages_for)."""
    return dataclasses.replace(s, direct_stages=direct_loads.direct_stages_for(
        p, dataclasses.replace(s, direct_stages=WS_DIRECT_STAGES), tma_loader.k_tiles(p, s.block_k)))


def tile_counts_for(p: ConvProblem, block_m: int, block_n: int) -> tuple[int, int]:
    return _cdiv(p.gemm_m, block_m), _cdiv(p.F, block_n)


def plan_sm90_rows(p: ConvProblem, t: Target, why_not_tma: str) -> Schedule:
    """Row-slab TMA + register-A wgmma, persistent and warp-specialized, for convs whose pixels
    TMA cannot address but whose input rows it can (e.g. the 3-channel stem)."""
    if not t.has_wgmma:
        raise PlanError(f"{t.arch} has no wgmma")
    try:
        g = sm90_rows.check_supported(p)
    except (row_slab.RowSlabUnsupported, tensormap.TensorMapError) as e:
        raise PlanError(f"row-slab kernel declined: {e}") from None
    fixed = sm90_rows.RowsLayout(p, g, 0).total
    slot = sm90_rows.RowsLayout(p, g, 1).slot
    stages = min(sm90_rows.MAX_STAGES, (t.smem_bytes - SM90_SMEM_RESERVE - fixed) // (slot + 16)) // 2 * 2
    if stages < 2:
        raise PlanError(f"row-slab kernel declined: two {slot}-byte slab slots do not fit")
    tiles = p.N * p.Ho * (p.F // 64)
    grid = (min(tiles, t.num_sms), 1, 1)
    return Schedule(kernel="sm90_rows_wgmma", target=t.arch, block_m=64 * g.subs, block_n=64, block_k=g.kp,
                    thread_m=64, thread_n=64, threads=warp_roles.THREADS, vec_a=1, vec_b=1, stages=stages, grid=grid,
                    smem_bytes=sm90_rows.RowsLayout(p, g, stages).total, subgroup_size=32,
                    reason=f"row-slab TMA + register-A wgmma, warp-specialized persistent (im2col TMA declined: {why_not_tma})",
                    scratch_bytes=grid[0] * sm90_rows.DESCRIPTORS * tensormap.DESCRIPTOR_BYTES,
                    min_ctas_per_sm=1)     # ptxas ignores setmaxnreg without a known entry register count


def plan_sm90_gather(p: ConvProblem, t: Target, why_not_tma: str) -> Schedule:
    """wgmma with a thread-gathered im2col tile, for convs TMA cannot read (e.g. C = 3)."""
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
                 reason=f"gathered im2col + wgmma (TMA declined: {why_not_tma})",
                 min_ctas_per_sm=2)     # single-buffered: a second CTA's gather overlaps wgmma
    return dataclasses.replace(s, smem_bytes=sm90_gather.gather_smem_bytes(s))


AMD_MAX_STAGES = 3


def plan_amd_lds_mfma(p: ConvProblem, t: Target, block: int | None = None) -> Schedule:
    """gfx942 / gfx950: LDS-direct im2col loader + MFMA (passes/lower/amd). 128x128 tiles, or
    64x64 when 128-tiles would leave CUs idle; block_k = two MFMA K steps; 4 MFMA waves + 2
    loading waves; as many ring stages (2..3) as vmcnt (63 loads in flight) and LDS allow.
    `block` forces the square tile (64 or 128; tests and tuning). Raises PlanError with the
    reason when the loader cannot serve p."""
    if t.backend != "amd" or not (t.lds_dma_bytes and t.mfma_k):
        raise PlanError(f"{t.arch} has no direct-to-LDS loads with MFMA")
    if p.dtype not in ("f16", "bf16"):
        raise PlanError(f"{p.dtype} inputs (MFMA path takes f16/bf16)")
    vec = t.lds_dma_bytes // DTYPE_BYTES[p.dtype]
    bk = 2 * t.mfma_k
    bm = bn = 128
    if _cdiv(p.gemm_m, 128) * _cdiv(p.F, 128) < t.num_sms:
        bm = bn = 64
    if block is not None:
        if block not in (64, 128):
            raise PlanError(f"tile {block} (the MFMA kernel takes 64 or 128)")
        bm = bn = block
    threads = (lds_loader.MFMA_WAVES + lds_loader.LOADING_WAVES) * lds_loader.WAVE
    loads_per_tile = (bm + bn) * bk // (vec * lds_loader.LOADING_WAVES * lds_loader.WAVE)
    stage_bytes = (bm + bn) * bk * DTYPE_BYTES[p.dtype]
    ktiles = _cdiv(p.gemm_k, bk)
    stages = min(AMD_MAX_STAGES, 1 + 63 // loads_per_tile, t.smem_bytes // stage_bytes, max(2, ktiles))
    if stages < 2:
        raise PlanError(f"two {stage_bytes}-byte ring stages do not fit {t.smem_bytes} B of LDS")
    grid = (_cdiv(p.gemm_m, bm) * _cdiv(p.F, bn), 1, 1)
    s = Schedule(kernel="amd_lds_mfma", target=t.arch, block_m=bm, block_n=bn, block_k=bk,
                 thread_m=bm // 2, thread_n=bn // 2, threads=threads, vec_a=vec, vec_b=vec,
                 stages=stages, grid=grid, smem_bytes=stages * stage_bytes, subgroup_size=t.subgroup_size)
    try:
        cfg = lds_loader.loader_config(p, s, t)
    except im2col_addressing.AddressingError as e:
        raise PlanError(f"LDS-direct loader: {e}") from None
    return dataclasses.replace(
        s, reason=(f"LDS-direct im2col ({cfg.subpath}, {t.lds_dma_bytes} B/lane) + MFMA 16x16x{t.mfma_k}, "
                   f"{lds_loader.LOADING_WAVES} loading + {lds_loader.MFMA_WAVES} MFMA waves"))


def plan_f32(p: ConvProblem, t: Target, precision: str) -> Schedule:
    """f32 convs. tf32 (the default): the persistent warp-specialized kernels with TF32 wgmma
    (128-byte rows of 32 channels, or 64-byte rows of 16; no swapped tiles, clusters or direct
    loads, which move 16-bit data), cooperative 128x128 tiles or ping-pong 64-row ones for
    small grids; exact f32 math on the portable kernel where they decline, and always with
    --precision fp32."""
    if precision != "fp32" and t.has_wgmma:
        try:
            return _plan_tf32(p, t)
        except PlanError as why:
            s = plan_portable(p, t)
            return dataclasses.replace(s, reason=f"portable implicit GEMM (f32 inputs, exact f32 math: "
                                                 f"TF32 wgmma kernel declined: {why})")
    s = plan_portable(p, t)
    why = ("f32 inputs, --precision fp32: exact f32 math" if precision == "fp32" else
           "f32 inputs: no TF32 tensor-core kernel on this target, exact f32 math instead")
    return dataclasses.replace(s, reason=f"portable implicit GEMM ({why})")


def _plan_tf32(p: ConvProblem, t: Target) -> Schedule:
    if tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) is None:
        raise PlanError(f"C={p.C} is not a multiple of 16 (one 64-byte swizzled row of f32 per K step; "
                        f"a multiple of 4 with one filter tap)")
    bn = 128 if p.F > 64 else 64
    big = _tiles(p, 128, bn) >= t.num_sms
    kernel, bm = ("sm90_ws_cooperative", 128) if big else ("sm90_ws_pingpong", 64)
    s = plan_sm90_ws(p, t, kernel, bm, bn)
    s = dataclasses.replace(s, direct_stages=0)
    return dataclasses.replace(s, reason=s.reason + ", TF32 wgmma (f32 operands, f32 accumulation)")


def plan_dynamic_batch(p: ConvProblem, t: Target, precision: str = "tf32") -> Schedule:
    """A dynamic batch (p.N is only the planning hint): kernels whose grid, tile walk and
    tensor maps take the batch at run time. On sm_90a the persistent warp-specialized kernel
    with one CTA per SM and plain tiles: ping-pong 64-row tiles (they balance small batches
    and stay close to the best on large ones); no clusters, swapped tiles, stream-K, direct
    prologue loads or ring-staged epilogues, which size their work at compile time. Else the
    portable kernel, with a grid computed from the batch."""
    why = None
    if t.has_wgmma and not (p.dtype == "f32" and precision == "fp32"):
        try:
            if tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) is None:
                raise PlanError(f"C={p.C} does not tile into 64- or 128-byte rows")
            s = plan_sm90_ws(p, t, "sm90_ws_pingpong", 64, 128 if p.F > 64 else 64)
            s = dataclasses.replace(s, grid=(t.num_sms, 1, 1), raster=1, direct_stages=0,
                                    scratch_bytes=t.num_sms * s.scratch_bytes // s.grid[0])
            tf32 = ", TF32 wgmma (f32 operands, f32 accumulation)" if p.dtype == "f32" else ""
            return dataclasses.replace(s, reason=s.reason + tf32 + ", batch read at run time")
        except PlanError as e:
            why = str(e)
    s = plan_portable(p, t)
    exact = ", exact f32 math" if p.dtype == "f32" else ""
    return dataclasses.replace(s, reason=f"portable implicit GEMM{exact}, batch read at run time"
                                         + (f" (persistent kernel declined: {why})" if why else ""))


def plan_schedule_for(p: ConvProblem, t: Target, precision: str = "tf32") -> Schedule:
    """The fastest path that applies, else the portable kernel with the reasons."""
    if p.grouped:
        return plan_grouped(p, t)
    if p.dynamic_batch:
        return plan_dynamic_batch(p, t, precision)
    if p.dtype == "f32":
        return plan_f32(p, t, precision)
    if t.has_tcgen05:
        from .sm100_plan import plan_sm100
        return plan_sm100(p, t)
    if t.has_wgmma:
        return plan_sm90(p, t)
    if t.backend == "amd":
        try:
            return plan_amd_lds_mfma(p, t)
        except PlanError as why:
            s = plan_portable(p, t)
            return dataclasses.replace(s, reason=f"portable implicit GEMM: LDS-direct MFMA path declined ({why})")
    return plan_portable(p, t)


def plan_sm90(p: ConvProblem, t: Target) -> Schedule:
    """sm_90a heuristic, fitted to convc-tune runs over the suite on an H200 (bench/NOTES.md):
    - big problems (2 waves of 128-row tiles, or 1 when K >= 2048): ping-pong 64x256 when F
      is a multiple of 256 (cooperative 128x256 with a residual), ping-pong 128x160 when
      160-channel tiles waste fewer columns (F = 320), cooperative 256x128 for other F > 256,
      ping-pong 128x64 when F <= 128;
    - otherwise ping-pong with 64-row tiles (one warpgroup's epilogue hides under the other's
      main loop, and more tiles balance the SMs), 128-row for F <= 64, 256 channels when that
      still gives half a wave of tiles (160 for F = 320), 64 when even 64x128 tiles cannot
      fill a quarter of the SMs; cooperative 128x256 when a residual layer's 128x256 tiles make
      one wave (swapped 128-channel tiles with the epilogue staged in the ring when they fit,
      _one_wave_ring); stream-K chains (two CTAs per tile, in k-lockstep) when 64x128 tiles fill
      under half the SMs and K is at least 32 k-steps; cooperative 256-row tiles for a single
      K step and F > 128.
    Then swapped tiles (channels on the wgmma's M, _swapped_choice) replace that choice for
    filters with several taps, and for 1x1 convs without a residual whose tiles leave SMs idle.
    C a multiple of 32 but not of 64 (e.g. 96) takes the persistent kernels with 32-channel K
    steps (64-byte swizzled rows); the non-persistent kernel needs 64.
    The tuning cache overrides it per problem and device."""
    try:
        plan_sm90_tma(p, t)
        narrow = None
    except PlanError as why:
        narrow = why if _narrow_k_steps(p, t) else None
        if narrow is None:
            if tma_loader.k_tile_channels(p.C, p.R * p.S) is None:
                why = f"{why}; 32-channel steps need C a multiple of 32, or of 8 with one filter tap"
            return _sm90_without_im2col_tma(p, t, why)
    n = t.num_sms
    one_wave_residual = False
    wide = 256 if p.F % 256 == 0 else 160 if _fewer_columns_at_160(p) else 128 if p.F > 64 else 64
    m128, n128 = tile_counts_for(p, 128, wide)
    if m128 * n128 >= 2 * n or (p.gemm_k >= 2048 and m128 * n128 >= n):
        # F <= 128: ping-pong 128x64 (5-8% ahead of cooperative on every such suite layer:
        # the epilogue, a large share at few channels, hides under the other main loop).
        # F = 320-like: ping-pong 128x160 (unet 3x3/320: 82 us; 256x128 cooperative 109 us).
        # F > 256 otherwise: 256x128 (128 rows per warpgroup) moves the fewest operand
        # bytes per MAC. 256-channel tiles: ping-pong 64x256 (vae 3x3/512: 107 us vs 110 us
        # cooperative 128x256; the strided 1x1/512: 14.3 vs 15.6 us), but cooperative
        # 128x256 with a residual (5% ahead on both residual layers).
        if p.F <= 128:
            choice = ("sm90_ws_pingpong", 128, 64)
        elif wide == 160:
            choice = ("sm90_ws_pingpong", 128, 160)
        elif wide == 128 and p.F > 256:
            choice = ("sm90_ws_cooperative", 256, 128)
        elif wide == 256 and not p.reads_residual:
            choice = ("sm90_ws_pingpong", 64, 256)
        else:
            choice = ("sm90_ws_cooperative", 128, wide)
    elif p.F <= 64:
        choice = ("sm90_ws_pingpong", 128, 64)
    elif _ktiles(p) == 1 and p.F > 128 and not p.reads_residual:
        # a single K step: the kernel streams outputs, and 256-row tiles halve the per-tile
        # work around each store (c24 1x1/144: 7.0 us vs 12.2 ping-pong 64x160, 9.0 gathered)
        choice = ("sm90_ws_cooperative", 256, wide)
    elif p.F % 256 == 0 and p.reads_residual and n // 2 <= _tiles(p, 128, 256) <= n:
        # one wave of 128x256 tiles with a residual: one tile per SM, no residual epilogue
        # queued behind a second tile (r50 1x1/512->2048: 12.1 us vs 13.1 us ping-pong 64x256);
        # swapped tiles staged in the ring first, when they fit (_one_wave_ring)
        choice, one_wave_residual = ("sm90_ws_cooperative", 128, 256), True
    elif (_tiles(p, 64, 128) < n // 2 and _ktiles(p) >= STREAMK_MIN_KTILES and not p.reads_residual
          and _streamk_fits(p, t, 64, 128)):
        # under half a wave of tiles with a long K: two CTAs per tile in k-lockstep chains
        # (tile_scheduler.py). n1 3x3/512 at 7x7 (4 tiles): 11.7 us vs 15.4 ping-pong 64x64
        # and 14.4 split-K x4; s2 5x5/96 (41 tiles, 75 k-steps): 10.7 vs 15.1 us. With 9
        # k-steps the hand-off costs more than it saves (valid 3x3/64: 6.9 vs 5.4 us).
        choice = ("sm90_ws_streamk", 64, 128)
    else:
        bn = 256 if p.F % 256 == 0 and _tiles(p, 64, 256) >= n // 2 else 160 if wide == 160 else 128
        if _tiles(p, 64, bn) < n // 4:
            bn = 64
        choice = ("sm90_ws_pingpong", 64, bn)
    # Swapped tiles for filters with several taps, and for 1x1 convs whose tiles leave SMs
    # idle (no residual): on the many-wave and residual 1x1 layers they measured 2-5% slower
    # in convc-bench (cold L2; bench/NOTES.md v23).
    idle = _tiles(p, choice[1], choice[2]) < n and not p.reads_residual
    if choice[0] != "sm90_ws_streamk" and narrow is None and (p.R * p.S > 1 or idle):
        swapped = _swapped_choice(p, t)
        if swapped is not None:
            return swapped
    if one_wave_residual:
        ring = _one_wave_ring(p, t)
        if ring is not None:
            return ring
    try:
        s = plan_sm90_ws(p, t, *choice)
        if s.stages < 3:
            # 256-channel tiles with a residual slot leave a 2-stage ring: measured slower
            # than ping-pong 128x128 with 3 stages on every such suite layer.
            s = plan_sm90_ws(p, t, "sm90_ws_pingpong", 128, 128)
        return s
    except PlanError as why:
        if narrow is not None:
            return _sm90_without_im2col_tma(p, t, f"{narrow}; 32-channel K steps: {why}")
        tma = plan_sm90_tma(p, t)
        return dataclasses.replace(tma, reason=tma.reason + f" (persistent kernel declined: {why})")


def _one_wave_ring(p: ConvProblem, t: Target) -> Schedule | None:
    """One wave of residual tiles (one tile per SM, e.g. r50 1x1/512->2048 at 7x7): swapped
    cooperative tiles of 128 channels with the epilogue staged in the ring, which leaves room
    for 5 stages where staging slots left 3, with the fewest pixel tiles, evenly sized (1568
    pixels: 7 tiles of 224). H200 (bench/NOTES.md, v24): 10.1 us against 11.3 for
    cooperative 128x256 with staging slots, 10.4-10.7 for 208-pixel tiles (128 tiles)."""
    m_tiles = _cdiv(p.gemm_m, sm90_ws.swap_max_pixels("sm90_ws_cooperative", 128))
    if p.F % 128 or m_tiles * (p.F // 128) > t.num_sms:
        return None
    bm = _cdiv(_cdiv(p.gemm_m, m_tiles), 16) * 16
    try:
        return plan_sm90_ws(p, t, "sm90_ws_cooperative", bm, 128, slots=0, swap=True)
    except PlanError:
        return None


# Fewest pixels per swapped tile the heuristic takes: below it the wgmma's N is short and the
# swapped tiles measured slower than 64-row tiles (r50_l4 3x3/512: 48x128 18.4 us vs 16.9).
SWAP_MIN_PIXELS = 96


def _swapped_choice(p: ConvProblem, t: Target) -> Schedule | None:
    """Swapped tiles (channels on the wgmma's M), when their pixel count can be chosen to
    spread the work evenly (swap_block_ms) and stays >= SWAP_MIN_PIXELS: cooperative
    bm x 128 for F a multiple of 128, else ping-pong bm x 64 (also for F <= 64). H200
    bench (bench/NOTES.md, v23): r50_l3 3x3/256 15.5 -> 14.0 us (96x128: 132 tiles where
    64x256 makes 98), r50_l3 1x1/1024->256 10.1 -> 8.8, dil2 3x3/256 26.8 -> 17.6, vae
    3x3/256 111 -> 107, r50_l4 1x1/2048->512 9.7 -> 9.2 (ping-pong 112x64)."""
    if p.F % 128 == 0:
        options = [("sm90_ws_cooperative", 128), ("sm90_ws_pingpong", 64)]
    elif p.F <= 64:
        options = [("sm90_ws_pingpong", 64)]
    else:
        return None                # e.g. F = 320: ping-pong 128x160 (swapped 208x64: 92 vs 81 us)
    for kernel, bn in options:
        bms = swap_block_ms(p, t, bn, sm90_ws.swap_max_pixels(kernel, bn))
        if not bms or bms[0] < SWAP_MIN_PIXELS:
            continue
        try:
            return plan_sm90_ws(p, t, kernel, bms[0], bn, swap=True)
        except PlanError:
            continue
    return None


def _narrow_k_steps(p: ConvProblem, t: Target) -> bool:
    """C = 32 (mod 64), or any multiple of 8 with one filter tap: the persistent kernels can
    still step K by 32 channels (64 B rows)."""
    if tma_loader.k_tile_channels(p.C, p.R * p.S) != tma_loader.NARROW_CHANNELS_PER_TILE or p.dtype not in ("f16", "bf16"):
        return False
    try:
        _require_tma(p, t, tma_loader.NARROW_CHANNELS_PER_TILE)
    except PlanError:
        return False
    return True


def _sm90_without_im2col_tma(p: ConvProblem, t: Target, why) -> Schedule:
    """Row-slab TMA where input rows are TMA-addressable, else thread-gathered, else portable."""
    try:
        return plan_sm90_rows(p, t, str(why))
    except PlanError as why_rows:
        why = f"{why}; {why_rows}"
    try:
        return plan_sm90_gather(p, t, str(why))
    except PlanError as why2:
        s = plan_portable(p, t)
        return dataclasses.replace(s, reason=f"portable implicit GEMM: TMA path declined ({why}); {why2}")


STREAMK_MIN_KTILES = 32


def _ktiles(p: ConvProblem) -> int:
    return tma_loader.k_tiles(p, tma_loader.k_tile_channels(p.C, p.R * p.S) or 64)


def _streamk_fits(p: ConvProblem, t: Target, bm: int, bn: int) -> bool:
    return tile_scheduler.StreamKWork.why_not(_tiles(p, bm, bn), _ktiles(p), t.num_sms) is None


def _fewer_columns_at_160(p: ConvProblem) -> bool:
    """160-channel tiles cover F with fewer wasted columns than 128-channel ones (F = 320)."""
    return _cdiv(p.F, 160) * 160 < _cdiv(p.F, 128) * 128


def _tiles(p: ConvProblem, bm: int, bn: int) -> int:
    m, n = tile_counts_for(p, bm, bn)
    return m * n


def sm90_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """Schedules the tuner times for p on sm_90a: the heuristic's choice first, then the
    persistent kernel's cooperative and ping-pong tilings, rasterizations, and the
    non-persistent kernel (split-K / 64-row tiles when the grid is small)."""
    out = [plan_sm90(p, t)]
    if out[0].kernel == "sm90_rows_wgmma":
        try:
            out.append(plan_sm90_gather(p, t, "tuning candidate"))
        except PlanError:
            pass
    if out[0].kernel in ("sm90_rows_wgmma", "sm90_gather_wgmma", "portable_igemm"):
        return out
    bns = [bn for bn in (64, 128, 256) if bn == 64 or p.F > bn // 2]
    tries = [("sm90_ws_cooperative", 128, bn, 1) for bn in bns]
    tries += [("sm90_ws_cooperative", 128, 128 if p.F > 64 else 64, r) for r in (4, 16)]
    tries += [("sm90_ws_pingpong", bm, bn, 1) for bm in (64, 128) for bn in bns if bm * bn <= 128 * 128]
    tries = [(*x, 1) for x in tries]
    tries += [("sm90_ws_cooperative", 128, bn, 1, 2) for bn in bns if bn >= 128]
    tries += [("sm90_ws_pingpong", 64, bn, 1, 2) for bn in bns if bn >= 128]
    for kernel, bm, bn, raster, cluster in tries:
        try:
            out.append(plan_sm90_ws(p, t, kernel, bm, bn, raster, cluster))
        except PlanError:
            pass
    try:
        out.append(plan_sm90_tma(p, t))
    except PlanError:
        pass
    if p.F > 64:
        try:               # 128 rows per consumer warpgroup: the filter tile serves 256 rows
            out.append(plan_sm90_ws(p, t, "sm90_ws_cooperative", 256, 128))
        except PlanError:
            pass
    if _tiles(p, 64, 128) < 2 * t.num_sms:
        # stream-K: tiles that cannot fill the SMs evenly share them by K
        for bm, bn in [(64, bn) for bn in bns if bn >= 128] + [(128, 128 if p.F > 64 else 64)]:
            try:
                out.append(plan_sm90_ws(p, t, "sm90_ws_streamk", bm, bn))
            except PlanError:
                pass
    if _tiles(p, 128, 128) > t.num_sms:
        # several tiles per CTA: two staging slots per warpgroup let a tile's residual land
        # (and the previous store drain) during the previous tile's epilogue, at the cost
        # of ring stages
        for kernel, bm, bn in [("sm90_ws_cooperative", 128, bn) for bn in bns if bn >= 128] + \
                [("sm90_ws_pingpong", bm, bn) for bm in (64, 128) for bn in bns if bm * bn <= 128 * 256]:
            try:
                out.append(plan_sm90_ws(p, t, kernel, bm, bn, slots=2))
            except PlanError:
                pass
    # epilogue staged in ring stages (no staging slots): a deeper ring for cooperative tiles
    # whose staging slots cost a stage (128x256: 4 stages instead of 3)
    for bm, bn in [(128, bn) for bn in bns if bn >= 128] + [(256, 128)]:
        try:
            out.append(plan_sm90_ws(p, t, "sm90_ws_cooperative", bm, bn, slots=0))
        except PlanError:
            pass
    for bm in swap_block_ms(p, t, 128, sm90_ws.swap_max_pixels("sm90_ws_cooperative", 128)):
        try:
            out.append(plan_sm90_ws(p, t, "sm90_ws_cooperative", bm, 128, slots=0, swap=True))
        except PlanError:
            pass
    for kernel, bn in (("sm90_ws_cooperative", 128), ("sm90_ws_cooperative", 256),
                       ("sm90_ws_pingpong", 64), ("sm90_ws_pingpong", 128)):
        # swapped tiles: pixel counts per tile that spread the work evenly over the SMs
        for bm in swap_block_ms(p, t, bn, sm90_ws.swap_max_pixels(kernel, bn)):
            for slots in (1, 2) if p.reads_residual and _tiles(p, bm, bn) > t.num_sms else (1,):
                try:
                    out.append(plan_sm90_ws(p, t, kernel, bm, bn, slots=slots, swap=True))
                except PlanError:
                    pass
    if _fewer_columns_at_160(p):
        # 160-channel tiles (64 B epilogue panels) waste fewer columns, e.g. F = 320
        for kernel, bm in (("sm90_ws_cooperative", 256), ("sm90_ws_cooperative", 128),
                           ("sm90_ws_pingpong", 128), ("sm90_ws_pingpong", 64)):
            try:
                out.append(plan_sm90_ws(p, t, kernel, bm, 160))
            except PlanError:
                pass
    if out[0].direct_stages:
        # the default without the consumers' direct loads: its first k-tiles by TMA
        out.append(dataclasses.replace(out[0], direct_stages=0, reason=out[0].reason + ", first k-tiles by TMA"))
    elif out[0].kernel in ("sm90_ws_cooperative", "sm90_ws_pingpong"):
        # ... or with them, where its CTAs have several tiles of a multi-tap filter
        d = _with_direct_loads(p, out[0])
        if d.direct_stages:
            out.append(dataclasses.replace(d, reason=out[0].reason + ", first k-tiles loaded directly"))
    return _unique(out)


# Per-SM rates behind the swapped-tile model (H200 traces, bench/NOTES.md): wgmma MACs per ns
# (800 TFLOP/s over 132 SMs) and operand bytes per ns from L2 (64x128 k-steps ran at 175-190 ns).
SM_MACS_PER_NS = 3030
SM_FEED_BYTES_PER_NS = 140


def swap_block_ms(p: ConvProblem, t: Target, bn: int, max_bm: int, count: int = 2) -> list[int]:
    """Pixel counts (multiples of 16) for swapped tiles of bn channels, best first by the
    busiest SM's main-loop time: its tiles (waves) x one tile's k-step, which is bound by the
    tensor cores (bm x bn MACs) or by the operand feed ((bm + bn) rows), whichever is slower."""
    n_tiles = _cdiv(p.F, bn)
    if 4 * n_tiles * bn > 5 * p.F:
        return []                  # over a quarter of the tile's channels past F
    row = 64 * DTYPE_BYTES[p.dtype]

    def cost(bm):
        tiles = _cdiv(p.gemm_m, bm) * n_tiles
        step = max(bm * bn * 64 / SM_MACS_PER_NS, (bm + bn) * row / SM_FEED_BYTES_PER_NS)
        return (_cdiv(tiles, t.num_sms) * step, tiles)
    return sorted(range(16, max_bm + 1, 16), key=cost)[:count]


def _unique(scheds: list[Schedule]) -> list[Schedule]:
    seen, out = set(), []
    for s in scheds:
        k = knobs_of(s)
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out


def knobs_of(s: Schedule) -> tuple:
    """What distinguishes one candidate from another (the tuning cache stores this). The
    epilogue slot count and swap join only when not at their defaults, and the direct prologue
    loads only when used, so caches written before them still match (a winner measured
    without direct loads stays without them)."""
    base = (s.kernel, s.block_m, s.block_n, s.raster, s.split_k, s.cluster_m)
    extra = (s.epilogue_slots, s.swap_ab)
    direct = (f"direct{s.direct_stages}",) if s.direct_stages else ()
    return base + (extra if extra != (1, False) or direct else ()) + direct


def candidate_schedules(p: ConvProblem, t: Target, precision: str = "tf32") -> list[Schedule]:
    """Every schedule worth timing for p on t, the default first."""
    if p.dtype == "f32" or p.dynamic_batch or p.grouped:
        return [plan_schedule_for(p, t, precision)]
    if t.has_tcgen05:
        from .sm100_plan import sm100_candidates
        return sm100_candidates(p, t)
    if t.has_wgmma:
        return sm90_candidates(p, t)
    return [plan_schedule_for(p, t)]


def choose_schedule(p: ConvProblem, t: Target, options=None) -> Schedule:
    """The default schedule, unless a tuning round forces a candidate or the tuning cache has
    a winner measured for this problem on a device of this target."""
    precision = getattr(options, "precision", "tf32")
    forced = getattr(options, "candidate", None)
    if forced is not None:
        cands = candidate_schedules(p, t, precision)
        if forced < len(cands):
            s = cands[forced]
            return dataclasses.replace(s, reason=f"tuning candidate {forced + 1}/{len(cands)}: {s.reason}")
        return cands[0]
    cache = load_cache(getattr(options, "tuning_cache", None))
    hit = cache.lookup(t.arch, p.name, getattr(options, "tuning_device", None)) if cache else None
    if hit is None or (p.dtype == "f32" and precision == "fp32"):
        # exact f32 math has one schedule: a cache entry, timed on TF32 kernels, cannot apply
        return plan_schedule_for(p, t, precision)
    cands = candidate_schedules(p, t, precision)
    if hit.outdated_by(knobs_of(cands[0])):
        s = cands[0]
        return dataclasses.replace(s, reason=f"{s.reason} (tuning cache entry from {hit.device} predates this default)")
    # an entry from before direct prologue loads names its tile without them: the tile, with
    # whatever prologue the planner gives it now, unless the no-direct variant is a candidate
    legacy = [s for s in cands if list(knobs_of(dataclasses.replace(s, direct_stages=0))) == list(hit.knobs)]
    for s in [s for s in cands if list(knobs_of(s)) == list(hit.knobs)] + legacy:
        return dataclasses.replace(s, reason=f"tuned on {hit.device} ({hit.us:.1f} us, best of {hit.tried}): {s.reason}")
    s = plan_schedule_for(p, t, precision)
    return dataclasses.replace(s, reason=f"{s.reason} (tuning cache entry from {hit.device} names no current candidate)")


def plan_schedule(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-plan-schedule: attach convc.schedule next to each convc.problem."""
    target = get_target(getattr(options, "target", None) or "sm_90a")
    with module.context:
        for exe in walk_ops(module.operation, "flow.executable"):
            if PROBLEM_ATTR not in exe.attributes:
                continue
            prob = ConvProblem.from_dict(attr_to_py(exe.attributes[PROBLEM_ATTR]))
            try:
                sched = choose_schedule(prob, target, options)
            except PlanError as e:
                exe.attributes[DECLINE_ATTR] = ir.StringAttr.get(str(e))
                continue
            exe.attributes[SCHEDULE_ATTR] = dict_attr(sched.to_dict())
    return module
