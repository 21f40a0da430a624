"""CopyProblem: a tensor written whole by copies of other tensors into disjoint slices of it.

What the copy kernel needs to know about one assembled tensor: a channel concatenation (each
piece a channel slice of a channels-last tensor: never contiguous, so IREE 3.13 gives every
piece a `slow_memcpy` dispatch of its own) or the sub-pixel interleave of a transposed conv's
phase outputs (each phase a strided slice of the upsampled image). convc-copy-chains
(passes/match/copy_chains.py) replaces such a chain of IREE copy dispatches by one dispatch
reading every piece, described by this; like ConvProblem it round-trips through a DictAttr
(`convc.copy`) so each pass can run alone on a file.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from .problem import DTYPE_BYTES


@dataclass(frozen=True)
class CopyPiece:
    """Dispatch operand `operand` written to the destination elements offsets + strides * index
    over `sizes` (destination rank). The operand is read whole in row-major order, or, with
    `source` (its shape), the box at `source_offsets` of `source_sizes` (a channel slice of a
    channels-last tensor; every sd-th frame of a volume with `source_strides`), in row-major
    order; the box's non-unit sizes are the destination's, in order."""

    operand: int
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    source: tuple[int, ...] = ()
    source_offsets: tuple[int, ...] = ()
    source_sizes: tuple[int, ...] = ()
    source_strides: tuple[int, ...] = ()      # () : unit strides

    def __post_init__(self):
        if self.source and not self.source_strides:
            object.__setattr__(self, "source_strides", (1,) * len(self.source))
        for k in ("offsets", "sizes", "strides", "source", "source_offsets", "source_sizes", "source_strides"):
            object.__setattr__(self, k, tuple(int(x) for x in getattr(self, k)))
        if not (len(self.offsets) == len(self.sizes) == len(self.strides)):
            raise ValueError("a piece's offsets, sizes and strides have the destination's rank")
        if min(self.sizes, default=1) <= 0 or min(self.strides, default=1) <= 0 or min(self.offsets, default=0) < 0:
            raise ValueError("a piece has positive sizes and strides and non-negative offsets")
        if self.source:
            if not (len(self.source) == len(self.source_offsets) == len(self.source_sizes)):
                raise ValueError("a piece's source box has the source's rank")
            if [x for x in self.source_sizes if x != 1] != [x for x in self.sizes if x != 1]:
                raise ValueError("a piece's source box and destination box differ")
            if min(self.source_strides) <= 0:
                raise ValueError("a piece's source strides are positive")
            if any(o < 0 or o + (n - 1) * st >= d for o, n, st, d in zip(self.source_offsets, self.source_sizes,
                                                                       self.source_strides, self.source)):
                raise ValueError("a piece's source box reaches past its source")

    @property
    def elements(self) -> int:
        return math.prod(self.sizes)

    @property
    def source_elements(self) -> int:
        """Elements of the operand (what its binding holds)."""
        return math.prod(self.source) if self.source else self.elements

    def box(self, shape: tuple[int, ...]) -> tuple[int, int, tuple[tuple[int, int, int], ...]]:
        """(first destination element, first source element, ((size, destination step, source
        step), ...)): the piece as a strided box over the flat destination and the flat source,
        unit axes dropped and axes merged where stepping one index equals stepping the next one
        through its whole size on both sides, innermost last."""
        steps = [math.prod(shape[d + 1:]) for d in range(len(shape))]
        base = sum(o * st for o, st in zip(self.offsets, steps))
        dst = [(size, stride * st) for size, stride, st in zip(self.sizes, self.strides, steps) if size != 1]
        if self.source:
            ssteps = [math.prod(self.source[d + 1:]) for d in range(len(self.source))]
            sbase = sum(o * st for o, st in zip(self.source_offsets, ssteps))
            src = [st * k for size, st, k in zip(self.source_sizes, ssteps, self.source_strides) if size != 1]
        else:
            sbase = 0
            src = [math.prod(size for size, _ in dst[d + 1:]) for d in range(len(dst))]
        merged: list[list[int]] = []
        for (size, step), sstep in zip(dst, src):
            if merged and merged[-1][1] == size * step and merged[-1][2] == size * sstep:
                merged[-1] = [merged[-1][0] * size, step, sstep]
            else:
                merged.append([size, step, sstep])
        return base, sbase, tuple((a, b, c) for a, b, c in merged) or ((1, 1, 1),)


@dataclass(frozen=True)
class CopyProblem:
    """The destination `shape` of `dtype`, written by `pieces` (operands 0..len(pieces)-1 of
    the dispatch, in order): the dispatch's only result. `into`: the destination is also
    operand len(pieces), tied to the result, and the pieces write only their slices of it (a
    chain longer than one dispatch's bindings allow continues in a second dispatch)."""

    shape: tuple[int, ...]
    dtype: str
    pieces: tuple[CopyPiece, ...]
    into: bool = False
    # runtime sizes: per destination axis, the push-constant word that holds its size (-1: the
    # static size in `shape`; a dynamic axis's entry in `shape` is the size planned for). Every
    # axis up to the last dynamic one is a "row" axis that every piece covers whole on both
    # sides (a channel concatenation of images of any size), so the destination is `rows` (a
    # runtime product) times a static row, and each piece a static box of every row.
    dynamic: tuple[int, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(x) for x in self.shape))
        object.__setattr__(self, "pieces", tuple(self.pieces))
        object.__setattr__(self, "dynamic", tuple(int(x) for x in self.dynamic))
        if self.dynamic and len(self.dynamic) != len(self.shape):
            raise ValueError("a copy's runtime sizes name a word (or -1) per destination axis")
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"unsupported copy dtype {self.dtype!r}")
        if not self.pieces:
            raise ValueError("a copy problem has pieces")
        for i, p in enumerate(self.pieces):
            if p.operand != i or len(p.sizes) != len(self.shape):
                raise ValueError("piece i is operand i, of the destination's rank")
            if any(o + (n - 1) * s >= d for o, n, s, d in zip(p.offsets, p.sizes, p.strides, self.shape)):
                raise ValueError(f"piece {i} reaches past the destination")
            for a in range(self.row_axes):
                whole = p.offsets[a] == 0 and p.sizes[a] == self.shape[a] and p.strides[a] == 1
                if p.source:
                    whole = whole and p.source[a] == self.shape[a] and p.source_offsets[a] == 0 \
                        and p.source_sizes[a] == self.shape[a] and p.source_strides[a] == 1
                if not whole:
                    raise ValueError(f"piece {i} does not cover axis {a} (sized at run time, or outside one) whole")

    @property
    def runtime_sizes(self) -> bool:
        return any(k >= 0 for k in self.dynamic)

    @property
    def num_constants(self) -> int:
        """Push-constant words the dispatch passes (its runtime sizes)."""
        return max(self.dynamic, default=-1) + 1

    @property
    def row_axes(self) -> int:
        """Leading axes every piece covers whole: through the last one sized at run time."""
        return max((a + 1 for a, k in enumerate(self.dynamic) if k >= 0), default=0)

    def static_elements(self, shape) -> int:
        """Elements of a tensor of `shape` (the destination's rank) without its axes sized at
        run time: what the push-constant words of those axes multiply (a binding's size)."""
        return math.prod(1 if self.dynamic and self.dynamic[a] >= 0 else d for a, d in enumerate(shape))

    def row_elements(self, piece: "CopyPiece | None" = None) -> int:
        """Elements of one row of the destination (or of a piece's box in one row)."""
        return math.prod((piece.sizes if piece else self.shape)[self.row_axes:])

    @property
    def num_operands(self) -> int:
        return len(self.pieces)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def name(self) -> str:
        """Kernel symbol: the shape and a digest of the pieces (bounded length)."""
        digest = hashlib.sha1(repr(self.to_dict()).encode()).hexdigest()[:8]
        return f"copy{len(self.pieces)}_{self.shape_text()}_{self.dtype}_{digest}"

    def shape_text(self) -> str:
        """The destination's shape, D for a size read at run time."""
        return "x".join("D" if self.dynamic and self.dynamic[a] >= 0 else str(n) for a, n in enumerate(self.shape))

    def vector_widths(self) -> list[int]:
        """Elements per vector of each piece: the widest power of two up to 16 bytes that
        divides its innermost run (contiguous on both sides), its first elements and every
        outer step, so that each vector is one aligned access on both sides (1 where the
        innermost run is strided)."""
        out = []
        for piece in self.pieces:
            base, sbase, axes = piece.box(self.shape)
            inner, step, sstep = axes[-1]
            v = 16 // DTYPE_BYTES[self.dtype]
            if step != 1 or sstep != 1:
                v = 1
            while v > 1 and (inner % v or base % v or sbase % v
                             or any(st % v or sst % v for _, st, sst in axes[:-1])
                             or (self.runtime_sizes and self.row_elements(piece) % v)):
                v //= 2
            out.append(v)
        return out

    def shape_str(self) -> str:
        moved = 2 * sum(p.elements for p in self.pieces) * DTYPE_BYTES[self.dtype]
        size = (f"{moved / 1e6:.1f} MB moved" if not self.runtime_sizes
                else f"{moved // math.prod(self.shape[:self.row_axes])} bytes moved per row")
        return (f"{len(self.pieces)} copies into {self.shape_text()} {self.dtype}"
                f"{' (in place)' if self.into else ''} ({size})")

    def to_dict(self) -> dict:
        d = ({"into": True} if self.into else {}) | ({"dynamic": list(self.dynamic)} if self.runtime_sizes else {})
        return d | {"shape": list(self.shape), "dtype": self.dtype,
                "pieces": [{"operand": p.operand, "offsets": list(p.offsets), "sizes": list(p.sizes),
                            "strides": list(p.strides)}
                           | ({"source": list(p.source), "source_offsets": list(p.source_offsets),
                               "source_sizes": list(p.source_sizes)} if p.source else {})
                           | ({"source_strides": list(p.source_strides)}
                              if p.source and any(k != 1 for k in p.source_strides) else {})
                           for p in self.pieces]}

    @classmethod
    def from_dict(cls, d: dict) -> "CopyProblem":
        return cls(tuple(d["shape"]), d["dtype"], tuple(CopyPiece(**p) for p in d["pieces"]), bool(d.get("into", False)),
                   tuple(d.get("dynamic", ())))


