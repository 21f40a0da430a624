"""Geometry of the tensor-core depthwise kernel (depthwise_mma.py): one pure function of
(problem, knobs) that the planner sizes schedules with and the lowering and the numpy model
test read every index from.

A depthwise conv is, per channel c and filter row r, a banded (Toeplitz) matrix product: for 8
outputs along W from column x0, out[y][x0 + n] += sum_k in[y*sh + r*dh][k] * T_r[k - (x0 + n)*sw],
where T_r[i] = w[r][i / dw] when dw divides i and i / dw < S, else 0. The input rows of 16 output
rows, 16 columns at a time (a chunk), are the A of an mma.sync.m16n8k16, T_r shifted by the
chunk's offset from the block (d = 16*chunk - 8*block*sw) is B, 8 outputs along W are N: one mma
does 16 x 8 outputs of one filter row and chunk. A chunk feeds every 8-output block whose
window overlaps it (two or three at stride 1), so each A fragment is loaded once per filter row
and row fragment; the B fragments of the few distinct shifts stay in registers per channel. The
49 multiply-adds per output of a 7x7 window cost ~10 tensor-core instructions per 128 outputs
instead of ~25 packed-f16 FMAs per output.

A tile is `rows` output rows (16 per row fragment) x `cols` output columns (8 per column block)
x `channels` channels of one image. Shared memory:

- raw: the tile's input window as it lies in memory, [in_rows][read_cols][channels], ONE TMA
  box (zeros outside the image: the padding), loaded while the previous tile computes;
- one slot per channel, an odd multiple of 16 bytes apart (the 8 channels of one ldmatrix
  column land in 8 different bank groups). A slot first holds the channel's plane, [in_rows]
  [pitch]: ldmatrix.trans of 8 pixels x 8 channels of raw gives every lane two neighbouring
  columns of one channel, one 32-bit store into the plane. A plane row is input columns of one
  channel, what ldmatrix hands the mma as A; the pitch is an odd multiple of 16 bytes so the 8
  rows of an ldmatrix hit 8 different bank groups. Once the channel's warp has done its
  fragments, the slot holds its f32 accumulators, [rows][stage_pitch], read back as 8-channel
  vectors per pixel for the shared epilogue (a warp only ever reads its own channels' planes,
  so no CTA barrier sits between compute and stage, and one channel's accumulators are live
  at a time);
- taps: per channel and filter row T_r twice, as is and shifted by one element, so the B pair
  (T[o], T[o+1]) of any lane is one aligned 32-bit load whatever the parity of o;
- the raw buffer's mbarrier.

Columns of raw past in_cols hold image data (or zeros) that only ever meet zeros of the band.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import ConvProblem, DTYPE_BYTES
from . import tensormap as tm
from .depthwise_tile import window_box_error, window_map_args
from ..common.emit import cdiv

VEC = 8                        # channels per 16-byte vector (f16/bf16)
RAW_ALIGN = 128                # a TMA destination's alignment


class DepthwiseMmaUnsupported(ValueError):
    pass


def _round_up(a: int, b: int) -> int:
    return cdiv(a, b) * b


def _odd_multiple(n: int, unit: int) -> int:
    """The smallest odd multiple of unit >= n."""
    k = cdiv(n, unit)
    return (k + 1 - k % 2) * unit


def _stage_pitch(cols: int) -> int:
    """Floats per stage row: >= cols and 8 or 24 mod 32, so the four rows one half-warp's
    64-bit fragment stores cover land in four different 32-byte bank groups."""
    p = cols
    while p % 32 not in (8, 24):
        p += 8
    return p


@dataclass(frozen=True)
class DepthwiseMmaGeometry:
    channels: int              # channels per tile (CTA block), a multiple of 8
    rows: int                  # output rows per tile, a multiple of 16
    cols: int                  # output columns per tile, a multiple of 8
    warps: int
    sh: int
    sw: int
    dh: int
    dw: int
    R: int
    S: int
    C: int
    Ho: int
    Wo: int
    pad_top: int
    pad_left: int
    elem_bytes: int

    # ------------------------------------------------------------------ shape
    @property
    def mt(self) -> int:
        """Row fragments (16 output rows each) per tile."""
        return self.rows // 16

    @property
    def nt(self) -> int:
        """Column blocks (8 output columns each) per tile."""
        return self.cols // 8

    @property
    def span(self) -> int:
        """Input columns of one 8-output block: (8-1)*sw + (S-1)*dw + 1."""
        return 7 * self.sw + (self.S - 1) * self.dw + 1

    @property
    def pairs(self) -> tuple[tuple[int, int, int], ...]:
        """(block j, chunk, shift d = 16*chunk - 8*j*sw) for every 16-column chunk each block's
        window overlaps."""
        out = []
        for j in range(self.nt):
            first = 8 * j * self.sw
            for chunk in range(first // 16, (first + self.span - 1) // 16 + 1):
                out.append((j, chunk, 16 * chunk - first))
        return tuple(out)

    @property
    def chunks(self) -> int:
        """16-column chunks of a plane row the fragments read."""
        return max(c for _, c, _ in self.pairs) + 1

    @property
    def shifts(self) -> tuple[int, ...]:
        """The distinct band shifts: B fragments per filter row and channel."""
        return tuple(sorted({d for _, _, d in self.pairs}))

    @property
    def in_rows(self) -> int:
        return (self.rows - 1) * self.sh + (self.R - 1) * self.dh + 1

    @property
    def in_cols(self) -> int:
        """Input columns the tile's outputs read."""
        return (self.cols - 1) * self.sw + (self.S - 1) * self.dw + 1

    @property
    def read_cols(self) -> int:
        """Columns of the TMA box: at least the fragments' (16*chunks) and the windows' (in_cols),
        rounded up to the plane pitch, so a window pixel's index in raw and its column pair's
        word in a plane are both linear in (row * read_cols + column) / 8."""
        return self.pitch

    @property
    def pitch(self) -> int:
        """Elements per plane row: an odd multiple of 8 (16 bytes)."""
        return _odd_multiple(max(16 * self.chunks, self.in_cols), 8)

    @property
    def plane(self) -> int:
        """Elements per channel plane."""
        return self.in_rows * self.pitch

    @property
    def stage_pitch(self) -> int:
        return _stage_pitch(self.cols)

    @property
    def stage_plane(self) -> int:
        """Floats per channel of the accumulator stage."""
        return self.rows * self.stage_pitch

    @property
    def taps_lo(self) -> int:
        """T_r's first index any lane reads: 2q + 8h + d - g*sw at q = h = 0, g = 7, d least."""
        return self.shifts[0] - 7 * self.sw

    @property
    def taps_len(self) -> int:
        """Elements per copy of T_r (even: copies stay 4-byte aligned): up to the last pair's
        second element (o + 1 <= d + 15) of the other copy (one further)."""
        return _round_up(self.shifts[-1] + 16 - self.taps_lo + 1, 2)

    # ------------------------------------------------------------------ shared memory (bytes)
    @property
    def slot_bytes(self) -> int:
        """One channel's plane, later its accumulators."""
        return _odd_multiple(max(self.plane * self.elem_bytes, self.stage_plane * 4), 16)

    @property
    def region_bytes(self) -> int:
        """The slots; before the first tile they hold the block's raw R x S x channels filter
        (in_rows >= R rows of pitch >= S columns per channel: it fits)."""
        return self.channels * self.slot_bytes

    @property
    def raw_offset(self) -> int:
        return _round_up(self.region_bytes, RAW_ALIGN)

    @property
    def box_bytes(self) -> int:
        """The TMA box: read_cols x in_rows pixels of `channels` channels."""
        return self.in_rows * self.read_cols * self.channels * self.elem_bytes

    @property
    def taps_offset(self) -> int:
        return self.raw_offset + _round_up(self.box_bytes, 16)

    @property
    def taps_bytes(self) -> int:
        return self.channels * self.R * 2 * self.taps_len * self.elem_bytes

    @property
    def barrier_offset(self) -> int:
        return _round_up(self.taps_offset + self.taps_bytes, 8)

    @property
    def smem_bytes(self) -> int:
        return _round_up(self.barrier_offset + 8, 16)

    # ------------------------------------------------------------------ work
    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def warp_channels(self) -> int:
        """Channels per warp (warp w takes channels w, w + warps, ...)."""
        return self.channels // self.warps

    @property
    def accumulators(self) -> int:
        """f32 accumulators per thread (one channel's fragments)."""
        return self.mt * self.nt * 4

    @property
    def tiles_h(self) -> int:
        return cdiv(self.Ho, self.rows)

    @property
    def tiles_w(self) -> int:
        return cdiv(self.Wo, self.cols)

    @property
    def tiles_per_image(self) -> int:
        return self.tiles_h * self.tiles_w

    @property
    def channel_blocks(self) -> int:
        return cdiv(self.C, self.channels)

    @property
    def matrices(self) -> int:
        """8 x 8 matrices (8 pixels along W x 8 channels) of raw the transposition moves."""
        return self.in_rows * (self.read_cols // 8) * (self.channels // VEC)

    @property
    def store_items(self) -> int:
        """8-channel output vectors per tile (chunks fastest)."""
        return self.rows * self.cols * (self.channels // VEC)

    # ------------------------------------------------------------------ indices
    # Functions taking `ops` are evaluated on ints/numpy by the model test (NumpyOps) and build
    # the kernel's index IR (IrOps, Python ints folding): the kernel's arithmetic is the tested
    # code. The others are compile-time offsets.
    def tile_origin(self, ops, t):
        """(n, first output row, first output column) of spatial tile t (columns fastest)."""
        tw = ops.rem(t, self.tiles_w)
        rest = ops.div(t, self.tiles_w)
        return ops.div(rest, self.tiles_h), ops.mul(ops.rem(rest, self.tiles_h), self.rows), ops.mul(tw, self.cols)

    def filter_index(self, ops, r, s, c):
        """Element index of tap (r, s) of channel c in the block's raw filter, which the slots
        hold before the first tile: [R][S][channels]."""
        return ops.add(ops.mul(ops.add(ops.mul(r, self.S), s), self.channels), c)

    def matrix(self, ops, u):
        """(pixel group, 8-channel chunk) of transposition matrix u, chunks fastest: the group's
        8 pixels are window pixels 8*group .. 8*group + 7 in row-major order (read_cols is a
        multiple of 8)."""
        chunks = self.channels // VEC
        return ops.div(u, chunks), ops.rem(u, chunks)

    def matrix_source(self, ops, group, chunk):
        """Element index in raw of the matrix's first row (pixel 8*group, channel 8*chunk)."""
        return ops.add(ops.mul(group, 8 * self.channels), ops.mul(chunk, VEC))

    def matrix_target(self, ops, group, chunk):
        """32-bit word index in the slots of (channel 8*chunk, the group's first pixel) (the
        plane's row * pitch + column is 8*group: pitch == read_cols)."""
        return ops.add(ops.mul(chunk, VEC * self.slot_bytes // 4), ops.mul(group, 4))

    def raw_index(self, row, col, c):
        """Element index of (window row, window column, channel) in raw."""
        return (row * self.read_cols + col) * self.channels + c

    def plane_index(self, c, row, col):
        """Element index of (channel c, window row, window column) in the planes."""
        return c * (self.slot_bytes // self.elem_bytes) + row * self.pitch + col

    def stage_index(self, ops, c, row, col):
        """Float index of (channel c, output row, output column) in the accumulator stage."""
        return ops.add(ops.add(ops.mul(c, self.slot_bytes // 4), ops.mul(row, self.stage_pitch)), col)

    def a_lane_offset(self, ops, lane):
        """Element offset of this lane's ldmatrix.x4 row address from (row fragment 0, chunk 0)
        of a plane: lane L gives row L%8 of matrix L/8; matrices 0/1 rows 0-7/8-15 at k 0-7,
        matrices 2/3 the same rows at k 8-15 (a0..a3 of m16n8k16)."""
        m = ops.add(ops.rem(lane, 8), ops.mul(ops.rem(ops.div(lane, 8), 2), 8))
        return ops.add(ops.mul(m, self.sh * self.pitch), ops.mul(ops.div(lane, 16), 8))

    def a_offset(self, c: int, mi: int, r: int, chunk: int) -> int:
        """Element offset of (channel c, row fragment mi, filter row r, 16-column chunk) added
        to the lane offset."""
        return self.plane_index(c, 16 * mi * self.sh + r * self.dh, 16 * chunk)

    def tap(self, i: int) -> int | None:
        """s of T[i] (None: a zero of the band)."""
        if i < 0 or i % self.dw or i // self.dw >= self.S:
            return None
        return i // self.dw

    def taps_index(self, ops, c, r, copy, j):
        """Element index in shared memory of copy `copy` (0: T_r[j + lo], 1: T_r[j + lo - 1])
        of channel c, filter row r."""
        row = ops.add(ops.mul(ops.add(ops.mul(c, self.R), r), 2), copy)
        return ops.add(ops.add(ops.mul(row, self.taps_len), j), self.taps_offset // self.elem_bytes)

    def b_lane(self, ops, lane):
        """(copy, element offset within that copy) of the lane's B pair (T[o], T[o+1]) at h = 0,
        d = 0, with o = 2q - g*sw (g = lane/4 the output column, q = lane%4): the copy whose
        index of T[o] is even (shifts are multiples of 8: the parity holds for all)."""
        j = ops.sub(ops.add(ops.mul(ops.rem(lane, 4), 2), -self.taps_lo), ops.mul(ops.div(lane, 4), self.sw))
        copy = ops.rem(j, 2)
        return copy, ops.add(j, copy)

    def b_offset(self, h: int, d: int) -> int:
        """Offset of the pair for k rows 8h of a chunk at shift d (b0: h = 0, b1: h = 1)."""
        return 8 * h + d

    def describe(self) -> str:
        return (f"{self.rows}x{self.cols}-pixel tiles x {self.channels} channels, {self.mt * self.nt} m16n8 "
                f"fragments, {self.mt * self.R * self.chunks} ldmatrix and {self.mt * self.R * len(self.pairs)} mma "
                f"per channel, {self.warps} warps")


def depthwise_mma_geometry(p: ConvProblem, channels: int, rows: int, cols: int, warps: int) -> DepthwiseMmaGeometry:
    """The geometry, or DepthwiseMmaUnsupported with the reason."""
    if not (p.depthwise and p.F == p.C):
        raise DepthwiseMmaUnsupported("not a depthwise conv with channel multiplier 1")
    if p.dtype not in ("f16", "bf16"):
        raise DepthwiseMmaUnsupported(f"{p.dtype} inputs (mma.sync m16n8k16 takes f16/bf16)")
    if p.C % VEC:
        raise DepthwiseMmaUnsupported(f"C={p.C} is not a multiple of {VEC} (16-byte channel vectors)")
    if channels % VEC or rows % 16 or cols % 8 or min(channels, rows, cols) <= 0:
        raise DepthwiseMmaUnsupported(f"tile {rows}x{cols}x{channels} (rows by 16, columns and channels by 8)")
    if warps < 1 or channels % warps:
        raise DepthwiseMmaUnsupported(f"{warps} warps do not split {channels} channels")
    g = DepthwiseMmaGeometry(channels, rows, cols, warps, p.stride[0], p.stride[1], p.dilation[0],
                                p.dilation[1], p.R, p.S, p.C, p.Ho, p.Wo, p.pad[0], p.pad[1], DTYPE_BYTES[p.dtype])
    why = window_box_error(g.channels, g.read_cols, g.in_rows)
    if why:
        raise DepthwiseMmaUnsupported(why)
    tm.encode_tiled(input_map_args(p, g))          # TensorMapError where the driver would refuse
    return g


def input_map_args(p: ConvProblem, g: DepthwiseMmaGeometry) -> tm.TiledArgs:
    """A box is one tile's window [1, in_rows, read_cols, channels] of the input."""
    return window_map_args(p, g.channels, g.read_cols, g.in_rows)
