"""Address and halo logic of the AMD LDS-direct im2col loader, as pure integer math.

This module is the single definition of *where every lane loads from and where its bytes land
in LDS*. It is written against the integer-ops interface of common/int_ops.py and evaluated
by its two backends:

- `NumpyOps` (test/python/test_amd_loader_model.py): lanes are numpy arrays; the model test
  simulates the loader filling the LDS ring and compares with a numpy im2col.
- `IrOps` (passes/lower/amd/lds_loader.py): every operation builds `arith` IR, so the kernel's
  address arithmetic is this code by construction.

Python ints fold in both backends, so static parts (tile shapes, strides, pads) cost nothing.

GEMM view (as every convc kernel): M = N*Ho*Wo output pixels, K = R*S*C ordered (r, s, c)
with channels fastest; the activation tile is [rows=M][cols=K], the filter tile [rows=F][cols=K].

LDS layout of one tile: row-major [rows][cols] in elements, cut into `vec`-element chunks (the
bytes one lane moves per direct-to-LDS load). A load instruction writes 64 lanes' chunks
contiguously from its uniform base (M0), so the tile position a lane fills is fixed by its lane
number; the bank-conflict swizzle is therefore applied to the *source*: the chunk written at
physical position (row, pc) holds logical chunk `swizzle_chunk(row, pc)`. The swizzle XORs
`granule`-element groups (the MFMA operand read width) by a function of the row, is an
involution, and the MFMA side reads logical chunk kc of a row at physical `swizzle_chunk(row, kc)`.

Source addresses are element offsets into the flat NHWC input / [F][K] filter. Halo, ragged-M
and ragged-K lanes get `OOB_SENTINEL`, an offset past the buffer resource's range, so the
hardware returns zeros (`buffer_load_* ... lds` with an out-of-range voffset).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import ConvProblem

# Element offset whose byte offset (2-byte elements: 0x80000000) is past any buffer resource
# range convc creates (the planner declines buffers of 2 GiB or more).
OOB_SENTINEL = 1 << 30
MAX_BUFFER_BYTES = (1 << 31) - 1
SUBPATHS = ("pointwise", "substrip", "per_lane")

LDS_BANK_WINDOW_BYTES = 128     # 32 banks x 4 bytes


class AddressingError(ValueError):
    """The loader cannot serve this shape (the planner turns it into a decline reason)."""


# ------------------------------------------------------------------------- static geometry
@dataclass(frozen=True)
class TileGeometry:
    """One operand tile in LDS and how the loading lanes cover it."""

    rows: int       # block_m (activation) or block_n (filter)
    cols: int       # block_k
    vec: int        # elements per lane per direct-to-LDS load
    lanes: int      # loading lanes (loading waves x 64)
    granule: int    # elements per swizzle granule (the MFMA operand read width)
    wave: int = 64

    def __post_init__(self):
        if self.cols % self.vec or self.granule % self.vec or self.cols % self.granule:
            raise AddressingError(f"tile K {self.cols} / lane width {self.vec} / granule {self.granule} do not nest")
        if (self.rows * self.chunks_per_row) % self.lanes or self.lanes % self.wave:
            raise AddressingError(f"{self.rows}x{self.cols} tile is not a whole number of {self.lanes}-lane loads")
        g = self.granules_per_row
        if g & (g - 1):
            raise AddressingError(f"{g} swizzle granules per row is not a power of two")

    @property
    def chunks_per_row(self) -> int:
        return self.cols // self.vec

    @property
    def granules_per_row(self) -> int:
        return self.cols // self.granule

    @property
    def loads_per_lane(self) -> int:
        """Direct-to-LDS loads each loading lane issues for one tile."""
        return self.rows * self.chunks_per_row // self.lanes

    @property
    def elements(self) -> int:
        return self.rows * self.cols


def swizzle_chunk(ops, g: TileGeometry, row, chunk):
    """Physical <-> logical chunk of a row (an involution): granule index XOR a row function
    chosen so the 16 rows one MFMA operand read touches spread over all LDS banks."""
    per_gran = g.granule // g.vec
    row_bytes = g.cols * 2
    rows_per_window = max(1, LDS_BANK_WINDOW_BYTES // row_bytes)
    key = ops.rem(ops.div(row, rows_per_window), g.granules_per_row)
    gran = ops.div(chunk, per_gran)
    return ops.add(ops.mul(ops.xor(gran, key), per_gran), ops.rem(chunk, per_gran))


def lds_slot(ops, g: TileGeometry, load: int, lane):
    """(row, physical chunk) that loading lane `lane` (0 .. lanes-1) fills with its load number
    `load` (0 .. loads_per_lane-1): load instruction `load` of wave w writes chunks
    (load*lanes + w*64) .. +63, lane-contiguous."""
    q = ops.add(load * g.lanes, lane)
    return ops.div(q, g.chunks_per_row), ops.rem(q, g.chunks_per_row)


def wave_lds_base(ops, g: TileGeometry, load: int, wave):
    """Element offset (inside the tile) where loading wave `wave`'s load number `load` starts:
    the wave-uniform M0 part of the destination (the hardware adds lane * vec)."""
    return ops.add(load * g.lanes * g.vec, ops.mul(wave, g.wave * g.vec))


def lds_read_offset(ops, g: TileGeometry, row, logical_chunk):
    """Element offset inside the tile of logical chunk `logical_chunk` of `row` (MFMA side)."""
    return ops.add(ops.mul(row, g.cols), ops.mul(swizzle_chunk(ops, g, row, logical_chunk), g.vec))


# ------------------------------------------------------------------------- conv addressing
def choose_subpath(cg: ConvProblem, block_k: int, vec: int) -> str:
    """pointwise: R=S=1, stride 1, no pad (address = m*C + k);
    substrip: block_k <= C and C % block_k == 0 (one (r, s) per tile, uniform);
    per_lane: otherwise (each lane decomposes its own k into (r, s, c)).
    Raises AddressingError when a lane's `vec` channels could straddle two taps."""
    if cg.C % vec:
        raise AddressingError(f"C={cg.C} is not a multiple of the {vec}-element ({2 * vec} B) lane load")
    if 2 * cg.N * cg.H * cg.W * cg.C > MAX_BUFFER_BYTES or 2 * cg.F * cg.gemm_k > MAX_BUFFER_BYTES:
        raise AddressingError("an operand of 2 GiB or more does not fit one buffer resource")
    if cg.R == 1 and cg.S == 1 and cg.stride == (1, 1) and not any(cg.pad):
        return "pointwise"
    if block_k <= cg.C and cg.C % block_k == 0:
        return "substrip"
    return "per_lane"


