"""Typed shared-memory carve-up: a kernel's one workgroup allocation as named regions.

IREE places separate workgroup allocations in no particular order (docs: iree-integration),
so every kernel makes one 1024-aligned allocation and addresses tiles and barriers at fixed
offsets in it. A layout dataclass names those offsets as `Region`s, laid out once by `Carve`
(in order, each at its alignment), and `SharedBlock` turns a region and an index into an i64
shared address, so no emitter adds byte offsets by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ir, arith_d, memref_d, parse_attr
from .primitives import I64, address_of, i64, index_to

BARRIER_BYTES = 8                 # one mbarrier object
BLOCK_ALIGN = 1024                # 128B-swizzled TMA/wgmma tiles want 1024 B alignment


@dataclass(frozen=True)
class Region:
    """`count` elements of `size` bytes from byte `offset` (stages, slots or barriers)."""
    offset: int
    size: int
    count: int = 1

    def at(self, i: int) -> int:
        return self.offset + self.size * i

    @property
    def end(self) -> int:
        return self.offset + self.size * self.count


class OperandRingNames:
    """The byte-offset names the planner and tests read off a TMA operand-ring layout (regions
    `a`, `b` per ring stage, `out` staging, `full` barriers), shared by the sm_90a and sm_100a
    persistent layouts."""

    stages = property(lambda self: self.a.count)
    a_stage = property(lambda self: self.a.size)
    b_stage = property(lambda self: self.b.size)
    a0 = property(lambda self: self.a.offset)
    b0 = property(lambda self: self.b.offset)
    out0 = property(lambda self: self.out.offset)
    bars = property(lambda self: self.full.offset)


class Carve:
    """Lays regions out one after another from byte `top`."""

    def __init__(self, top: int = 0):
        self.top = top

    def take(self, size: int, count: int = 1, align: int = 1) -> Region:
        r = Region(-(-self.top // align) * align, size, count)
        self.top = r.end
        return r

    def barriers(self, count: int) -> Region:
        return self.take(BARRIER_BYTES, count)


class SharedBlock:
    """The kernel's allocation (made by the target's Machine) and addresses in it."""

    def __init__(self, machine, total: int):
        self.total = total
        self.memref = machine.alloc_shared_bytes(total, BLOCK_ALIGN)
        self.base = address_of(self.memref)

    def view(self, dtype: ir.Type) -> ir.Value:
        """The whole allocation as a flat workgroup memref of `dtype` elements (for vector and
        scalar loads and stores at element indices)."""
        count = self.total // (dtype.width // 8)
        space = parse_attr("#gpu.address_space<workgroup>")
        zero = arith_d.constant(ir.IndexType.get(), 0)
        return memref_d.view(ir.MemRefType.get([count], dtype, memory_space=space), self.memref, zero, [])

    def at(self, offset):
        """i64 shared address of byte `offset` (an int or an i64 value)."""
        return arith_d.addi(self.base, i64(offset) if isinstance(offset, int) else offset)

    def element(self, region: Region, index):
        """Address of element `index` (an int, or an index value) of `region`."""
        if isinstance(index, int):
            return self.at(region.at(index))
        return self.at(arith_d.addi(i64(region.offset), arith_d.muli(index_to(index, I64()), i64(region.size))))
