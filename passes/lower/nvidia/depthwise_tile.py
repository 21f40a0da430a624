"""Tile geometry of the TMA depthwise kernel (depthwise_tma.py); the planner sizes schedules
with it, so planner and lowering agree through this one pure function of (problem, knobs).

A tile is `rows` output rows x `cols` output columns x `channels` channels of one image. Its
input window, `in_rows` x `in_cols` pixels of those channels, is ONE tiled TMA box of the input
viewed as [N, H, W, C] (innermost first: [C, W, H, N]), starting at (ho0*sh - pad_top,
wo0*sw - pad_left): out-of-image parts (the padding, and the edges of partial tiles) arrive as
zeros, so the compute needs no bounds checks, and every input pixel crosses L2 -> SM once per
tile instead of once per filter row. The tile's R x S taps of its channels follow the window in
the slot, a second TMA box of the filter viewed as [R*S, C] (channels past C arrive as zeros):
per filter row the items read them from shared memory, not from global memory (with ~225 KB of
an SM's shared memory in tiles, little L1 remains to cache them).

Threads take items of V channels (16 bytes) x `pixels` outputs along W of one output row,
channel lanes fastest, then W segments, then rows. A quarter warp reads eight 16-byte chunks
per ld.shared.v4; `bank_ways` counts how many of them share a bank group (1: conflict-free).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import INPUT_DTYPES, ConvProblem, DTYPE_BYTES
from . import tensormap as tm
from .tma_loader import _TM_ELEM
from ..common.emit import cdiv

BOX_DIM = 256                  # the TMA box-dimension limit
SLOT_ALIGN = 128               # a TMA destination's alignment (no swizzle: 16 suffices)


class DepthwiseTileUnsupported(ValueError):
    pass


@dataclass(frozen=True)
class DepthwiseTile:
    channels: int              # channels per tile (a multiple of vec)
    rows: int                  # output rows per tile
    cols: int                  # output columns per tile (a multiple of pixels)
    pixels: int                # outputs along W per thread
    vec: int                   # channels per thread (16 bytes)
    in_rows: int               # input rows of the box
    in_cols: int               # input columns of the box
    elem_bytes: int
    tiles_h: int
    tiles_w: int
    tiles_c: int
    batch: int
    taps: int                  # filter taps (R * S)

    @property
    def lanes(self) -> int:
        """Threads across the channels of a tile."""
        return self.channels // self.vec

    @property
    def segments(self) -> int:
        """Threads along W per output row."""
        return self.cols // self.pixels

    @property
    def items(self) -> int:
        return self.lanes * self.segments * self.rows

    def threads(self, cap: int) -> int:
        """Threads per CTA: every item, up to `cap` (then each thread takes several)."""
        return min(cdiv(self.items, 32) * 32, cap)

    @property
    def box_bytes(self) -> int:
        return self.channels * self.in_cols * self.in_rows * self.elem_bytes

    @property
    def taps_offset(self) -> int:
        """Bytes from a slot's start to its taps ([R*S][channels])."""
        return cdiv(self.box_bytes, SLOT_ALIGN) * SLOT_ALIGN

    @property
    def taps_bytes(self) -> int:
        return self.taps * self.channels * self.elem_bytes

    @property
    def slot_bytes(self) -> int:
        """The window, then the taps."""
        return self.taps_offset + cdiv(self.taps_bytes, SLOT_ALIGN) * SLOT_ALIGN

    @property
    def tiles(self) -> int:
        return self.batch * self.tiles_h * self.tiles_w * self.tiles_c

    def bank_ways(self, p: ConvProblem) -> int:
        """Worst bank-group conflict of one ld.shared.v4 (column 0 of filter row 0) over the
        quarter warps of the first warp: the most distinct 16-byte chunks in one bank group."""
        worst = 1
        for q0 in range(0, min(32, self.items), 8):
            groups: dict[int, set] = {}
            for lane in range(q0, min(q0 + 8, self.items)):
                c, rest = lane % self.lanes, lane // self.lanes
                seg, row = rest % self.segments, rest // self.segments
                unit = ((row * p.stride[0] * self.in_cols + seg * self.pixels * p.stride[1]) * self.lanes + c)
                groups.setdefault(unit % 8, set()).add(unit)
            worst = max(worst, max(len(u) for u in groups.values()))
        return worst

    def describe(self) -> str:
        return (f"{self.rows}x{self.cols} px x {self.channels} ch tiles "
                f"({self.in_rows}x{self.in_cols} px input box), {self.pixels} px x {self.vec} ch per thread")


