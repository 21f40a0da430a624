"""Row-slab operand geometry for convs whose pixels are too narrow for TMA (e.g. a 3-channel
stem): the loader and the register-A wgmma of sm90_rows.py agree on it through this module.

A tile is one output row (n, ho) of Wo <= 128 pixels. Its im2col rows all read the same R input
rows; in NHWC each input row is one contiguous run of W*C elements. A tiled TMA map over the
input viewed as [N, H, W*C / G, G] (G elements per "group", G dividing W*C) brings all R rows
into shared memory ("the slab") with ONE box of [R, groups, G]: the slab row pitch is
groups*G elements, and out-of-bounds parts (the padding, rows above or below the image) arrive
as zeros. One box per tile matters: the producer is a single thread, and at 21 boxes per tile
(three 256-element boxes per row of the 7x7 stem) it could not keep the consumers fed. With
a dilation along H the rows are not adjacent and each row is its own box.

A box starts on a group boundary, so the slab starts at xs = x0 - d (x0 = -pad_left*C, xs the
largest multiple of G not above x0) and slab element e holds input element xs + e. G is the
largest divisor of W*C (a multiple of 16 bytes, at most 256 elements) whose slab is within 25%
of the smallest: wider groups mean fewer, longer box rows, but more leading elements.

K is ordered (r, j') with j' = lead + s*C + c, each filter row's S*C values (after `lead`
zero slots) padded to SC2 (a multiple of 8): then every 8-wide K chunk lies in one filter row,
and A[wo, (r, j')] is slab element r*pitch + stride_w*C*wo + j' + (d - lead) — a per-thread
base plus a compile-time offset. lead = d mod 2 makes that offset even, and with stride_w*C
even the (k, k+1) pairs a thread holds in the wgmma A fragment are 4-byte aligned: each
fragment register is one ld.shared.b32, masked where j' is outside [lead, lead + S*C).

f32 operands run as TF32 (k8 wgmma): a fragment register holds one element, so there is no
pair to align (lead = 0, any stride_w*C), and K is padded to a multiple of 8. Such fragments
take twice the registers of 16-bit ones; where a tile's fragments for all its sub-blocks would
not fit beside the accumulators (the f32 7x7 stem: 84 per sub-block), the consumer loads one
sub-block's at a time (`carry` False: serial sub-blocks, see sm90_rows.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...problem import ConvProblem, DTYPE_BYTES
from ..common.emit import cdiv

BOX_DIM = 256                 # the TMA box-dimension limit
SLAB_SLACK = 1.25             # widest group whose slab pitch is within this of the smallest
CHUNK = 8                     # K elements per chunk: half a 16-bit k16 step, a whole TF32 k8 step
MAX_ROWS = 128                # output pixels per tile: two m64 wgmma sub-blocks
BLOCK_NS = (64, 32)           # output channels per tile: the widest that divides F
FRAGMENT_REGISTERS = 180      # A fragments + accumulators a consumer thread may hold live


class RowSlabUnsupported(ValueError):
    pass


@dataclass(frozen=True)
class RowSlab:
    sc: int                   # S*C: valid values per filter row
    lead: int                 # zero K slots before each filter row's values (0 or 1)
    sc2: int                  # lead + S*C padded to a multiple of 8
    kp: int                   # R*SC2 padded to a multiple of 16 (the GEMM K)
    xs: int                   # first slab element's W*C coordinate (a multiple of group)
    shift: int                # slab offset of j' = 0 at wo = 0: (x0 - xs) - lead, even
    group: int                # G: elements per box row (divides W*C, 16-byte multiple)
    groups: int               # box rows per slab row
    rows_box: int             # input rows per TMA box: R, or 1 with a dilation along H
    row_step: int             # slab elements between adjacent output pixels (stride_w*C)
    subs: int                 # m64 sub-blocks per tile (rows = 64*subs >= Wo)
    elem_bytes: int
    rows_r: int               # R: input rows per slab
    carry: bool = True        # the next tile's first fragments are prefetched (else serial sub-blocks)
    block_n: int = 64         # output channels per tile (wgmma N)

    @property
    def acc_registers(self) -> int:
        """f32 accumulators per thread of one m64 sub-block."""
        return self.block_n // 2

    @property
    def kstep(self) -> int:
        """K per wgmma: 32 bytes of K (16 for 16-bit operands, 8 for TF32)."""
        return 32 // self.elem_bytes

    @property
    def pair(self) -> int:
        """Elements per A fragment register (b32): 2 for 16-bit operands, 1 for TF32."""
        return 4 // self.elem_bytes

    @property
    def fragment_registers(self) -> int:
        """A fragment registers per m64 sub-block (four per k-step)."""
        return 4 * self.ksteps

    @property
    def pitch(self) -> int:
        """Slab row pitch in elements."""
        return self.groups * self.group

    @property
    def boxes(self) -> int:
        """TMA boxes per tile."""
        return self.rows_r // self.rows_box

    @property
    def ksteps(self) -> int:
        return self.kp // self.kstep

    @property
    def row_elems(self) -> int:
        """K elements per 128-byte swizzled filter row."""
        return 128 // self.elem_bytes

    @property
    def ktiles(self) -> int:
        """K tiles of the shared-memory filter (one 128B-swizzled row per output channel)."""
        return cdiv(self.kp, self.row_elems)

    @property
    def slab_bytes(self) -> int:
        return self.pitch * self.elem_bytes * self.rows_r

    def chunk(self, ch: int) -> tuple[int, int] | None:
        """K chunk ch (elements 8ch .. 8ch+7) -> (slab row r, first j), None past R*SC2."""
        k0 = CHUNK * ch
        if k0 >= self.rows_r * self.sc2:
            return None
        return k0 // self.sc2, k0 % self.sc2

    def offset(self, wo: int, r: int, j: int) -> int:
        """Slab element of A[wo, (r, j')]."""
        return r * self.pitch + self.row_step * wo + j + self.shift

    def valid(self, j: int) -> bool:
        """Whether K slot j' of a filter row holds a filter value (else its weight is 0)."""
        return self.lead <= j < self.lead + self.sc

    def registers(self, kk: int) -> list[tuple[int, int, int] | None]:
        """The four A registers of k-step kk in wgmma order (CUTLASS's ALayout_64x16 and
        _64x8): (row half hr: fragment rows g or g+8, slab row r, first K slot j' of the
        register's span); a lane q = l%4 reads elements j' + pair*q .. + pair - 1 of it. None
        past R*SC2 (zero registers). Register i covers K kstep*kk + (i//2)*kstep/2 + pair*q:
        16-bit operands hold chunks 2kk and 2kk+1 (columns 2q, 2q+8), TF32 the halves of chunk
        kk (columns q, q+4)."""
        out = []
        for i in range(4):
            h, hr = divmod(i, 2)
            k0 = self.kstep * kk + h * (self.kstep // 2)
            at = self.chunk(k0 // CHUNK)
            out.append(None if at is None else (hr, at[0], at[1] + k0 % CHUNK))
        return out


def row_slab(p: ConvProblem) -> RowSlab:
    """Geometry for p, or RowSlabUnsupported with the reason."""
    eb = DTYPE_BYTES[p.dtype]
    pair = 4 // eb                              # elements per fragment register
    if p.dilation[1] != 1:
        raise RowSlabUnsupported(f"dilation {p.dilation[1]} along W (a filter row must be contiguous)")
    if pair == 2 and (p.stride[1] * p.C) % 2:
        raise RowSlabUnsupported(f"stride_w*C = {p.stride[1] * p.C} is odd (fragment pairs would straddle words)")
    if (p.W * p.C * eb) % 16:
        raise RowSlabUnsupported(f"input rows of {p.W * p.C * eb} B are not 16-byte aligned for TMA")
    if p.Wo > MAX_ROWS:
        raise RowSlabUnsupported(f"Wo={p.Wo} > {MAX_ROWS} output pixels per row")
    block_n = next((b for b in BLOCK_NS if p.F % b == 0), None)
    if block_n is None:
        raise RowSlabUnsupported(f"F={p.F} is not a multiple of {BLOCK_NS[-1]}")
    sc = p.S * p.C
    x0 = -p.pad[1] * p.C
    d = x0 % CHUNK
    lead = d % 2 if pair == 2 else 0
    sc2 = cdiv(lead + sc, CHUNK) * CHUNK
    kstep = 32 // eb
    kp = cdiv(p.R * sc2, kstep) * kstep
    subs = cdiv(p.Wo, 64)
    frags = 4 * kp // kstep
    # all sub-blocks' fragments live (the overlapped consumer), else one sub-block's at a time
    acc = block_n // 2
    carry = (frags + acc) * subs <= FRAGMENT_REGISTERS
    if not carry and frags + acc * subs > FRAGMENT_REGISTERS:
        raise RowSlabUnsupported(f"K={kp} needs {frags + acc * subs} fragment registers")
    row_step = p.stride[1] * p.C
    wc = p.W * p.C
    align = 16 // eb
    fits = []                                   # (pitch, group, xs, shift) per candidate group
    for group in range(align, min(wc, BOX_DIM) + 1, align):
        if wc % group:
            continue
        xs = (x0 // group) * group
        shift = (x0 - xs) - lead                # x0 - xs = d (mod 8): even for 16-bit, like before
        groups = cdiv(row_step * (p.Wo - 1) + sc2 + shift, group)
        if groups <= BOX_DIM:
            fits.append((groups * group, group, xs, shift))
    if not fits:
        raise RowSlabUnsupported(f"input rows of {wc} elements need more than {BOX_DIM} box rows")
    least = min(f[0] for f in fits)
    pitch, group, xs, shift = max((f for f in fits if f[0] <= SLAB_SLACK * least), key=lambda f: f[1])
    if p.dilation[0] != 1 and p.R > 1 and (pitch * eb) % 128:
        # one box per filter row, each at a multiple of the row pitch: a TMA destination must
        # be 128-byte aligned (found by convc-fuzz: CUDA_ERROR_MISALIGNED_ADDRESS)
        raise RowSlabUnsupported(f"dilation {p.dilation[0]} along H needs one box per filter row, and rows of "
                                 f"{pitch * eb} B would start them off the 128-byte alignment TMA requires")
    return RowSlab(sc=sc, lead=lead, sc2=sc2, kp=kp, xs=xs, shift=shift, group=group,
                   groups=pitch // group, rows_box=p.R if p.dilation[0] == 1 else 1,
                   row_step=row_step, subs=subs, elem_bytes=eb, rows_r=p.R, carry=carry,
                   block_n=block_n)


def slab_model(p: ConvProblem, g: RowSlab, x, n: int, ho: int):
    """numpy model of what the TMA boxes put in shared memory for output row (n, ho):
    [R, pitch], zeros where the boxes leave the input (the padding)."""
    rows = x.reshape(p.N, p.H, p.W * p.C)
    slab = np.zeros((p.R, g.pitch), dtype=x.dtype)
    for r in range(p.R):
        hi = p.stride[0] * ho - p.pad[0] + r * p.dilation[0]
        if not 0 <= hi < p.H:
            continue
        lo = max(0, -g.xs)
        hi_e = min(g.pitch, p.W * p.C - g.xs)
        slab[r, lo:hi_e] = rows[n, hi, g.xs + lo:g.xs + hi_e]
    return slab


def im2col_from_slab(p: ConvProblem, g: RowSlab, slab, wo_count: int):
    """numpy model: the [wo_count, kp] A tile the kernel's fragment loads build from one slab
    (slab: [R, pitch] array). Used by tests against a direct im2col."""
    a = np.zeros((wo_count, g.kp), dtype=slab.dtype)
    flat = slab.reshape(-1)
    for wo in range(wo_count):
        for ch in range(g.kp // CHUNK):
            at = g.chunk(ch)
            if at is None:
                continue
            r, cj = at
            for i in range(CHUNK):
                if g.valid(cj + i):
                    a[wo, CHUNK * ch + i] = flat[g.offset(min(wo, p.Wo - 1), r, cj + i)]
    return a
