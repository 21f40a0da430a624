"""The sm_90a heuristic: which kernel and tile serve a 16-bit conv by default."""

from __future__ import annotations

import dataclasses

from ..lower.nvidia import sm90_ws, tile_scheduler, tma_loader
from ..problem import ConvProblem
from ..schedule import Schedule
from ..target import Target
from .common import PlanError, cdiv, tile_counts_for, tiles
from .portable import plan_portable
from .sm90_gather import plan_sm90_gather
from .sm90_rows import plan_sm90_rows
from .sm90_tma import narrow_k_steps, plan_sm90_tma
from .sm90_ws import plan_sm90_ws, swap_block_ms


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
        narrow = why if narrow_k_steps(p, t) else None
        if narrow is None:
            if tma_loader.k_tile_channels(p.C, p.R * p.S) is None:
                why = f"{why}; 32-channel steps need C a multiple of 32, or of 8 with one filter tap"
            return _sm90_without_im2col_tma(p, t, why)
    n = t.num_sms
    one_wave_residual = False
    wide = 256 if p.F % 256 == 0 else 160 if fewer_columns_at_160(p) else 128 if p.F > 64 else 64
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
    elif p.F % 256 == 0 and p.reads_residual and n // 2 <= tiles(p, 128, 256) <= n:
        # one wave of 128x256 tiles with a residual: one tile per SM, no residual epilogue
        # queued behind a second tile (r50 1x1/512->2048: 12.1 us vs 13.1 us ping-pong 64x256);
        # swapped tiles staged in the ring first, when they fit (_one_wave_ring)
        choice, one_wave_residual = ("sm90_ws_cooperative", 128, 256), True
    elif (tiles(p, 64, 128) < n // 2 and _ktiles(p) >= STREAMK_MIN_KTILES and not p.reads_residual
          and _streamk_fits(p, t, 64, 128)):
        # under half a wave of tiles with a long K: two CTAs per tile in k-lockstep chains
        # (tile_scheduler.py). n1 3x3/512 at 7x7 (4 tiles): 11.7 us vs 15.4 ping-pong 64x64
        # and 14.4 split-K x4; s2 5x5/96 (41 tiles, 75 k-steps): 10.7 vs 15.1 us. With 9
        # k-steps the hand-off costs more than it saves (valid 3x3/64: 6.9 vs 5.4 us).
        choice = ("sm90_ws_streamk", 64, 128)
    else:
        bn = 256 if p.F % 256 == 0 and tiles(p, 64, 256) >= n // 2 else 160 if wide == 160 else 128
        if tiles(p, 64, bn) < n // 4:
            bn = 64
        choice = ("sm90_ws_pingpong", 64, bn)
    # Swapped tiles for filters with several taps, and for 1x1 convs whose tiles leave SMs
    # idle (no residual): on the many-wave and residual 1x1 layers they measured 2-5% slower
    # in convc-bench (cold L2; bench/NOTES.md v23).
    idle = tiles(p, choice[1], choice[2]) < n and not p.reads_residual
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
    m_tiles = cdiv(p.gemm_m, sm90_ws.swap_max_pixels("sm90_ws_cooperative", 128))
    if p.F % 128 or m_tiles * (p.F // 128) > t.num_sms:
        return None
    bm = cdiv(cdiv(p.gemm_m, m_tiles), 16) * 16
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
    return tile_scheduler.StreamKWork.why_not(tiles(p, bm, bn), _ktiles(p), t.num_sms) is None


def fewer_columns_at_160(p: ConvProblem) -> bool:
    """160-channel tiles cover F with fewer wasted columns than 128-channel ones (F = 320)."""
    return cdiv(p.F, 160) * 160 < cdiv(p.F, 128) * 128

