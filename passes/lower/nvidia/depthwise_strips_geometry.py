"""Geometry of the strip depthwise kernel (depthwise_strips.py): items, the TMA box per input
row, the swizzled gathers that build A fragments, the f32 stage of a finished output row, and
the shared-memory carve-up. Plain integers and index functions (`ops`: IrOps in the emitter,
NumpyOps in the model test), so the numpy model runs the same arithmetic.

mma.sync m16n8k16 rows are 16 images (a strip: one image's output rows st*L .. st*L + L - 1,
walked down), K is 16 input columns, N 8 output columns; a warp owns CG channels of its CTA's
channel block. Input row i of a strip meets filter row r for output row i - r, so one A
fragment feeds R mma and output row o accumulates in ring slot o mod R.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import DTYPE_BYTES, ConvProblem
from . import tensormap as tm
from .smem import Carve, Region
from .tma_loader import _TM_ELEM

IMAGES = 16          # mma rows: the strips of one item
OUT_COLS = 8         # mma N: output columns of one item
K_COLS = 16          # mma K: input columns per fragment (8 outputs + a window of up to 9)
BOX_COLS = 17        # the box's columns: K_COLS plus one, odd, so gathers spread over the banks
CG = 4               # channels per warp (one 8-byte gather per pixel)
LAG = 2              # steps between a slot's last read and its refill
MAX_RING = 112       # f32 ring accumulators per thread (R * CG * 4)
SWIZZLES = {32: tm.Swizzle.B32, 64: tm.Swizzle.B64, 128: tm.Swizzle.B128}


class DepthwiseStripsUnsupported(ValueError):
    pass


@dataclass(frozen=True)
class DepthwiseStrips:
    R: int
    S: int
    channels: int                 # CB: the CTA's channel block (its pixel span is the swizzle span)
    rows: int                     # L: output rows per strip
    stages: int                   # NS: input-row slots
    elem_bytes: int
    N: int
    Ho: int
    Wo: int
    C: int

    # ---------------------------------------------------------------- work
    @property
    def warps(self) -> int:
        return self.channels // CG

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def steps(self) -> int:
        """Input rows per item: L output rows and the R - 1 rows of the window above them."""
        return self.rows + self.R - 1

    @property
    def strips(self) -> int:
        return -(-self.Ho // self.rows)

    @property
    def col_blocks(self) -> int:
        return -(-self.Wo // OUT_COLS)

    @property
    def channel_blocks(self) -> int:
        return self.C // self.channels

    @property
    def image_groups(self) -> int:
        return -(-self.N // IMAGES)

    @property
    def items(self) -> int:
        return self.image_groups * self.strips * self.col_blocks * self.channel_blocks

    def item(self, ops, t):
        """(image group, strip, column block, channel block) of item t: channel blocks fastest,
        then columns, strips, images (neighbouring items share input columns and rows in L2)."""
        cb = ops.rem(t, self.channel_blocks)
        rest = ops.div(t, self.channel_blocks)
        wb = ops.rem(rest, self.col_blocks)
        rest = ops.div(rest, self.col_blocks)
        return ops.div(rest, self.strips), ops.rem(rest, self.strips), wb, cb

    # ---------------------------------------------------------------- input rows
    @property
    def pixel_bytes(self) -> int:
        """A pixel's channel block in the box: also the swizzle span."""
        return self.channels * self.elem_bytes

    @property
    def box(self) -> tuple[int, int, int, int]:
        """(channels, columns, rows, images), innermost first."""
        return (self.channels, BOX_COLS, 1, IMAGES)

    @property
    def box_bytes(self) -> int:
        return self.pixel_bytes * BOX_COLS * IMAGES

    def swizzle(self, ops, byte):
        """The TMA swizzle of a pixel_bytes span: 16-byte chunk bits [4, 4 + b) ^= bits [7, 7 + b)."""
        mask = self.pixel_bytes // 16 - 1
        return ops.xor(byte, ops.mul(ops.rem(ops.div(byte, 128), mask + 1), 16))

    def gather(self, ops, image, col, channel):
        """Element index in a slot of (image, box column, channel) as the swizzled box lands."""
        byte = ops.add(ops.mul(ops.add(ops.mul(image, BOX_COLS), col), self.pixel_bytes),
                       ops.mul(channel, self.elem_bytes))
        return ops.div(self.swizzle(ops, byte), self.elem_bytes)

    # ---------------------------------------------------------------- the f32 stage of one output row
    @property
    def stage_pixel(self) -> int:
        """f32 words per staged pixel: the block plus 4 (an odd count of 16-byte units)."""
        return self.channels + 4

    @property
    def stage_image(self) -> int:
        return OUT_COLS * self.stage_pixel + 4

    @property
    def stage_words(self) -> int:
        return IMAGES * self.stage_image

    def stage_index(self, ops, image, col, channel):
        return ops.add(ops.add(ops.mul(image, self.stage_image), ops.mul(col, self.stage_pixel)), channel)

    # ---------------------------------------------------------------- shared memory
    @property
    def layout(self) -> "StripsLayout":
        return StripsLayout(self)

    @property
    def smem_bytes(self) -> int:
        return self.layout.total

    def describe(self) -> str:
        return (f"{self.items} items of 16 images x {self.rows} output rows x 8 columns x {self.channels} channels "
                f"({self.steps} input rows each, {self.stages} slots), {self.warps} warps of {CG} channels")