def depthwise_tile(p: ConvProblem, channels: int, rows: int, cols: int, pixels: int) -> DepthwiseTile:
    """The geometry for these knobs; DepthwiseTileUnsupported with the reason where TMA or the
    kernel cannot do it."""
    if not (p.depthwise and p.F == p.C):
        raise DepthwiseTileUnsupported("not a depthwise conv with channel multiplier 1")
    if p.dtype not in INPUT_DTYPES:          # float operands (the TMA maps also take i8)
        raise DepthwiseTileUnsupported(f"dtype {p.dtype}")
    eb = DTYPE_BYTES[p.dtype]
    vec = 16 // eb
    if (p.C * eb) % 16:
        raise DepthwiseTileUnsupported(f"{p.C} channels are not a multiple of 16 bytes (TMA strides)")
    if channels % vec or channels <= 0:
        raise DepthwiseTileUnsupported(f"{channels} channels per tile: not a multiple of {vec}")
    if cols % pixels:
        raise DepthwiseTileUnsupported(f"{cols} columns per tile: not a multiple of {pixels} pixels")
    in_rows = (rows - 1) * p.stride[0] + (p.R - 1) * p.dilation[0] + 1
    in_cols = (cols - 1) * p.stride[1] + (p.S - 1) * p.dilation[1] + 1
    why = window_box_error(channels, in_cols, in_rows)
    if why:
        raise DepthwiseTileUnsupported(why)
    if p.R * p.S > BOX_DIM:
        raise DepthwiseTileUnsupported(f"{p.R}x{p.S} taps exceed the TMA limit of {BOX_DIM} per box dimension")
    g = DepthwiseTile(channels, rows, cols, pixels, vec, in_rows, in_cols, eb,
                      cdiv(p.Ho, rows), cdiv(p.Wo, cols), cdiv(p.C, channels), p.N, p.R * p.S)
    tm.encode_tiled(input_map_args(p, g))          # TensorMapError where the driver would refuse
    tm.encode_tiled(filter_map_args(p, g))
    return g


def window_box_error(channels: int, cols: int, rows: int) -> str | None:
    """Why a [1, rows, cols, channels] window cannot be one TMA box (None: it can)."""
    if max(channels, cols, rows) > BOX_DIM:
        return f"input box {channels}x{cols}x{rows} exceeds the TMA limit of {BOX_DIM} per dimension"
    return None


def window_map_args(p: ConvProblem, channels: int, cols: int, rows: int) -> tm.TiledArgs:
    """The NHWC input as a tiled tensor map ([N, H, W, C], innermost first) whose box is a
    window of rows x cols pixels x channels channels: the depthwise tile kernels' input."""
    eb = DTYPE_BYTES[p.dtype]
    return tm.TiledArgs(data_type=_TM_ELEM[p.dtype], global_dim=(p.C, p.W, p.H, p.N),
                        global_strides=(p.C * eb, p.W * p.C * eb, p.H * p.W * p.C * eb),
                        box_dim=(channels, cols, rows, 1), l2_promotion=tm.L2Promotion.B128)


def input_map_args(p: ConvProblem, g: DepthwiseTile) -> tm.TiledArgs:
    """A box is one tile's window [1, in_rows, in_cols, channels] of the input."""
    return window_map_args(p, g.channels, g.in_cols, g.in_rows)


def filter_map_args(p: ConvProblem, g: DepthwiseTile) -> tm.TiledArgs:
    """The filter ([R, S, C]: taps x channels, channels innermost) as a tiled tensor map whose
    box is a tile's channels of every tap."""
    return tm.TiledArgs(data_type=_TM_ELEM[p.dtype], global_dim=(p.F, g.taps), global_strides=(p.F * g.elem_bytes,),
                        box_dim=(g.channels, g.taps), l2_promotion=tm.L2Promotion.B128)