def activation_source(ops, cg: ConvProblem, subpath: str, block_k: int, vec: int, m, k0, chunk):
    """Element offset into the NHWC input of logical chunk `chunk` (vec channels) of im2col row
    `m` in the K tile starting at `k0`, or OOB_SENTINEL for halo / ragged lanes."""
    k = ops.add(k0, ops.mul(chunk, vec))
    k_ok = True if cg.gemm_k % block_k == 0 else ops.lt(k, cg.gemm_k)
    if subpath == "pointwise":
        ok = ops.all_of(ops.lt(m, cg.gemm_m), k_ok)
        return ops.select(ok, ops.add(ops.mul(m, cg.C), k), OOB_SENTINEL)
    if subpath == "substrip":
        rs = ops.div(k0, cg.C)                        # uniform over the tile
        c = ops.add(ops.rem(k0, cg.C), ops.mul(chunk, vec))
        k_ok = True                                   # C % block_k == 0 => K % block_k == 0
    elif subpath == "per_lane":
        rs = ops.div(k, cg.C)
        c = ops.rem(k, cg.C)
    else:
        raise AddressingError(f"unknown sub-path {subpath!r}")
    r = ops.div(rs, cg.S)
    s = ops.rem(rs, cg.S)
    howo = cg.Ho * cg.Wo
    n = ops.div(m, howo)
    t = ops.rem(m, howo)
    ho = ops.div(t, cg.Wo)
    wo = ops.rem(t, cg.Wo)
    h = ops.sub(ops.add(ops.mul(ho, cg.stride[0]), ops.mul(r, cg.dilation[0])), cg.pad[0])
    w = ops.sub(ops.add(ops.mul(wo, cg.stride[1]), ops.mul(s, cg.dilation[1])), cg.pad[1])
    # Halo checks only where a halo can exist (static extents of h and w).
    h_max = (cg.Ho - 1) * cg.stride[0] + (cg.R - 1) * cg.dilation[0] - cg.pad[0]
    w_max = (cg.Wo - 1) * cg.stride[1] + (cg.S - 1) * cg.dilation[1] - cg.pad[1]
    ok = ops.all_of(
        ops.lt(m, cg.gemm_m), k_ok,
        ops.ge(h, 0) if cg.pad[0] > 0 else True,
        ops.lt(h, cg.H) if h_max >= cg.H else True,
        ops.ge(w, 0) if cg.pad[1] > 0 else True,
        ops.lt(w, cg.W) if w_max >= cg.W else True)
    addr = ops.add(ops.mul(ops.add(ops.mul(ops.add(ops.mul(n, cg.H), h), cg.W), w), cg.C), c)
    return ops.select(ok, addr, OOB_SENTINEL)


