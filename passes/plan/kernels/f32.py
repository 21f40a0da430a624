"""f32 convs (TF32 wgmma or exact f32 math), dynamic batches and runtime image sizes: fixed
configurations of the persistent sm_90a kernel, else the portable kernel."""

from __future__ import annotations

import dataclasses

from ...lower.nvidia import tma_loader
from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import narrow_block_n, tiles
from .grouped_mma import narrow_dense, narrow_stem
from .portable import plan_portable
from ...kernel_families import Declined
from .sm90_gather import SM90_GATHER
from .sm90_rows import SM90_ROWS
from .sm90_ws import SM90_WS, WsTile
from ..tuning import unique_by_knobs


def plan_f32(p: ConvProblem, t: Target, precision: str) -> Schedule:
    """f32 convs. tf32 (the default): the persistent warp-specialized kernels with TF32 wgmma
    (128-byte rows of 32 channels, or 64-byte rows of 16; no swapped tiles, clusters or direct
    loads, which move 16-bit data), cooperative 128x128 tiles or ping-pong 64-row ones for
    small grids; sm_100a: the tcgen05 kernel with kind::tf32 MMAs; exact f32 math on the
    portable kernel where they decline, and always with --precision fp32."""
    if precision != "fp32" and t.has_wgmma:
        s = _plan_tf32(p, t)
        if isinstance(s, Schedule):
            return s
        return _portable(p, t, f"portable implicit GEMM (f32 inputs, exact f32 math: TF32 wgmma kernel declined: {s})")
    if precision != "fp32" and t.has_tcgen05:
        # sm_100a: the tcgen05 kernel with kind::tf32 MMAs (compile-only: no Blackwell was available)
        from .sm100_ws import SM100_WS
        s = SM100_WS.attempt(p, t)
        if isinstance(s, Schedule):
            return s
        return _portable(p, t, f"portable implicit GEMM (f32 inputs, exact f32 math: tcgen05 kernel declined: {s})")
    why = ("f32 inputs, --precision fp32: exact f32 math" if precision == "fp32" else
           "f32 inputs: no TF32 tensor-core kernel on this target, exact f32 math instead")
    return _portable(p, t, f"portable implicit GEMM ({why})")


def _plan_tf32(p: ConvProblem, t: Target) -> Schedule | Declined:
    if tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) is None:
        why = (f"C={p.C} is not a multiple of 16 (one 64-byte swizzled row of f32 per K step; "
               f"a multiple of 4 with one filter tap)")
        # the RGB stem: its input rows on the row-slab kernel with TF32 register-A wgmma
        # (channel_pad.row_slab_stem leaves such convs unpadded)
        rows = SM90_ROWS.attempt(p, t, why_not_tma=why)
        if isinstance(rows, Schedule):
            return dataclasses.replace(rows, reason=rows.reason + ", TF32 wgmma (f32 operands, f32 accumulation)")
        return Declined(f"{why}; {rows}")
    bn = 128 if p.F > 64 else narrow_block_n(p.F)
    big = tiles(p, 128, bn) >= t.num_sms
    kernel, bm = (Kernel.SM90_WS_COOPERATIVE, 128) if big else (Kernel.SM90_WS_PINGPONG, 64)
    s = SM90_WS.attempt(p, t, tile=WsTile(kernel, bm, bn))
    if isinstance(s, Declined):
        return s
    return dataclasses.replace(s.with_config(direct_stages=0), reason=s.reason + ", TF32 wgmma (f32 operands, f32 accumulation)")


