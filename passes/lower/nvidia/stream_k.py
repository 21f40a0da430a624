"""Stream-K fixup for the ping-pong warp-specialized kernel (sm90_ws_streamk): where the
partial accumulators of split tiles live and how they are handed from CTA to CTA.

The scratch buffer holds, after the TMA descriptor slots, one u64 flag per CTA and one partial
tile of 4-byte sums (f32; i32 for an int8 conv, added exactly) per CTA (each CTA writes at most one: its first segment, StreamKWork). A tile
belongs to one consumer warpgroup, so a partial is stored in that warpgroup's own fragment
order ([64-row sub-block][4-register chunk][thread], 16 bytes per thread, coalesced), which is
also the order the finishing warpgroup's threads read it in: no layout change, no shared
memory. The writer's threads store, meet at their warpgroup's named barrier, and one thread
publishes the flag (st.release.gpu); the finisher's elected thread spins on it
(ld.acquire.gpu), resets it, and meets its warpgroup at the barrier before they read.
Partials are added in CTA order, so the result does not depend on timing.

The flag value is FLAG_MAGIC with the tile index in the low bits, so a stale value from an
aborted launch or a previous use of the memory would have to equal that 64-bit pattern
exactly; flags are reset by their reader, so a completed launch leaves them clear.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import arith_d, llvm_d
from ..common.emit import float_type
from .primitives import (I64, i64, index_to, global_flag_set, global_flag_wait_and_clear,
                         load_global_cg_v4, store_global_v4)

FLAG_MAGIC = 0x434F4E56534B0000          # "CONVSK" + tile index (16 bits)


@dataclass(frozen=True)
class StreamKScratch:
    flags0: int                # first flag (u64 per CTA)
    work0: int                 # first partial tile
    tile_bytes: int            # one f32 partial tile
    total: int                 # scratch bytes in all


def streamk_scratch(grid: int, block_m: int, block_n: int, descriptor_bytes: int) -> StreamKScratch:
    flags0 = descriptor_bytes
    work0 = -(-(flags0 + 8 * grid) // 128) * 128
    tile = block_m * block_n * 4
    return StreamKScratch(flags0, work0, tile, work0 + grid * tile)


def flag_value(t):
    """The flag a partial of tile t (index value) is published with (i64)."""
    return arith_d.ori(i64(FLAG_MAGIC), index_to(t, I64()))


def _chunk_addr(e, slot_i64, sub: int, chunk: int, chunks: int, wtid):
    idx = e.add((sub * chunks + chunk) * 128, wtid)
    return arith_d.addi(slot_i64, arith_d.muli(index_to(idx, I64()), i64(16)))


def store_partial(e, accs, block_n: int, slot_i64, wtid, dtype: str = "f32") -> None:
    """This thread's accumulator fragments (f32, or an int8 conv's i32) -> the partial tile at
    slot_i64."""
    t = float_type(dtype)
    chunks = block_n // 8
    for sub, acc in enumerate(accs):
        for c in range(chunks):
            vals = [llvm_d.extractvalue(t, acc, [4 * c + i]) for i in range(4)]
            store_global_v4(_chunk_addr(e, slot_i64, sub, c, chunks, wtid), vals, dtype)


def add_partial(e, accs, block_n: int, slot_i64, wtid, dtype: str = "f32"):
    """accs + the partial tile at slot_i64 (same fragment order; i32 sums add exactly)."""
    t = float_type(dtype)
    add = arith_d.addi if dtype == "i32" else arith_d.addf
    chunks = block_n // 8
    out = []
    for sub, acc in enumerate(accs):
        for c in range(chunks):
            vals = load_global_cg_v4(_chunk_addr(e, slot_i64, sub, c, chunks, wtid), dtype)
            for i in range(4):
                cur = llvm_d.extractvalue(t, acc, [4 * c + i])
                acc = llvm_d.insertvalue(acc, add(cur, vals[i]), [4 * c + i])
        out.append(acc)
    return out


def publish(flag_i64, t) -> None:
    global_flag_set(flag_i64, flag_value(t))


def await_partial(flag_i64, t) -> None:
    global_flag_wait_and_clear(flag_i64, flag_value(t))
