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
    """Dispatch operand `operand`, read whole in row-major order, written to the destination
    elements offsets + strides * index over `sizes` (destination rank; the source's shape is
    `sizes` with its unit dims dropped where the source has fewer)."""

    operand: int
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]

    def __post_init__(self):
        for k in ("offsets", "sizes", "strides"):
            object.__setattr__(self, k, tuple(int(x) for x in getattr(self, k)))
        if not (len(self.offsets) == len(self.sizes) == len(self.strides)):
            raise ValueError("a piece's offsets, sizes and strides have the destination's rank")
        if min(self.sizes, default=1) <= 0 or min(self.strides, default=1) <= 0 or min(self.offsets, default=0) < 0:
            raise ValueError("a piece has positive sizes and strides and non-negative offsets")

    @property
    def elements(self) -> int:
        return math.prod(self.sizes)

    def axes(self, shape: tuple[int, ...]) -> tuple[int, tuple[tuple[int, int], ...]]:
        """(first destination element, ((size, destination step), ...)): the piece as a strided
        box over the flat destination, unit axes dropped and axes merged where stepping one
        index equals stepping the next one through its whole size, innermost last."""
        steps = [math.prod(shape[d + 1:]) for d in range(len(shape))]
        base = sum(o * st for o, st in zip(self.offsets, steps))
        axes: list[list[int]] = []
        for size, stride, st in zip(self.sizes, self.strides, steps):
            if size == 1:
                continue
            step = stride * st
            axes.append([size, step])
        merged: list[list[int]] = []
        for size, step in axes:
            if merged and merged[-1][1] == size * step:
                merged[-1] = [merged[-1][0] * size, step]
            else:
                merged.append([size, step])
        return base, tuple((s, st) for s, st in merged) or ((1, 1),)


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

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(x) for x in self.shape))
        object.__setattr__(self, "pieces", tuple(self.pieces))
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"unsupported copy dtype {self.dtype!r}")
        if not self.pieces:
            raise ValueError("a copy problem has pieces")
        for i, p in enumerate(self.pieces):
            if p.operand != i or len(p.sizes) != len(self.shape):
                raise ValueError("piece i is operand i, of the destination's rank")
            if any(o + (n - 1) * s >= d for o, n, s, d in zip(p.offsets, p.sizes, p.strides, self.shape)):
                raise ValueError(f"piece {i} reaches past the destination")

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
        return f"copy{len(self.pieces)}_{'x'.join(map(str, self.shape))}_{self.dtype}_{digest}"

    def vector_widths(self) -> list[int]:
        """Elements per vector of each piece: the widest power of two up to 16 bytes that
        divides its innermost run (contiguous in the destination), its first element and every
        outer step, so that each vector is one aligned access on both sides (1 where the
        innermost run is strided)."""
        out = []
        for piece in self.pieces:
            base, axes = piece.axes(self.shape)
            inner, step = axes[-1]
            v = 16 // DTYPE_BYTES[self.dtype]
            if step != 1:
                v = 1
            while v > 1 and (inner % v or base % v or any(st % v for _, st in axes[:-1])):
                v //= 2
            out.append(v)
        return out

    def shape_str(self) -> str:
        moved = 2 * sum(p.elements for p in self.pieces) * DTYPE_BYTES[self.dtype]
        return (f"{len(self.pieces)} copies into {'x'.join(map(str, self.shape))} {self.dtype}"
                f"{' (in place)' if self.into else ''} ({moved / 1e6:.1f} MB moved)")

    def to_dict(self) -> dict:
        d = {"into": True} if self.into else {}
        return d | {"shape": list(self.shape), "dtype": self.dtype,
                "pieces": [{"operand": p.operand, "offsets": list(p.offsets), "sizes": list(p.sizes),
                            "strides": list(p.strides)} for p in self.pieces]}

    @classmethod
    def from_dict(cls, d: dict) -> "CopyProblem":
        return cls(tuple(d["shape"]), d["dtype"], tuple(CopyPiece(**p) for p in d["pieces"]), bool(d.get("into", False)))


def exact_cover(shape: tuple[int, ...], pieces) -> str | None:
    """None when the pieces write every destination element exactly once, else why not."""
    if sum(p.elements for p in pieces) != math.prod(shape):
        return "the pieces do not add up to the destination"
    for i, a in enumerate(pieces):
        for b in pieces[i + 1:]:
            if all(_meet(a, b, d) for d in range(len(shape))):
                return "two pieces overlap"
    return None


def _meet(a: CopyPiece, b: CopyPiece, d: int) -> bool:
    """Whether the index progressions of a and b along axis d share a value."""
    xs = set(range(a.offsets[d], a.offsets[d] + a.sizes[d] * a.strides[d], a.strides[d]))
    return any(v in xs for v in range(b.offsets[d], b.offsets[d] + b.sizes[d] * b.strides[d], b.strides[d]))