def f32_candidates(p: ConvProblem, t: Target) -> list[Schedule]:
    """TF32 schedules convc-tune times on sm_90a: the default, then cooperative and ping-pong
    tiles of 64-256 rows by 64-256 channels (no swapped tiles or direct loads, as for the
    default), rasterizations, two staging slots and 2x1 clusters. Other targets, and convs the
    persistent kernel does not take (RGB stems), have the default alone."""
    default = plan_f32(p, t, "tf32")
    if not t.has_wgmma or default.kernel not in (Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_PINGPONG):
        return [default]
    bns = sorted({narrow_block_n(p.F) if p.F <= 64 else 64, *(bn for bn in (128, 256) if p.F > bn // 2)})
    tiles_ = [WsTile(Kernel.SM90_WS_COOPERATIVE, bm, bn) for bm in (128, 256) for bn in bns]
    tiles_ += [WsTile(Kernel.SM90_WS_PINGPONG, bm, bn) for bm in (64, 128) for bn in bns if bm * bn <= 128 * 128]
    tiles_ += [WsTile(Kernel.SM90_WS_COOPERATIVE, 128, bns[-1], raster=r) for r in (4, 16)]
    tiles_ += [WsTile(k, bm, bn, slots=2) for k, bm, bn in ((Kernel.SM90_WS_COOPERATIVE, 128, bns[-1]),
                                                          (Kernel.SM90_WS_PINGPONG, 64, bns[-1]))]
    # clusters of two CTAs along M multicasting the filter tile: a TF32 k-step moves twice the
    # bytes of a 16-bit one per MAC, and the L2 feed is what the TF32 tiles wait on
    tiles_ += [WsTile(k, 128, bn, cluster_m=2) for k in (Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_PINGPONG)
               for bn in bns if k == Kernel.SM90_WS_COOPERATIVE or bn <= 64]
    out = [default]
    for tile in tiles_:
        s = SM90_WS.attempt(p, t, tile=tile)
        if isinstance(s, Declined) or s.stages < 3:        # a 2-stage ring cannot overlap loads
            continue
        out.append(dataclasses.replace(s.with_config(direct_stages=0),
                                       reason=s.reason + ", TF32 wgmma (f32 operands, f32 accumulation)"))
    return unique_by_knobs(out)


def plan_dynamic_batch(p: ConvProblem, t: Target, precision: str = "tf32") -> Schedule:
    """A dynamic batch (p.N is only the planning hint): kernels whose grid, tile walk and
    tensor maps take the batch at run time. On sm_90a the persistent warp-specialized kernel
    with one CTA per SM and plain tiles: ping-pong 64-row tiles (they balance small batches
    and stay close to the best on large ones); no clusters, swapped tiles, stream-K, direct
    prologue loads or ring-staged epilogues, which size their work at compile time. Dense
    f16/bf16 convs with F <= 8 and RGB stems of up to 3x3 take the grouped tensor-core kernel
    as one group, as static ones do (grouped_mma.narrow_dense, narrow_stem). Convs whose
    channel rows TMA cannot tile (other stems: C = 3 or 4) take the thread-gathered im2col +
    wgmma kernel, one CTA per output tile, its grid computed from the batch: on the portable
    kernel ResNet-50's 7x7 stem took 743 us at batch 32 where the static build's row-slab
    kernel takes 28 (convc-e2e record, H200). On sm_100a the tcgen05 kernel with 1-SM tiles
    (compile-only). Else the portable kernel, with a grid computed from the batch."""
    narrow = (narrow_dense(p, t) or narrow_stem(p, t)) if t.has_wgmma else None
    if narrow is not None:
        return narrow
    return _plan_runtime_sizes(p, t, precision, "batch read at run time")


def plan_runtime_spatial(p: ConvProblem, t: Target, precision: str = "tf32") -> Schedule:
    """Runtime image sizes (p.H and p.W are only the planning hints; the batch may be dynamic
    too): as a dynamic batch (_plan_runtime_sizes), the persistent kernel also writing the
    im2col map's H and W (and their strides) in-kernel; the narrow-channel and grouped tile
    kernels, which size their work at compile time, are not used (but for RGB stems, the grouped
    tensor-core kernel walks its tiles over the runtime image): pooling windows, depthwise and
    grouped convs take the direct kernel, whose items and grid follow the runtime extents."""
    if p.grouped:          # pooling windows, depthwise and grouped convs: the direct kernel
        from .direct_grouped import plan_grouped, plan_pool
        s = plan_pool(p, t) if p.pool else plan_grouped(p, t)
        return dataclasses.replace(s, reason=f"{s.reason}, sizes read at run time")
    # RGB stems of up to 3x3: the grouped tensor-core kernel as one group, its tiles walked over
    # the runtime image (as static ones; the gathered kernel took 104 us for a YOLO stem at
    # 4 x 640 x 640 where the static build's grouped kernel took 32.5: H200, csp_dynhw_b4_640)
    stem = narrow_stem(p, t) if t.has_wgmma else None
    if stem is not None:
        return dataclasses.replace(stem, reason=f"{stem.reason}, sizes read at run time")
    return _plan_runtime_sizes(p, t, precision, "sizes read at run time")


def _plan_runtime_sizes(p: ConvProblem, t: Target, precision: str, what: str) -> Schedule:
    """The kernels of runtime sizes, `what` naming them in the reason: on sm_100a the tcgen05
    kernel's 1-SM tiles; on sm_90a the persistent
    ping-pong kernel (16-bit and TF32 operands whose channels tile into 64- or 128-byte rows),
    else for 16-bit convs the gathered-im2col kernel (not for channel windows), else the
    portable kernel (8-bit operands too), their grids computed from the runtime sizes."""
    why = None
    if t.has_tcgen05 and not (p.dtype == "f32" and precision == "fp32"):
        # sm_100a: the tcgen05 kernel's 1-SM tiles, its tile count and maps from the runtime
        # sizes as on sm_90a (compile-only)
        from .sm100_ws import SM100_WS
        s = SM100_WS.attempt(p, t)
        if isinstance(s, Schedule):
            return s
        why = f"tcgen05 kernel declined: {s}"
    if t.has_wgmma and DTYPE_BYTES[p.dtype] > 1 and not (p.dtype == "f32" and precision == "fp32"):
        s = _plan_persistent_dynamic(p, t)
        if isinstance(s, Schedule):
            return dataclasses.replace(s, reason=f"{s.reason}, {what}")
        why = str(s)
        if (p.dtype in ("f16", "bf16") and tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) is None
                and not p.channel_windows):
            g = SM90_GATHER.attempt(p, t, why_not_tma=why)
            if isinstance(g, Schedule):
                return dataclasses.replace(g, reason=f"{g.reason}, {what}")
            why = f"{why}; {g}"
    exact = ", exact f32 math" if p.dtype == "f32" else ", i32 sums" if p.dtype == "i8" else ""
    return _portable(p, t, f"portable implicit GEMM{exact}, {what}"
                           + (f" ({why})" if why and why.startswith("tcgen05") else
                              f" (persistent kernel declined: {why})" if why else ""))


def _plan_persistent_dynamic(p: ConvProblem, t: Target) -> Schedule | Declined:
    if tma_loader.k_tile_channels(p.C, p.R * p.S, p.dtype) is None:
        return Declined(f"C={p.C} does not tile into 64- or 128-byte rows")
    # 64-row tiles balance small batches; a conv with runtime image sizes and at most 64 output
    # channels (a CNN's early, high-resolution layers) takes 128 rows, as static builds of such
    # layers at detection resolutions do (YOLO-style 3x3s at 160 px: 26 us on 64-row tiles, 17 on
    # the static build's 128-row ones; H200, csp e2e)
    rows = 128 if p.dynamic_spatial and not p.dynamic_batch and p.F <= 64 else 64
    s = SM90_WS.attempt(p, t, tile=WsTile(Kernel.SM90_WS_PINGPONG, rows, 128 if p.F > 64 else narrow_block_n(p.F)))
    if isinstance(s, Declined):
        return s
    tf32 = ", TF32 wgmma (f32 operands, f32 accumulation)" if p.dtype == "f32" else ""
    return dataclasses.replace(s.with_config(raster=1, direct_stages=0), grid=(t.num_sms, 1, 1),
                               scratch_bytes=t.num_sms * s.scratch_bytes // s.grid[0],
                               reason=s.reason + tf32)


def _portable(p: ConvProblem, t: Target, reason: str) -> Schedule:
    return dataclasses.replace(plan_portable(p, t), reason=reason)
