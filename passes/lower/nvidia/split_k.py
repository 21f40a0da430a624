"""Split-K over a cluster for the cooperative warp-specialized kernel (sm90_ws_cooperative with
Schedule.split_k = S): the S CTAs of a cluster compute one output tile, CTA r the k-tiles
[r K / S, (r + 1) K / S), and reduce through distributed shared memory.

Why: layers with about a hundred 64-row tiles are bound by the operand bytes each SM takes in
(bench/NOTES.md, v17); 128x256 tiles take half the bytes per MAC but leave most SMs idle
unless their K is shared out. A 128x256 k-step runs at the tensor cores' rate (~590 ns on an
H200), and a partial tile moves between CTAs of a cluster without touching L2.

Reduction: CTA r owns the columns [r N / S, (r + 1) N / S) of the tile. After a cluster
barrier (no CTA reads its ring any more) each consumer thread pushes its fragments of every
other slice into the owner's ring (st.shared::cluster, fire and forget), in the threads'
fragment order ([source rank][warpgroup][8-column block][thread], 16 bytes per thread: no
layout change, no bank conflicts); after a second cluster barrier each owner adds the S
parts of its slice in rank order (its own from registers; the same order for every column,
so the sums do not depend on timing) and its warpgroups run the epilogue on that slice.
Pulling the slices instead (ld.shared::cluster after one barrier) measured 3.5-4.9 us from
the end of the main loop to the staged slice on an H200.
"""

from __future__ import annotations

from ...ir import ir, arith_d, llvm_d
from ..common.emit import vec_type
from .primitives import I64, as_shared_ptr, index_to, undef_accumulator

CHUNK_BYTES = 16                  # one thread's 4 floats of an 8-column block


def partial_bytes(block_n: int, warpgroups: int = 2, threads: int = 128) -> int:
    """Shared memory the receive buffer takes (a slot per source rank, both consumer
    warpgroups, 64 rows each): the size of one f32 tile."""
    return warpgroups * (block_n // 8) * threads * CHUNK_BYTES


def _slot_offset(e, src, cw, chunk, width: int, wtid):
    """Byte offset of (source rank, warpgroup, 8-column block of the slice, thread) in a
    receiving CTA's buffer: [src][cw][chunk][thread] x 16 bytes."""
    chunks = width // 8
    return e.mul(e.add(e.mul(e.add(e.mul(e.add(e.mul(src, 2), cw), chunks), chunk), 128), wtid), CHUNK_BYTES)


def _vec4(vals):
    vec = llvm_d.mlir_undef(vec_type(4, "f32"))
    for i, v in enumerate(vals):
        vec = llvm_d.insertelement(vec, v, arith_d.constant(ir.IntegerType.get_signless(32), i))
    return vec


def push_slices(e, acc, block_n: int, slices: int, base_i64, cw, wtid, rank) -> None:
    """Store this thread's fragments of every other CTA's column slice into that CTA's
    buffer (st.shared::cluster: fire and forget; this CTA keeps its own slice in registers)."""
    from ...ir import nvvm_d
    f32 = ir.F32Type.get()
    width = block_n // slices
    for q in range(slices):
        with e.if_(e.cmp("ne", rank, q)):
            for c in range(width // 8):
                j = q * width // 8 + c
                vec = _vec4([llvm_d.extractvalue(f32, acc, [4 * j + i]) for i in range(4)])
                local = arith_d.addi(base_i64, index_to(_slot_offset(e, rank, cw, c, width, wtid), I64()))
                remote = nvvm_d.MapaOp(ir.Type.parse("!llvm.ptr<7>"), as_shared_ptr(local),
                                       arith_d.constant(ir.IntegerType.get_signless(32), q)).result
                llvm_d.store(vec, remote, alignment=16)


def reduce_pushed(e, acc, block_n: int, slices: int, base_i64, cw, wtid, rank):
    """This CTA's column slice summed over the cluster in rank order (its own part from
    registers, the others from its buffer), as an m64n{block_n / slices} accumulator."""
    f32 = ir.F32Type.get()
    width = block_n // slices
    out = undef_accumulator(width)
    for c in range(width // 8):
        own = None
        for q in range(slices):                  # this CTA's own fragments of slice `rank`
            vec = _vec4([llvm_d.extractvalue(f32, acc, [4 * (q * width // 8 + c) + i]) for i in range(4)])
            own = vec if own is None else arith_d.select(e.cmp("eq", rank, q), vec, own)
        total = None
        for src in range(slices):
            addr = arith_d.addi(base_i64, index_to(_slot_offset(e, e.c(src), cw, c, width, wtid), I64()))
            got = llvm_d.load(vec_type(4, "f32"), as_shared_ptr(addr), alignment=16)
            v = arith_d.select(e.cmp("eq", rank, src), own, got)
            total = v if total is None else arith_d.addf(total, v)
        for i in range(4):
            x = llvm_d.extractelement(total, arith_d.constant(ir.IntegerType.get_signless(32), i))
            out = llvm_d.insertvalue(out, x, [4 * c + i])
    return out
