"""The sm_90a heuristic: which kernel and tile serve a 16-bit conv by default.

Fitted to convc-tune runs over the suite on an H200; the measurements behind each rule are in
bench/NOTES.md ("sm_90a planner rules"). The tuning cache overrides it per problem and device.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from ...lower.nvidia import sm90_ws, tile_scheduler, tma_loader
from ...problem import ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import cdiv, narrow_block_n, tile_counts_for, tiles
from .portable import plan_portable
from .grouped_mma import NARROW_MMA_F, narrow_dense, narrow_stem
from ...kernel_families import Declined
from .sm90_gather import SM90_GATHER
from .sm90_rows import SM90_ROWS
from .sm90_tma import SM90_TMA, narrow_k_steps
from .sm90_ws import SM90_WS, WsTile, swap_block_ms

PINGPONG, COOPERATIVE, STREAMK = Kernel.SM90_WS_PINGPONG, Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_STREAMK
STREAMK_MIN_KTILES = 32
NARROW_K = 48               # 1x1 convs this narrow in K take 256-pixel tiles when they fill the SMs
NARROW_1X1_F = 24           # 1x1 convs this narrow in F take grouped_mma when they fill the SMs
HEAVY_EPILOGUE_MIN_F = 256  # 1x1 convs/GEMMs at least this wide with a transcendental epilogue: 128-channel tiles
HEAVY_SWAP_MIN_K = 512      # ... swapped ones from this deep
HEAVY_TALL_MAX_K = 128      # ... 128-row ping-pong ones up to this deep
# Epilogue program ops that run on the special-function unit or expand into long sequences:
# an epilogue holding one costs ~15 instructions per output element (GELU), several times
# the main loop's issue time per tile at K of a few hundred.
TRANSCENDENTAL = frozenset({"math.erf", "math.exp", "math.exp2", "math.tanh", "math.log", "math.log2",
                            "math.log1p", "math.expm1", "math.powf"})


def transcendental_epilogue(p: ConvProblem) -> bool:
    """The epilogue holds erf, exp, tanh or log (GELU, SiLU): math that can outlast the main loop."""
    return any(ins.op in TRANSCENDENTAL for st in p.epilogue for ins in st.program)


@dataclass(frozen=True)
class Shape:
    """What the rules read of problem p on target t, derived on demand."""

    p: ConvProblem
    t: Target

    @property
    def n(self) -> int:
        return self.t.num_sms

    def tiles(self, bm: int, bn: int) -> int:
        return tiles(self.p, bm, bn)

    @property
    def ktiles(self) -> int:
        return tma_loader.k_tiles(self.p, tma_loader.k_tile_channels(self.p.C, self.p.R * self.p.S) or 64)

    @property
    def wide(self) -> int:
        """The widest tile that wastes few columns: 256 for F a multiple of 256, 160 where
        that beats 128 (F = 320), else 128 (64 for F <= 64)."""
        p = self.p
        return 256 if p.F % 256 == 0 else 160 if fewer_columns_at_160(p) else 128 if p.F > 64 else 64

    @property
    def many_waves(self) -> bool:
        """Two waves of 128-row tiles, or one when K >= 2048."""
        m, n = tile_counts_for(self.p, 128, self.wide)
        return m * n >= 2 * self.n or (self.p.gemm_k >= 2048 and m * n >= self.n)

    @property
    def narrow_k(self) -> bool:
        """A 1x1 conv of at most NARROW_K input channels (one or two 32-channel K steps):
        each tile is little more than a load and a store, so the per-tile cost around them
        decides, and 256-pixel tiles halve it."""
        p = self.p
        return p.R * p.S == 1 and p.gemm_k <= NARROW_K

    @property
    def one_wave_residual(self) -> bool:
        p = self.p
        return p.F % 256 == 0 and p.reads_residual and self.n // 2 <= self.tiles(128, 256) <= self.n

    @property
    def heavy_epilogue(self) -> bool:
        """A 1x1 conv (or GEMM) of at least HEAVY_EPILOGUE_MIN_F channels, F a multiple of
        128, more than NARROW_K deep, whose epilogue holds transcendental math (ConvNeXt's
        GELU MLP GEMMs): the epilogue, not the main loop, sets the time per tile, and
        256-channel tiles (128 accumulators per thread) leave it the fewest registers and
        the longest tail per warpgroup."""
        p = self.p
        return (p.R * p.S == 1 and p.F >= HEAVY_EPILOGUE_MIN_F and p.F % 128 == 0 and not self.narrow_k
                and transcendental_epilogue(p))

    @property
    def streamk_pays(self) -> bool:
        """Under half a wave of 64x128 tiles with a long K and no residual."""
        return (self.tiles(64, 128) < self.n // 2 and self.ktiles >= STREAMK_MIN_KTILES and not self.p.reads_residual
                and tile_scheduler.StreamKWork.why_not(self.tiles(64, 128), self.ktiles, self.n) is None)

    @property
    def pingpong_bn(self) -> int:
        """Ping-pong 64-row tiles: 256 channels while that still gives half a wave (160 for
        F = 320), 64 when even these tiles cannot fill a quarter of the SMs."""
        p = self.p
        bn = 256 if p.F % 256 == 0 and self.tiles(64, 256) >= self.n // 2 else 160 if self.wide == 160 else 128
        return 64 if self.tiles(64, bn) < self.n // 4 else bn


@dataclass(frozen=True)
class Rule:
    name: str
    when: Callable[[Shape], bool]
    kernel: str
    block_m: int
    block_n: int | Callable[[Shape], int]

    def tile(self, c: Shape) -> WsTile:
        return WsTile(self.kernel, self.block_m, self.block_n(c) if callable(self.block_n) else self.block_n)


WIDE = lambda c: c.wide                                 # noqa: E731
# Narrow-K 1x1s are a load and a store per tile, so every wasted column is wasted bandwidth
# and epilogue work: F itself where it is a multiple of 32 (64-byte epilogue panels) and the
# accumulators fit (160 columns), e.g. EfficientNet's 16 -> 96 expansion (128-column tiles
# left a quarter of each tile empty).
EXACT = lambda c: c.p.F if c.p.F % 32 == 0 and c.p.F <= sm90_ws.MAX_ACC_REGS else c.wide    # noqa: E731
NARROW = lambda c: narrow_block_n(c.p.F)               # noqa: E731
RESIDUAL = lambda c: c.p.reads_residual                 # noqa: E731

ONE_WAVE_RESIDUAL = Rule("one wave with a residual", lambda c: c.one_wave_residual, COOPERATIVE, 128, 256)

# The default tile of the persistent kernels: the first rule that holds.
TILE_RULES = (
    Rule("many waves, narrow K, F > 64", lambda c: c.many_waves and c.narrow_k and c.p.F > 64, COOPERATIVE, 256, EXACT),
    Rule("many waves, F <= 128", lambda c: c.many_waves and c.p.F <= 128, PINGPONG, 128, NARROW),
    Rule("many waves, 160-channel tiles", lambda c: c.many_waves and c.wide == 160, PINGPONG, 128, 160),
    Rule("many waves, F > 256", lambda c: c.many_waves and c.wide == 128 and c.p.F > 256, COOPERATIVE, 256, 128),
    Rule("many waves, 256-channel tiles", lambda c: c.many_waves and c.wide == 256 and not RESIDUAL(c), PINGPONG, 64, 256),
    Rule("many waves, otherwise", lambda c: c.many_waves, COOPERATIVE, 128, WIDE),
    Rule("F <= 64", lambda c: c.p.F <= 64, PINGPONG, 128, NARROW),
    Rule("single K step", lambda c: c.ktiles == 1 and c.p.F > 128 and not RESIDUAL(c), COOPERATIVE, 256, WIDE),
    ONE_WAVE_RESIDUAL,                  # swapped tiles staged in the ring first (_one_wave_ring)
    Rule("stream-K", lambda c: c.streamk_pays, STREAMK, 64, 128),
    Rule("otherwise", lambda c: True, PINGPONG, 64, lambda c: c.pingpong_bn),
)


def tile_rule(p: ConvProblem, t: Target) -> Rule:
    c = Shape(p, t)
    return next(r for r in TILE_RULES if r.when(c))




def plan_sm90(p: ConvProblem, t: Target) -> Schedule:
    """sm_90a: RGB stems of up to 3x3 (grouped_mma.narrow_stem) on the row-slab kernel where F
    is a multiple of 32, else with dense convs with F <= 8 (1x1 convs that fill the SMs:
    F <= NARROW_1X1_F) on the grouped tensor-core kernel
    (grouped_mma.narrow_dense); the persistent warp-specialized
    kernels with the tile of TILE_RULES; then swapped
    tiles (channels on the wgmma's M, _swapped_choice) replace it for filters with several
    taps, for 1x1 convs without a residual whose tiles leave SMs idle and for narrow-K 1x1
    convs with F <= 64 that fill them (256-pixel tiles), and a one-wave
    residual layer takes swapped tiles staged in the ring where they fit (_one_wave_ring).
    C a multiple of 32 but not of 64 (e.g. 96) takes the persistent kernels with 32-channel K
    steps (64-byte swizzled rows); the non-persistent kernel needs 64. Convs the im2col TMA
    cannot read go to the row-slab kernel, else the thread-gathered one, else the portable."""
    shape = Shape(p, t)
    stem = narrow_stem(p, t)
    if stem is not None:
        # an RGB stem of up to 3x3: the row-slab kernel where F tiles into 32- or 64-channel
        # blocks (H200, tools/data/rgb_stems.json under convc-tune: EfficientNet's 3x3/2 stem to
        # 32 channels at batch 32 16.2 us against the grouped kernel's 33.7, at batch 1 3.0
        # against 3.3), else the grouped kernel
        rows = SM90_ROWS.attempt(p, t, why_not_tma="an RGB stem's pixels are narrower than 16 bytes")
        return rows if isinstance(rows, Schedule) else stem
    narrow = narrow_dense(p, t, NARROW_1X1_F if shape.many_waves and p.R * p.S == 1 else NARROW_MMA_F)
    if narrow is not None:
        return narrow
    tma = SM90_TMA.attempt(p, t)
    narrow = tma if isinstance(tma, Declined) and narrow_k_steps(p, t) else None
    if isinstance(tma, Declined) and narrow is None:
        why = str(tma)
        if tma_loader.k_tile_channels(p.C, p.R * p.S) is None:
            why = f"{why}; 32-channel steps need C a multiple of 32, or of 8 with one filter tap"
        return _sm90_without_im2col_tma(p, t, why)
    if shape.heavy_epilogue:
        # ping-pong 64x128, or swapped 128-channel tiles spread evenly over the SMs where the
        # main loop is long (K >= HEAVY_SWAP_MIN_K). convc-tune of ConvNeXt-T's four GELU MLP
        # GEMMs at b32 (H200; bench/NOTES.md): 100352x96->384 57.0 us on cooperative 256x128
        # against 48.5 ping-pong 64x128, 25088x192->768 30.6 on ping-pong 64x256 against 28.5,
        # 6272x384->1536 27.2 against 21.0, 1568x768->3072 25.3 against 22.2 and 16.5 swapped
        # K <= HEAVY_TALL_MAX_K: ping-pong 128x128 (100352x96->384: 42.0 us against 46.4 on 64x128,
        # same run; at K = 192 it lost, 36.1 against 28.5)
        # Between the two (HEAVY_TALL_MAX_K < K < HEAVY_SWAP_MIN_K): swapped ping-pong tiles of
        # 64 channels, their pixel count from swap_block_ms (convc-tune, H200, one run:
        # 25088x192->768 27.0 us on 208x64 against 28.7 on ping-pong 64x128, 6272x384->1536
        # 19.4 on 192x64 against 21.2; three consumer warpgroups on 64x128 27.6 and 21.4)
        if p.gemm_k >= HEAVY_SWAP_MIN_K:
            swapped = _swapped_choice(p, t)
            if swapped is not None:
                return swapped
        elif p.gemm_k > HEAVY_TALL_MAX_K:
            bms = swap_block_ms(p, t, 64, sm90_ws.swap_max_pixels(PINGPONG, 64))
            s = SM90_WS.attempt(p, t, tile=WsTile(PINGPONG, bms[0], 64, swap=True)) if bms else None
            if isinstance(s, Schedule):
                return s
        rows = 128 if p.gemm_k <= HEAVY_TALL_MAX_K else 64
        s = SM90_WS.attempt(p, t, tile=WsTile(PINGPONG, rows, 128))
        if isinstance(s, Schedule):
            return s
    rule = tile_rule(p, t)
    tile = rule.tile(shape)
    idle = tiles(p, tile.block_m, tile.block_n) < t.num_sms and not p.reads_residual
    narrow_k_swap = shape.many_waves and shape.narrow_k and p.F <= 64 and not p.reads_residual
    if tile.kernel != STREAMK and ((narrow is None and (p.R * p.S > 1 or idle)) or narrow_k_swap):
        swapped = _swapped_choice(p, t)
        if swapped is not None:
            return swapped
    if rule is ONE_WAVE_RESIDUAL:
        ring = _one_wave_ring(p, t)
        if ring is not None:
            return ring
    s = SM90_WS.attempt(p, t, tile=tile)
    if isinstance(s, Schedule) and s.stages < 3:
        # a 2-stage ring (256-channel tiles with a residual slot): ping-pong 128x128 instead
        s = SM90_WS.attempt(p, t, tile=WsTile(PINGPONG, 128, 128))
    if isinstance(s, Schedule):
        return s
    if narrow is not None:
        return _sm90_without_im2col_tma(p, t, f"{narrow}; 32-channel K steps: {s}")
    return dataclasses.replace(tma, reason=tma.reason + f" (persistent kernel declined: {s})")


def _one_wave_ring(p: ConvProblem, t: Target) -> Schedule | None:
    """One wave of residual tiles (one tile per SM, e.g. r50 1x1/512->2048 at 7x7): swapped
    cooperative tiles of 128 channels with the epilogue staged in the ring, which leaves room
    for 5 stages where staging slots left 3, with the fewest pixel tiles, evenly sized (1568
    pixels: 7 tiles of 224)."""
    m_tiles = cdiv(p.gemm_m, sm90_ws.swap_max_pixels(Kernel.SM90_WS_COOPERATIVE, 128))
    if p.F % 128 or m_tiles * (p.F // 128) > t.num_sms:
        return None
    bm = cdiv(cdiv(p.gemm_m, m_tiles), 16) * 16
    s = SM90_WS.attempt(p, t, tile=WsTile(COOPERATIVE, bm, 128, slots=0, swap=True))
    return s if isinstance(s, Schedule) else None


# Fewest pixels per swapped tile the heuristic takes: below it the wgmma's N is short and the
# swapped tiles measured slower than 64-row tiles.
SWAP_MIN_PIXELS = 96


def _swapped_choice(p: ConvProblem, t: Target) -> Schedule | None:
    """Swapped tiles (channels on the wgmma's M), when their pixel count can be chosen to
    spread the work evenly (swap_block_ms) and stays >= SWAP_MIN_PIXELS: cooperative
    bm x 128 for F a multiple of 128, else ping-pong bm x 64 (also for F <= 64); not for
    other F (e.g. 320, where ping-pong 128x160 is faster)."""
    if p.F % 128 == 0:
        options = [(Kernel.SM90_WS_COOPERATIVE, 128), (Kernel.SM90_WS_PINGPONG, 64)]
    elif p.F <= 64:
        options = [(Kernel.SM90_WS_PINGPONG, 64)]
    else:
        return None
    for kernel, bn in options:
        bms = swap_block_ms(p, t, bn, sm90_ws.swap_max_pixels(kernel, bn))
        if not bms or bms[0] < SWAP_MIN_PIXELS:
            continue
        s = SM90_WS.attempt(p, t, tile=WsTile(kernel, bms[0], bn, swap=True))
        if isinstance(s, Schedule):
            return s
    return None


def _sm90_without_im2col_tma(p: ConvProblem, t: Target, why: str) -> Schedule:
    """Row-slab TMA where input rows are TMA-addressable, else thread-gathered, else portable."""
    rows = SM90_ROWS.attempt(p, t, why_not_tma=why)
    if isinstance(rows, Schedule):
        return rows
    why = f"{why}; {rows}"
    gather = SM90_GATHER.attempt(p, t, why_not_tma=why)
    if isinstance(gather, Schedule):
        return gather
    return dataclasses.replace(plan_portable(p, t), reason=f"portable implicit GEMM: TMA path declined ({why}); {gather}")


def fewer_columns_at_160(p: ConvProblem) -> bool:
    """160-channel tiles cover F with fewer wasted columns than 128-channel ones (F = 320)."""
    return cdiv(p.F, 160) * 160 < cdiv(p.F, 128) * 128
