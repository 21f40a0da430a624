"""Direct prologue loads of the sm_90a persistent kernels: the first k-tiles without TMA.

A CTA cannot issue a TMA before one of its threads has written the tensor maps into global
memory and fenced them to the tensormap proxy (IREE passes buffer pointers only): on the
one-wave layers that wait plus the first TMA's latency is most of their start-up (first data
~1.6 us after launch on r50_l4_1x1_512_2048, against 4.2 us of main loop). So the consumer
threads, idle until data arrives, load the first `Sm90WsConfig.direct_stages` k-tiles of their
CTA's first tile themselves, 16 bytes per `cp.async` with zero fill, into exactly the bytes the
TMA would have written (same swizzle), while thread 0 writes the descriptors; the producer's
TMAs start at the k-tile after them. The planner uses it where every CTA has one tile (5-9%
faster there, H200) or the filter has one tap (0.5-4% with several tiles per CTA); 3x3 layers
with several tiles per CTA measured 1-10% slower.

Where each 16-byte chunk comes from and lands is written once, against the integer-ops
interface (common/int_ops.py): `NumpyOps` evaluates it in the model test against a numpy
im2col, `IrOps` emits it. GEMM view as everywhere: activation rows are output pixels m (all of
N*Ho*Wo, wrapping across rows and images like the im2col TMA), filter rows are output channels
of the [F, R*S*C] filter; a k-tile is block_k channels of one filter tap.

Hand-off, per k-tile, with the writers' own fence (cp.async writes through the generic proxy,
the wgmmas read through the async proxy): before the wgmmas of direct k-tile kt each loading
thread waits for its copies of it (one cp.async group per k-tile), fences them
(`fence.proxy.async`), and the loaders meet at a named barrier (Loaders: both consumer
warpgroups when cooperative, else warpgroup 0, which computes the CTA's first tile). So the
first wgmmas start when k-tile 0 has landed, not all of them. The producer completes those
stages' `full` phases with a plain arrive (no bytes), which keeps the ring's phase accounting
unchanged. (Tracking the copies with `cp.async.mbarrier.arrive` on `full` instead ran as fast
but hangs compute-sanitizer synccheck; a 256-thread barrier joined by a ping-pong warpgroup
that computes no direct k-tile did too.)
Thread 0 issues the barrier inits and descriptor stores before the copies, then fences the
maps while they run (behind 5,000 copies the stores took 1.1 us instead of 0.45).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import arith_d
from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import Sm90WsConfig
from ...schedule import Schedule, WarpRole
from ..common.int_ops import IrOps
from .tma_loader import k_tile_tap, swizzle_rotation
from .warp_roles import WARPGROUP
from .primitives import (I64, address_of, async_proxy_fence, cp_async_16, cp_async_commit, cp_async_wait_group, i64,
                         index_to, named_barrier)

CHUNK = 16                       # bytes per cp.async (one swizzle unit)
MAX_DIRECT_STAGES = 2            # join(kt) waits with an immediate group count


@dataclass(frozen=True)
class Loaders:
    """Who copies and joins: cooperative, both consumer warpgroups (both read every direct
    k-tile) at named barrier 3; ping-pong, warpgroup 0 alone (it computes the CTA's first tile)
    at its own barrier 1, so the other warpgroup takes no part."""
    threads: int
    barrier: int

    @staticmethod
    def of(cooperative: bool) -> "Loaders":
        return Loaders(2 * WARPGROUP, 3) if cooperative else Loaders(WARPGROUP, 1)


@dataclass(frozen=True)
class OperandTile:
    """One operand of a stage: `rows` rows of block_k 16-bit channels, `span` bytes each,
    swizzled over the span as the TMA writes it (128 B rows: 128B swizzle, 64 B: 64B)."""
    rows: int
    block_k: int

    @property
    def span(self) -> int:
        return self.block_k * 2

    @property
    def chunks_per_row(self) -> int:
        return self.span // CHUNK

    @property
    def chunks(self) -> int:
        return self.rows * self.chunks_per_row

    def offset(self, ops, row, unit):
        """Byte offset of 16-byte unit `unit` of `row`, swizzled as the TMA writes it."""
        rot = swizzle_rotation(ops, row, self.span)
        return ops.add(ops.mul(row, self.span), ops.mul(ops.xor(unit, rot), CHUNK))


def direct_stages_for(p: ConvProblem, s: Schedule, ktiles: int) -> int:
    """How many leading k-tiles the consumers load: the schedule's count, within the ring and
    the tile's k-tiles; none in a cluster (the filter arrives by multicast) or with stream-K
    (its segments start mid-tile)."""
    c = s.config_as(Sm90WsConfig)
    if c.cluster_m != 1 or s.kernel.role is WarpRole.STREAM_K or DTYPE_BYTES[p.dtype] != 2:
        return 0
    return max(0, min(c.direct_stages, s.stages, ktiles, MAX_DIRECT_STAGES))


def activation_chunk(ops, p: ConvProblem, block_k: int, m0, kt: int, row, unit):
    """(element offset into the NHWC input, valid) of activation chunk (row, unit) of k-tile kt
    for the tile starting at output pixel m0. Invalid: padding, pixels past N*Ho*Wo, channels
    past C (zero-filled, as the TMA does)."""
    r, sx, c0 = k_tile_tap(ops, p, block_k, kt)
    c = ops.add(c0, ops.mul(unit, CHUNK // DTYPE_BYTES[p.dtype]))
    m = ops.add(m0, row)
    howo = p.Ho * p.Wo
    n = ops.div(m, howo)
    rem = ops.rem(m, howo)
    ho, wo = ops.div(rem, p.Wo), ops.rem(rem, p.Wo)
    h = ops.add(ops.mul(ho, p.stride[0]), r * p.dilation[0] - p.pad[0])
    w = ops.add(ops.mul(wo, p.stride[1]), sx * p.dilation[1] - p.pad[1])
    valid = ops.all_of(ops.lt(m, p.gemm_m), ops.ge(h, 0), ops.lt(h, p.H), ops.ge(w, 0), ops.lt(w, p.W),
                       ops.lt(c, p.C))
    src = ops.add(ops.mul(ops.add(ops.mul(ops.add(ops.mul(n, p.H), h), p.W), w), p.C), c)
    return ops.select(valid, src, 0), valid


def filter_chunk(ops, p: ConvProblem, block_k: int, n0, kt: int, row, unit):
    """(element offset into the [F, K] filter, valid) of filter chunk (row, unit) of k-tile kt
    for channels from n0 (TMA tiles the filter as [F, K]: k-tile kt is columns kt*block_k on)."""
    f = ops.add(n0, row)
    k = ops.add(kt * block_k, ops.mul(unit, CHUNK // DTYPE_BYTES[p.dtype]))
    valid = ops.all_of(ops.lt(f, p.F), ops.lt(k, p.gemm_k))
    return ops.select(valid, ops.add(ops.mul(f, p.gemm_k), k), 0), valid


def thread_chunks(tile: OperandTile, threads: int):
    """[(first chunk, guarded)]: loading thread t copies chunks t + threads*i; `guarded` when
    the last round runs past the tile."""
    rounds = -(-tile.chunks // threads)
    return [(threads * i, threads * (i + 1) > tile.chunks) for i in range(rounds)]


def chunk_position(ops, tile: OperandTile, ctid, first: int):
    """(row, unit) of chunk ctid + first (first: a multiple of the thread count, which the
    chunks per row divide): consecutive threads cover a row's 16-byte units, so each row is
    one coalesced read. Rows >= tile.rows are past the tile (guarded rounds)."""
    per_row = tile.chunks_per_row
    return ops.add(ops.div(ctid, per_row), first // per_row), ops.rem(ctid, per_row)


class DirectPrologue:
    """Emits the consumers' copies (`issue`, before the role split) and their hand-off to the
    wgmmas (`join`)."""

    def __init__(self, e, p: ConvProblem, s: Schedule, memrefs, count: int, a0: int, a_stage: int, b0: int,
                 b_stage: int, smem_base, loaders: Loaders):
        self.e, self.p, self.s, self.count, self.loaders = e, p, s, count, loaders
        self.ops = IrOps(e)
        self.a = (OperandTile(s.block_m, s.block_k), a0, a_stage, address_of(memrefs[p.input]), activation_chunk)
        self.b = (OperandTile(s.block_n, s.block_k), b0, b_stage, address_of(memrefs[p.filter]), filter_chunk)
        self.smem_base = smem_base

    def issue(self, ctid, m0, n0) -> None:
        """Loading thread ctid (0 .. loaders.threads - 1) copies its chunks (thread_chunks,
        chunk_position) of k-tiles 0..count-1, one cp.async group per k-tile."""
        e, ops = self.e, self.ops
        eb = DTYPE_BYTES[self.p.dtype]
        for kt in range(self.count):
            for (tile, part0, part_stride, gbase, chunk), origin in ((self.a, m0), (self.b, n0)):
                stage = arith_d.addi(self.smem_base, i64(part0 + kt * part_stride))
                for first, guarded in thread_chunks(tile, self.loaders.threads):
                    row, unit = chunk_position(ops, tile, ctid, first)

                    def copy():
                        src, valid = chunk(ops, self.p, self.s.block_k, origin, kt, row, unit)
                        dst = index_to(e._v(tile.offset(ops, row, unit)), I64())
                        cp_async_16(arith_d.addi(stage, dst),
                                    arith_d.addi(gbase, index_to(e.mul(src, eb), I64())), valid)
                    if guarded:
                        with e.if_(e.cmp("slt", row, tile.rows)):
                            copy()
                    else:
                        copy()
            cp_async_commit()

    def join(self, kt: int) -> None:
        """Every loading thread, before the wgmmas of direct k-tile kt (in order, each once):
        its own copies of k-tile kt have landed and are fenced to the async proxy; then all
        the loaders' have."""
        cp_async_wait_group(self.count - 1 - kt)
        async_proxy_fence()
        named_barrier(self.loaders.barrier, self.loaders.threads)