class StripsLayout:
    """Shared memory: [input-row slots (1024-aligned: the swizzle)][2 f32 stages][full][empty]."""

    def __init__(self, g: DepthwiseStrips):
        carve = Carve()
        self.slots: Region = carve.take(-(-g.box_bytes // 1024) * 1024, g.stages, align=1024)
        self.stage: Region = carve.take(4 * g.stage_words, 2, align=16)
        self.full: Region = carve.barriers(g.stages)
        self.empty: Region = carve.barriers(g.stages)
        self.total = carve.top


def depthwise_strips(p: ConvProblem, channels: int, rows: int, stages: int = 5) -> DepthwiseStrips:
    """The geometry, or DepthwiseStripsUnsupported naming what does not fit."""
    if not (p.depthwise and p.F == p.C):
        raise DepthwiseStripsUnsupported("not a depthwise conv with channel multiplier 1")
    if p.dtype not in ("f16", "bf16"):
        raise DepthwiseStripsUnsupported(f"{p.dtype} inputs (mma.sync m16n8k16 takes f16/bf16)")
    if tuple(p.stride) != (1, 1) or tuple(p.dilation) != (1, 1):
        raise DepthwiseStripsUnsupported("stride or dilation other than 1 (the band assumes neighbouring columns)")
    if p.S > K_COLS - OUT_COLS + 1:
        raise DepthwiseStripsUnsupported(f"a {p.S}-column window (16 input columns cover 8 outputs of up to 9)")
    if p.dynamic_batch:
        raise DepthwiseStripsUnsupported("batch read at run time (the item walk is sized at compile time)")
    eb = DTYPE_BYTES[p.dtype]
    if channels * eb not in SWIZZLES or channels % CG:
        raise DepthwiseStripsUnsupported(f"a {channels}-channel block (its pixel must be a 32/64/128-byte swizzle span)")
    if p.C % channels:
        raise DepthwiseStripsUnsupported(f"{p.C} channels are not a multiple of the {channels}-channel block")
    if p.R * CG * 4 > MAX_RING:
        raise DepthwiseStripsUnsupported(f"a {p.R}-row window ({p.R * CG * 4} ring accumulators per thread)")
    if rows < 1 or stages <= LAG:
        raise DepthwiseStripsUnsupported(f"{rows} rows per strip, {stages} slots")
    g = DepthwiseStrips(p.R, p.S, channels, rows, stages, eb, p.N, p.Ho, p.Wo, p.C)
    tm.validate(input_map_args(p, g))
    return g


def input_map_args(p: ConvProblem, g: DepthwiseStrips) -> tm.TiledArgs:
    """The NHWC input ([N, H, W, C], innermost first); a box is one input row of 16 images x
    17 columns x the channel block, swizzled over the block's span, zeros out of bounds (the
    padding, and the images past N)."""
    eb = g.elem_bytes
    return tm.TiledArgs(data_type=_TM_ELEM[p.dtype], global_dim=(p.C, p.W, p.H, p.N),
                        global_strides=(p.C * eb, p.W * p.C * eb, p.H * p.W * p.C * eb),
                        box_dim=g.box, swizzle=SWIZZLES[g.pixel_bytes], l2_promotion=tm.L2Promotion.B128)