def filter_source(ops, cg: ConvProblem, block_k: int, vec: int, f, k0, chunk):
    """Element offset into the [F][K] filter of chunk `chunk` of filter row `f` in the K tile
    at `k0`, or OOB_SENTINEL past F or K."""
    k = ops.add(k0, ops.mul(chunk, vec))
    ok = ops.all_of(ops.lt(f, cg.F), True if cg.gemm_k % block_k == 0 else ops.lt(k, cg.gemm_k))
    return ops.select(ok, ops.add(ops.mul(f, cg.gemm_k), k), OOB_SENTINEL)


def lane_source(ops, cg: ConvProblem, g: TileGeometry, operand: str, subpath: str,
                row0, k0, load: int, lane):
    """Full per-lane story for one direct-to-LDS load: which (row, logical chunk) the lane's
    fixed LDS slot holds, and the source element offset it must read. operand: "act"|"filter";
    row0: the workgroup's first M row (act) or filter row (filter)."""
    row, pc = lds_slot(ops, g, load, lane)
    chunk = swizzle_chunk(ops, g, row, pc)
    gr = ops.add(row0, row)
    if operand == "act":
        return activation_source(ops, cg, subpath, g.cols, g.vec, gr, k0, chunk)
    return filter_source(ops, cg, g.cols, g.vec, gr, k0, chunk)


# ------------------------------------------------------------------------- the LDS ring
@dataclass(frozen=True)
class RingPlan:
    """When the loading waves issue each K tile, wait, and meet the MFMA waves.

    Iteration t (0 .. ktiles-1): loading waves wait until tile t has landed (`s_waitcnt
    vmcnt(n)`: loads complete in issue order), every wave meets at barrier t, the MFMA waves
    then read stage t % stages while the loading waves issue tile t + stages - 1 into stage
    (t - 1) % stages, which the MFMA waves finished reading before barrier t.
    """

    ktiles: int
    stages: int
    loads_per_tile: int     # direct-to-LDS loads per loading lane per K tile (both operands)

    def __post_init__(self):
        if self.stages < 2:
            raise AddressingError("the LDS ring needs at least two stages")
        if (self.stages - 1) * self.loads_per_tile > 63:
            raise AddressingError(f"{self.stages - 1} tiles x {self.loads_per_tile} loads in flight exceed vmcnt (63)")

    @property
    def prologue(self) -> int:
        """Tiles issued before the first barrier."""
        return min(self.ktiles, self.stages - 1)

    @property
    def steady(self) -> int:
        """Iterations 0 .. steady-1 issue a tile after their barrier (a runtime loop)."""
        return max(0, self.ktiles - (self.stages - 1))

    def steady_wait(self) -> int:
        return (self.stages - 2) * self.loads_per_tile

    def tail_waits(self) -> list[tuple[int, int]]:
        """(t, vmcnt) of the last iterations, which issue nothing."""
        return [(t, (self.ktiles - 1 - t) * self.loads_per_tile) for t in range(self.steady, self.ktiles)]

    def stage_of(self, tile):
        return tile % self.stages

    def events(self) -> list[tuple]:
        """The loading waves' program as a flat list: ("issue", tile, stage), ("wait", n),
        ("barrier", t). The MFMA waves read stage t % stages between barrier t and t + 1."""
        ev = [("issue", t, t % self.stages) for t in range(self.prologue)]
        for t in range(self.steady):
            nxt = t + self.stages - 1
            ev += [("wait", self.steady_wait()), ("barrier", t), ("issue", nxt, nxt % self.stages)]
        for t, n in self.tail_waits():
            ev += [("wait", n), ("barrier", t)]
        return ev
