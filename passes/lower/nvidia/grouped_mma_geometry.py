"""Geometry of the grouped tensor-core kernel (grouped_mma.py): tiles, shared-memory layout and
every lane's addresses, written once against the integer-ops interface (common/int_ops.py) so
the numpy model test evaluates exactly the index math the kernel emits.

A CTA owns a channel block of `gb` whole groups (BN = gb*F/G output channels, KB = gb*C/G input
channels) and walks output tiles of BH rows x BW columns of one image. Per tile it stages the
input patch the tile's taps read: PH x PW input pixels, each a shared-memory row of KP
channels (the block's KB channels, zero up to a multiple of 16, then 8 more so consecutive rows
start 16 bytes apart modulo 128 and an ldmatrix of 8 pixel rows hits 8 different bank quads).
Out-of-image pixels are zero-filled by the copies (padding costs nothing).

Slices (`slices` > 1, a dense conv of many input channels): the patch is staged a channel
slice at a time (KS = KB / slices channels per pixel row, KS + 8 in shared memory), each slice
into the next of `stages` slice buffers, so the copies of the next slices (of this tile or the
next) run while the taps of this one are computed. A whole 256-channel patch is one copy the
CTA waits for before any math, then math with no copy in flight: the VAE decoder's 256 -> 8
output conv spent about as long in each.

The implicit GEMM per tile: M = the tile's pixels (padded to whole m16 fragments), N = BN,
K = taps x 16-channel chunks of the block's input channels. The filter is block-diagonal (an
output channel reads only its group's input channels), so each n8 fragment column j iterates
only the chunks that overlap its groups' channels (`chunks(j)`), and the staged filter holds,
per (tap, j), NC blocks of 16x8 (chunk c_lo(j) + cc, zeros where an input channel belongs to
another group). A block is two 8x8 b16 matrices (k 0-7, k 8-15), each 8 rows of 8 channels
(row n = output channel), 128 contiguous bytes: ldmatrix reads them without bank conflicts.

A fragments: ldmatrix.x4 with lane L giving the row of pixel m = m16*16 + L%8 + 8*((L/8)%2) at
channel chunk*16 + 8*(L/16); a tap moves every address by a constant (r*dh*PW + s*dw rows),
so the im2col gather is free. Warps: WM along M x WN along N; warp (wm, wn) owns m16 tiles
wm*MT .. +MT and n8 columns wn*NTW .. +NTW.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import ConvProblem
from ..common.emit import cdiv

THREADS = 256
WARPS = THREADS // 32
MAX_BN = 128                 # output channels per CTA (accumulator registers)
MAX_DENSE_KB = 256           # input channels of a dense conv run as one group (patch rows)
MAX_ACC = 48                 # f32 accumulators per thread (128 registers with two CTAs per SM)
MAX_MT = 8                   # m16 fragments per warp
BLOCK_BYTES = 256            # one 16(k) x 8(n) filter block: two 8x8 b16 matrices
MIN_GROUP_CHANNELS = 4       # narrower groups stay on the direct kernel (near-depthwise)
MIN_SLICE_CHANNELS = 32      # channel slices of a patch: two 16-channel chunks at least
SMEM_RESERVE = 1024          # the driver's per-CTA shared memory


class GroupedMmaUnsupported(ValueError):
    pass


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def narrow_input(p: ConvProblem) -> bool:
    """A dense conv with under 8 input channels (an RGB stem): its pixels are not 16-byte
    vectors, so threads stage them element by element (Geometry.stage_item)."""
    return p.groups == 1 and p.C < 8


def group_block(p: ConvProblem) -> int:
    """Groups per CTA: the most (a divisor of G) whose input and output channels are whole
    16-byte vectors (input channels: any count under 8 for a dense conv, narrow_input) and fit
    MAX_BN (a dense conv's input channels MAX_DENSE_KB)."""
    cg, fg = p.C // p.groups, p.F // p.groups
    max_kb = MAX_DENSE_KB if p.groups == 1 else MAX_BN
    ok = [d for d in _divisors(p.groups) if ((d * cg) % 8 == 0 or narrow_input(p)) and (d * fg) % 8 == 0
          and d * fg <= MAX_BN and d * cg <= max_kb]
    if not ok:
        raise GroupedMmaUnsupported(f"no block of whole groups has a multiple of 8 input and output channels "
                                    f"with at most {MAX_BN} (C/G={cg}, F/G={fg}, G={p.groups})")
    return max(ok)


def warps_along_n(n8: int) -> int:
    """Warps sharing the n8 columns: as many as leave each warp at least two."""
    for w in (8, 4, 2):
        if n8 % w == 0 and n8 // w >= 2:
            return w
    return 1


@dataclass(frozen=True)
class Geometry:
    p: ConvProblem
    bh: int                  # output rows per tile
    bw: int                  # output columns per tile
    slices: int = 1          # channel slices the patch is staged in (dense convs, see the module doc)

    def __post_init__(self):
        if self.slices > 1 and not self.sliceable(self.p, self.slices):
            raise GroupedMmaUnsupported(f"{self.slices} channel slices of a patch of {self.kb} channels "
                                        f"(a dense conv, whole 16-channel chunks per slice)")

    @staticmethod
    def sliceable(p: ConvProblem, slices: int) -> bool:
        """A dense conv (one group, 8+ input channels) whose C splits into `slices` slices of
        whole 16-channel chunks, at least MIN_SLICE_CHANNELS each."""
        return (p.groups == 1 and not narrow_input(p) and p.C % (16 * slices) == 0
                and p.C // slices >= MIN_SLICE_CHANNELS)

    # ------------------------------------------------------------------ channel block
    @property
    def cg(self) -> int:
        return self.p.C // self.p.groups

    @property
    def fg(self) -> int:
        return self.p.F // self.p.groups

    @property
    def gb(self) -> int:
        return group_block(self.p)

    @property
    def bn(self) -> int:
        return self.gb * self.fg

    @property
    def kb(self) -> int:
        return self.gb * self.cg

    @property
    def channel_blocks(self) -> int:
        return self.p.groups // self.gb

    @property
    def n8(self) -> int:
        return self.bn // 8

    @property
    def k16(self) -> int:
        """16-channel chunks of the block's input channels."""
        return cdiv(self.kb, 16)

    @property
    def ks(self) -> int:
        """Input channels per slice (all the block's without slices)."""
        return self.kb // self.slices

    @property
    def k16s(self) -> int:
        """16-channel chunks per slice."""
        return cdiv(self.ks, 16)

    def slice_chunks(self, chunks, sl: int) -> list[int]:
        """The chunks of `chunks` that lie in slice sl."""
        return [c for c in chunks if sl * self.k16s <= c < (sl + 1) * self.k16s]

    @property
    def kp(self) -> int:
        """Channels per staged pixel row of a slice (see the module doc)."""
        return self.k16s * 16 + 8

    def chunk_range(self, j: int) -> tuple[int, int]:
        """[first, last) 16-channel chunks that n8 column j's groups read."""
        g_lo, g_hi = (8 * j) // self.fg, (8 * j + 7) // self.fg
        return (g_lo * self.cg) // 16, cdiv((g_hi + 1) * self.cg, 16)

    def chunks(self, j: int) -> range:
        return range(*self.chunk_range(j))

    @property
    def nc(self) -> int:
        """Filter blocks staged per (tap, n8 column)."""
        return max(len(self.chunks(j)) for j in range(self.n8))

    def c_lo(self, ops, j):
        """chunk_range(j)[0] for a runtime j."""
        return ops.div(ops.mul(ops.div(ops.mul(j, 8), self.fg), self.cg), 16)

    # ------------------------------------------------------------------ warps
    @property
    def wn(self) -> int:
        """Warps along N: the most that leave each at least two n8 columns and give every warp
        column the same chunk pattern (one code path, see uniform_shift), else the most."""
        for w in (8, 4, 2, 1):
            if self.n8 % w == 0 and (self.n8 // w >= 2 or w == 1) and self._shift_for(w) is not None:
                return w
        return warps_along_n(self.n8)

    def _shift_for(self, w: int):
        ntw = self.n8 // w
        base = [self.chunk_range(j) for j in range(ntw)]
        step = self.chunk_range(ntw)[0] - base[0][0] if w > 1 else 0
        for wn in range(w):
            for jj in range(ntw):
                lo, hi = self.chunk_range(wn * ntw + jj)
                if (lo - base[jj][0], hi - base[jj][1]) != (wn * step, wn * step):
                    return None
        return step

    @property
    def uniform_shift(self):
        """Chunks by which warp column wn's chunk ranges shift per wn when every warp column
        reads the same pattern (then one code path serves all warps); else None."""
        return self._shift_for(self.wn)

    @property
    def wm(self) -> int:
        return WARPS // self.wn

    @property
    def ntw(self) -> int:
        """n8 columns per warp."""
        return self.n8 // self.wn

    @property
    def pixels(self) -> int:
        return self.bh * self.bw

    @property
    def mt(self) -> int:
        """m16 fragments per warp."""
        return cdiv(self.pixels, 16 * self.wm)

    @property
    def block_m(self) -> int:
        return self.mt * 16 * self.wm

    def warp_columns(self, wn: int) -> range:
        return range(wn * self.ntw, (wn + 1) * self.ntw)

    def warp_chunks(self, wn: int) -> list[int]:
        return sorted({c for j in self.warp_columns(wn) for c in self.chunks(j)})

    # ------------------------------------------------------------------ tiles
    @property
    def tiles_h(self) -> int:
        return cdiv(self.p.Ho, self.bh)

    @property
    def tiles_w(self) -> int:
        return cdiv(self.p.Wo, self.bw)

    @property
    def tiles_per_image(self) -> int:
        return self.tiles_h * self.tiles_w

    @property
    def ph(self) -> int:
        p = self.p
        return (self.bh - 1) * p.stride[0] + (p.R - 1) * p.dilation[0] + 1

    @property
    def pw(self) -> int:
        p = self.p
        return (self.bw - 1) * p.stride[1] + (p.S - 1) * p.dilation[1] + 1

    @property
    def row_bytes(self) -> int:
        return self.kp * 2

    @property
    def patch_bytes(self) -> int:
        return self.ph * self.pw * self.row_bytes

    @property
    def filter_bytes(self) -> int:
        return self.p.R * self.p.S * self.n8 * self.nc * BLOCK_BYTES

    @property
    def narrow(self) -> bool:
        return narrow_input(self.p)

    @property
    def stage_items(self) -> int:
        """16-byte copies per patch (per slice); with a narrow input, pixels (C elements each)."""
        return self.ph * self.pw * (1 if self.narrow else self.ks // 8)

    @property
    def stage_vector(self) -> int:
        """Elements one staging store writes at its destination: 8 (a 16-byte copy), or for a
        narrow input the C channels and zeros up to 4 or 8 (an aligned vector store)."""
        return (4 if self.p.C <= 4 else 8) if self.narrow else 8

    @property
    def zero_start(self) -> int | None:
        """First channel of a patch row that no staging store writes but a fragment reads
        (zeroed once per buffer up to the 16-channel chunk's end); None when there is none."""
        start = self.stage_vector if self.narrow else self.ks
        return start if start % 16 else None

    @property
    def filter_rows(self) -> int:
        """16-byte rows of the staged filter (8 channels of one output channel)."""
        return self.filter_bytes // 16

    def image(self, x=None) -> tuple:
        """(H, W, Ho, Wo): the problem's, or those of runtime extents x (lower/common/extents.py:
        index values read at run time, ints where static)."""
        p = self.p
        return (p.H, p.W, p.Ho, p.Wo) if x is None else (x.H, x.W, x.Ho, x.Wo)

    def tile_counts(self, ops, x=None) -> tuple:
        """(tiles along W, tiles per image) of the image (x: runtime extents)."""
        if x is None:
            return self.tiles_w, self.tiles_per_image
        _, _, ho, wo = self.image(x)
        th = ops.div(ops.add(ho, self.bh - 1), self.bh)
        tw = ops.div(ops.add(wo, self.bw - 1), self.bw)
        return tw, ops.mul(th, tw)

    def tile_origin(self, ops, tile, x=None):
        """(n, oh0, ow0) of tile index `tile` (images slowest; x: runtime extents)."""
        tw, per_image = self.tile_counts(ops, x)
        n, rest = ops.div(tile, per_image), ops.rem(tile, per_image)
        return n, ops.mul(ops.div(rest, tw), self.bh), ops.mul(ops.rem(rest, tw), self.bw)

    # ------------------------------------------------------------------ staging
    def stage_item(self, ops, idx, n, oh0, ow0, cb, x=None, sl: int = 0):
        """Copy `idx` of a tile's patch (of its slice sl): (in_image, source element of the
        input, destination byte offset in the patch buffer). 16 bytes = 8 channels of one pixel
        (a narrow input: its C channels, stage_vector elements with the zeros); x: runtime
        extents."""
        p = self.p
        H, W, _, _ = self.image(x)
        q8 = 1 if self.narrow else self.ks // 8
        pix, q = ops.div(idx, q8), ops.rem(idx, q8)
        h = ops.add(ops.sub(ops.mul(oh0, p.stride[0]), p.pad[0]), ops.div(pix, self.pw))
        w = ops.add(ops.sub(ops.mul(ow0, p.stride[1]), p.pad[1]), ops.rem(pix, self.pw))
        ok = ops.all_of(ops.ge(h, 0), ops.lt(h, H), ops.ge(w, 0), ops.lt(w, W))
        src = ops.add(ops.mul(ops.add(ops.mul(ops.add(ops.mul(n, H), h), W), w), p.C),
                      ops.add(ops.mul(cb, self.kb), ops.add(sl * self.ks, ops.mul(q, 8))))
        dst = ops.add(ops.mul(pix, self.row_bytes), ops.mul(q, 16))
        return ok, ops.select(ok, src, 0), dst

    @property
    def k_rows(self) -> bool:
        """The staged filter blocks hold rows of k (8 output channels each, read by
        ldmatrix .trans) for the [R, S, C/G, F] filter, whose output channels are contiguous;
        rows of n (8 input channels each) for [F, R, S, C/G]."""
        return self.p.filter_layout == "hwcf"

    @property
    def vector_filter(self) -> bool:
        """Whether a staged row is one 16-byte load (masked by group): always with k rows
        (8 output channels of one input channel; F/8 whole rows), and with n rows when the 8
        input channels lie in one group (C/G a multiple of 8)."""
        return self.k_rows or self.cg % 8 == 0

    def _filter_row_coords(self, ops, row):
        """(tap, j, block-relative input channel of element 0 ... , the row's minor index):
        rows are (tap, j, cc, half, minor) with minor fastest: minor = n (n rows) or k within
        the half (k rows)."""
        minor = ops.rem(row, 8)
        half = ops.rem(ops.div(row, 8), 2)
        blk = ops.div(row, 16)
        cc = ops.rem(blk, self.nc)
        j = ops.rem(ops.div(blk, self.nc), self.n8)
        tap = ops.div(blk, self.nc * self.n8)
        c0 = ops.add(ops.mul(ops.add(self.c_lo(ops, j), cc), 16), ops.mul(half, 8))
        return tap, j, c0, minor

    def _element(self, ops, tap, f_rel, ci, cb):
        """(valid, filter element index) of block output channel f_rel, block input channel
        ci: valid when ci is in f_rel's group."""
        p = self.p
        g = ops.div(f_rel, self.fg)
        cig = ops.sub(ci, ops.mul(g, self.cg))            # channel within f's group
        ok = ops.all_of(ops.ge(cig, 0), ops.lt(cig, self.cg))
        f = ops.add(ops.mul(cb, self.bn), f_rel)
        if p.filter_layout == "hwcf":
            src = ops.add(ops.mul(ops.add(ops.mul(tap, self.cg), cig), p.F), f)
        else:
            src = ops.add(ops.mul(ops.add(ops.mul(f, p.R * p.S), tap), self.cg), cig)
        return ok, ops.select(ok, src, 0)

    def filter_row(self, ops, row, cb):
        """Row `row` of the staged filter (at byte 16*row): its 8 (valid, filter element index)
        pairs, zeros where invalid (another group's input channel, or past the block's)."""
        tap, j, c0, minor = self._filter_row_coords(ops, row)
        if self.k_rows:
            return [self._element(ops, tap, ops.add(ops.mul(j, 8), i), ops.add(c0, minor), cb) for i in range(8)]
        return [self._element(ops, tap, ops.add(ops.mul(j, 8), minor), ops.add(c0, i), cb) for i in range(8)]

    def filter_row_vector(self, ops, row, cb):
        """The same row as one 16-byte load (vector_filter): (source element of element 0,
        the 8 valid flags); element i is at source + i wherever valid."""
        tap, j, c0, minor = self._filter_row_coords(ops, row)
        if self.k_rows:
            ci = ops.add(c0, minor)
            g = ops.div(ci, self.cg)                       # the input channel's group
            oks = [ops.all_of(ops.lt(ci, self.kb), ops.lt(g, self.gb),
                              ops.lt(ops.sub(ops.add(ops.mul(j, 8), i), ops.mul(g, self.fg)), self.fg),
                              ops.ge(ops.sub(ops.add(ops.mul(j, 8), i), ops.mul(g, self.fg)), 0)) for i in range(8)]
            cig = ops.sub(ci, ops.mul(g, self.cg))
            src = ops.add(ops.mul(ops.add(ops.mul(tap, self.cg), cig), self.p.F), ops.add(ops.mul(cb, self.bn), ops.mul(j, 8)))
            any_ok = ops.lt(ci, self.kb)
        else:
            ok, src = self._element(ops, tap, ops.add(ops.mul(j, 8), minor), c0, cb)
            oks = [ok] * 8
            any_ok = ok
        return ops.select(any_ok, src, 0), oks

    # ------------------------------------------------------------------ fragments
    def a_pixel(self, ops, lane, wm, i):
        """Tile pixel whose row lane `lane` addresses in the ldmatrix of the warp's m16 tile i."""
        return ops.add(ops.mul(ops.add(ops.mul(wm, self.mt), i), 16),
                       ops.add(ops.rem(lane, 8), ops.mul(ops.rem(ops.div(lane, 8), 2), 8)))

    def a_lane_offset(self, ops, lane, wm, i):
        """Byte offset in the patch buffer of that lane's row at tap (0, 0), chunk 0; pixels
        past the tile (padding of the last fragment) read pixel 0 and are never stored."""
        p = self.p
        m = self.a_pixel(ops, lane, wm, i)
        real = ops.lt(m, self.pixels)
        m = ops.select(real, m, 0)
        prow = ops.add(ops.mul(ops.mul(ops.div(m, self.bw), p.stride[0]), self.pw),
                       ops.mul(ops.rem(m, self.bw), p.stride[1]))
        return ops.add(ops.mul(prow, self.row_bytes), ops.mul(ops.div(lane, 16), 16))

    def tap_offset(self, ops, r, s):
        """Bytes every A address moves for filter tap (r, s)."""
        p = self.p
        return ops.mul(ops.add(ops.mul(ops.mul(r, p.dilation[0]), self.pw), s * p.dilation[1]), self.row_bytes)

    def b_block(self, ops, tap, j: int, c: int):
        """Byte offset of the filter block of (tap, n8 column j, chunk c)."""
        lo = self.chunk_range(j)[0]
        return ops.add(ops.mul(tap, self.n8 * self.nc * BLOCK_BYTES), ((j * self.nc) + c - lo) * BLOCK_BYTES)

    def b_lane_offset(self, ops, lane, pairs: bool):
        """ldmatrix address within a block: x2 (lanes 0-15: the two matrices' rows), or x4
        over two adjacent blocks (all 32 lanes)."""
        return ops.mul(lane if pairs else ops.rem(lane, 16), 16)

    def out_pixel(self, ops, lane, wm, i, half):
        """Tile pixel of accumulator registers 2*half, 2*half+1 of m16 tile i (rows lane/4 and
        lane/4 + 8), and the first of their two output channels relative to the n8 column."""
        m = ops.add(ops.mul(ops.add(ops.mul(wm, self.mt), i), 16), ops.add(ops.div(lane, 4), 8 * half))
        return m, ops.mul(ops.rem(lane, 4), 2)


@dataclass(frozen=True)
class TileOption:
    geometry: Geometry
    stages: int              # patch buffers (slice buffers when the geometry has slices)
    ctas_per_sm: int         # co-resident CTAs the shared memory and the register budget allow
    cost: int                # the busiest CTA slot's pixels computed plus staged


def _full_width(p: ConvProblem) -> int:
    """BW of a full-width tile: Wo, split into near-equal spans past 64 columns."""
    return p.Wo if p.Wo <= 64 else cdiv(p.Wo, cdiv(p.Wo, 64))


def tile_options(p: ConvProblem, smem_per_block: int, smem_per_sm: int, num_sms: int,
                 narrow: bool = False) -> list[TileOption]:
    """Tile shapes and ring depths, best first. BW = Wo (split into near-equal spans past 64);
    for every BH, one or two patch buffers, with as many CTAs per SM (at most 2) as shared
    memory allows. Two CTAs cap a thread at 128 registers (MAX_ACC accumulators), one at 255
    (twice as many). Cost: the busiest CTA slot's tiles x the pixels a tile computes (fragment
    padding included) plus those it stages (halo); ties go to taller tiles, then two buffers.
    narrow: half-width tiles too (tuning candidates: smaller patches that leave room for two
    buffers or two CTAs per SM, whose loads overlap the other's math; the cost ignores that)."""
    bw0 = _full_width(p)
    out = []
    for bw in (bw0, cdiv(bw0, 2)) if narrow and bw0 >= 32 else (bw0,):
        out += _options_at(p, bw, 1, smem_per_block, smem_per_sm, num_sms)
    if not out:
        raise GroupedMmaUnsupported("one output row's patch and filter do not fit shared memory "
                                    "within the accumulator budget")
    return sorted(out, key=lambda o: (o.cost, -o.geometry.bh, -o.stages))


SLICE_COUNTS = (2, 4, 8)


def sliced_options(p: ConvProblem, smem_per_block: int, smem_per_sm: int, num_sms: int) -> list[TileOption]:
    """Tile options that stage the patch in channel slices (Geometry.slices) for a dense conv:
    half- and full-width tiles, every height whose slice buffers fit, `stages` slice buffers
    (2 or 4, a divisor of the slice count, so each slice of every tile has its buffer at
    compile time), one CTA per SM unless two fit. Cost: sm_cost (the busiest SM's tiles x the
    pixels a tile computes or stages, whichever is more: the copies overlap the math)."""
    bw0 = _full_width(p)
    out = []
    for bw in (bw0, cdiv(bw0, 2)) if bw0 >= 32 else (bw0,):
        for slices in (n for n in SLICE_COUNTS if Geometry.sliceable(p, n)):
            out += _options_at(p, bw, slices, smem_per_block, smem_per_sm, num_sms)
    return sorted(out, key=lambda o: (o.cost, -o.geometry.bh, o.stages, o.geometry.slices))


def sm_cost(g: Geometry, per_sm: int, num_sms: int) -> int:
    """The busiest SM's pixels: its tiles (all its CTA slots') x the pixels a tile computes
    plus those it stages, or the larger of the two where channel slices overlap the copies
    with the math. A one-CTA 8x32 tile of the VAE's 256 -> 8 output conv (two per SM: 1192)
    measured 27.0 us, 16x32 in four slices (one per SM: 612) 20.4 (H200, convc-tune)."""
    tiles = g.p.N * g.tiles_per_image * g.channel_blocks
    work = max(g.block_m, g.ph * g.pw) if g.slices > 1 else g.block_m + g.ph * g.pw
    return cdiv(tiles, per_sm * num_sms) * per_sm * work


def _options_at(p: ConvProblem, bw: int, slices: int, smem_per_block: int, smem_per_sm: int,
                num_sms: int) -> list[TileOption]:
    """Every height of bw-wide tiles with `slices` channel slices: one or two patch buffers
    (no slices) or 2 or 4 slice buffers dividing the slice count, as many CTAs per SM (at most
    2) as shared memory allows, within the accumulator budget. Cost: sm_cost with slices, else
    the busiest CTA slot's share of it (tile_options' ranking)."""
    stage_counts = (1, 2) if slices == 1 else tuple(st for st in (2, 4) if slices % st == 0)
    out = []
    for bh in range(1, p.Ho + 1):
        g = Geometry(p, bh, bw, slices)
        if g.mt > MAX_MT or g.filter_bytes + stage_counts[0] * g.patch_bytes > smem_per_block:
            break
        for stages in stage_counts:
            smem = g.filter_bytes + stages * g.patch_bytes
            if smem > smem_per_block:
                continue
            per_sm = 2 if 2 * (smem + SMEM_RESERVE) <= smem_per_sm else 1
            if g.mt * g.ntw * 4 > MAX_ACC * (3 - per_sm):
                continue
            cost = sm_cost(g, per_sm, num_sms) // (1 if slices > 1 else per_sm)
            out.append(TileOption(g, stages, per_sm, cost))
    return out