def exact_cover(shape: tuple[int, ...], pieces) -> str | None:
    """None when the pieces write every destination element exactly once, else why not."""
    if sum(p.elements for p in pieces) != math.prod(shape):
        return "the pieces do not add up to the destination"
    for i, a in enumerate(pieces):
        for b in pieces[i + 1:]:
            if overlap(a, b):
                return "two pieces overlap"
    return None


def overlap(a: CopyPiece, b: CopyPiece) -> bool:
    """Whether pieces a and b write a common destination element."""
    return all(_meet(a, b, d) for d in range(len(a.offsets)))


def _meet(a: CopyPiece, b: CopyPiece, d: int) -> bool:
    """Whether the index progressions of a and b along axis d share a value (constant time for
    equal strides, else linear in the shorter one)."""
    (o1, n1, s1), (o2, n2, s2) = (a.offsets[d], a.sizes[d], a.strides[d]), (b.offsets[d], b.sizes[d], b.strides[d])
    if o1 + s1 * (n1 - 1) < o2 or o2 + s2 * (n2 - 1) < o1:
        return False
    if s1 == s2:
        return (o1 - o2) % s1 == 0
    if n1 > n2:
        (o1, n1, s1), (o2, n2, s2) = (o2, n2, s2), (o1, n1, s1)
    return any((o1 + s1 * i - o2) % s2 == 0 and o2 <= o1 + s1 * i <= o2 + s2 * (n2 - 1) for i in range(n1))
