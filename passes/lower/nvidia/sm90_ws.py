"""sm_90a warp-specialized persistent implicit GEMM (the MAX Conv2dFpropKernel design).

384 threads in three warpgroups, each role one branch of one if/else:
- producer (warpgroup 0, `setmaxnreg.dec` to 40): one thread walks this CTA's tiles and issues
  every TMA: im2col activation + filter k-tiles into the stage ring (waiting on `empty`,
  arming `full`), and the residual tile of each tile's epilogue (waiting on `res_empty`,
  arming `res_full`);
- two consumer warpgroups (`setmaxnreg.inc` to 232) run wgmma and the epilogue. Cooperative:
  both share each tile, 64 rows each. Ping-pong: they take alternate tiles, so one's epilogue
  overlaps the other's main loop (the ring hands out k-tiles in tile order, which is what
  alternates them).

Clusters (Sm90WsConfig.cluster_m = 2): the CTAs of a cluster compute vertically adjacent tiles
that share the filter tile; each loads half of it and multicasts it into both, so a stage is
refilled only when both CTAs' consumers released it (`empty` counts the peer's warps, which
arrive remotely). The kernel traps if launched without its cluster shape.

Persistent: one CTA per SM loops over tiles (tile_scheduler.py); the producer runs ahead into
the next tile while consumers finish the epilogue of the current one.

Stream-K (sm90_ws_streamk, ping-pong consumers, no residual): for grids of a handful of tiles,
chains of CTAs share tiles in k-lockstep (tile_scheduler.StreamKWork): warpgroup 0 computes the
head of a tile and publishes its f32 partial through the scratch buffer, warpgroup 1 the tail
of the previous CTA's head tile, adding that partial before the epilogue (stream_k.py).

Epilogue: accumulators + bias (global, per channel) + residual (TMA-loaded into shared memory)
-> relu/casts in registers -> swizzled staging tile in shared memory (128 B panels, or 64 B
when block_n needs them, e.g. 160; 16-bit data moves through ldmatrix/stmatrix, warp_roles.py)
-> TMA store. Each consumer warpgroup owns `epilogue_slots` staging slots (and as many
residual slots), used round-robin; before reusing one, the thread that issued the stores waits
until the store from that slot has finished reading it.

When the residual has the output's dtype it is loaded into the staging slot itself (each
thread reads its residual elements and writes its outputs at the same addresses), which frees
two tiles of shared memory for ring stages; the slot is handed back to the producer
(`res_empty`) after the previous tile's TMA store has read it, early in the next main loop
(with two slots, that slot takes the residual of the tile after this one).

int8 convs (s8 x s8): one m64nNk32 s8 wgmma per 32 bytes of K (the ring, swizzle and
descriptors of 16-bit operands, in bytes) into s32 accumulators, in the positions of f32 ones;
the epilogue program starts from those i32 values, and i8 outputs are staged as pairs of
adjacent channels (128-channel panels). No stream-K (its partials travel as f32) and no direct
prologue loads (16-bit chunks).

Epilogue in the ring (epilogue_slots = 0, cooperative): no staging slots. After a tile's
k-tiles the producer lends each consumer warpgroup the next ring stage (TMA-loading its
residual slice into the stage's activation or filter part, or just completing `full`); the
warpgroup stages its output there in place and stores it. Each warpgroup waits on both lent
stages and, after the next tile's first k-step and once its own store has read its stage,
arrives on both `empty` barriers for its four warps: a warpgroup that skipped the other's
lent stage could otherwise find that stage's `full` one phase behind when it next waits on it
and pass early.

Swapped tiles (Sm90WsConfig.swap_ab): the wgmma's M runs over output channels (the filter
stage is its A operand, 64 channels per sub-block) and its N over the tile's pixels (the
activation stage is B), so block_m can be any multiple of 16 up to 256: tile counts that
fill the SMs evenly (e.g. 96-pixel tiles: 6272 pixels x 256 channels in 132 tiles of 96x128
where 64x256 makes 98). Cooperative consumers split the channels; the epilogue stores each
8x8 block transposed (stmatrix.trans) into the same [pixel][channel] staging layout.

By concern: this file sets the kernel up (descriptors, barriers, roles); the tile walk and
the rings are tile_scheduler.py and ring.py; sm90_ws_layout.py holds the tiles' shared-memory
layout and refusals, sm90_ws_state.py the resolved mode and the state the roles share,
sm90_ws_producer.py the producer, sm90_ws_mainloop.py the consumers' main loop,
sm90_ws_epilogue.py the epilogue, sm90_ws_streamk.py the stream-K consumers.

Barrier parities: every waiter is at most one phase ahead of the barrier it waits on. The
ring guarantees it for the producer and for cooperative consumers (each consumes every
iteration in order); ping-pong consumers skip the other warpgroup's iterations, so `turn`
barriers hand the main loop from one warpgroup to the other.
"""

from __future__ import annotations

from ...ir import arith_d, hal_d
from ...problem import ConvProblem
from ...schedule import Schedule
from ..common.emit import Emitter
from . import stream_k as sk
from . import tensormap as tm
from .direct_loads import DirectPrologue, Loaders
from .primitives import I32, address_of, cluster_ctarank_count, cluster_sync, mbarrier_init_fence, trap_unless
from .ring import MbarrierRing, PingPongTurns
from .sm90_ws_epilogue import Epilogue
from .sm90_ws_layout import (CHANNEL_OPERAND_BUDGET, DESCRIPTORS, MAX_ACC_REGS, WsLayout,  # noqa: F401 (re-exported)
                             WsUnsupported, channel_operand_budget, check_supported, consumer_registers,
                             consumer_slice, residual_step,
                             row_bytes, swap_max_pixels, ws_layout)
from .sm90_ws_mainloop import MainLoop
from .sm90_ws_producer import Producer
from .sm90_ws_state import WsMode, WsState, ws_mode
from .sm90_ws_streamk import StreamKConsumers
from .smem import SharedBlock
from .tile_scheduler import PersistentTiles, StreamKWork
from .tma_loader import (activation_binding, activation_runtime_sizes, activation_runtime_strides, descriptor_slots, epilogue_map_args, residual_binding,
                         publish_descriptors, store_descriptors, tensor_maps, write_descriptors)
from .trace import Trace
from .warp_roles import WARPGROUP, split_roles


class Sm90WarpSpecialized:
    """The schedule is resolved on construction (WsMode: refusals before any IR); emit() sets
    the kernel up and hands the roles one WsState."""

    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.mode: WsMode = ws_mode(p, s)
        self.m = machine

    def emit(self, memrefs) -> None:
        mode, m = self.mode, self.m
        p, s, lay = mode.p, mode.s, mode.lay
        e = Emitter()
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        tid = m.thread_id(e)
        runtime = p.runtime_sizes
        if runtime and (mode.streamk or mode.direct or mode.swap or mode.cluster_m > 1):
            raise WsUnsupported("runtime sizes take plain tiles (no stream-K, direct loads, swapped tiles "
                                "or clusters)")
        x = memrefs.extents if runtime else None
        rows = x.rows if runtime else None
        tiles = PersistentTiles(e, p, s, pid, rows)

        smem = SharedBlock(m, lay.total)
        ring = MbarrierRing(e, smem, lay.full, lay.empty)
        res_ring = MbarrierRing(e, smem, lay.res_full, lay.res_empty, parts=lay.consumers)
        turns = PingPongTurns(e, smem, lay.turn)

        maps = tensor_maps(p, s)
        descs = [maps.activation, maps.filter, tm.encode_tiled(epilogue_map_args(p, p.out_dtype, lay.rows, lay.cols))]
        bindings = [activation_binding(p, memrefs), memrefs[p.filter], memrefs[p.num_operands]]
        # runtime sizes: the activation's images, height and width (and the strides that follow
        # from them) and the output's rows are written in-kernel
        sizes = strides = None
        if runtime:
            sizes, strides = [activation_runtime_sizes(p, x), {}, {1: rows}], [activation_runtime_strides(e, p, x), {}, {}]
        if mode.res:
            descs.append(tm.encode_tiled(epilogue_map_args(p, mode.res.dtype, lay.rows, lay.cols, residual=True)))
            bindings.append(residual_binding(p, memrefs, mode.res))
            if runtime:
                sizes, strides = sizes + [{1: rows}], strides + [{}]
        slots = descriptor_slots(pid, memrefs[-1], DESCRIPTORS)
        trace = Trace(e, pid, address_of(memrefs[-1]), s.scratch_bytes)
        work = scratch_layout = scratch = None
        if mode.streamk:
            work = StreamKWork(e, tiles.count, mode.ktiles, s.grid[0], tiles.pid)
            scratch_layout = sk.streamk_scratch(s.grid[0], s.block_m, s.block_n,
                                                s.grid[0] * DESCRIPTORS * tm.DESCRIPTOR_BYTES)
            scratch = address_of(memrefs[-1])

        def init_barriers() -> None:
            ring.init((2 if mode.coop else 1) * WARPGROUP // 32 * mode.cluster_m)
            res_ring.init(1 if lay.res_in_place else WARPGROUP)
            turns.init()
            mbarrier_init_fence()

        prologue = None
        if mode.direct:
            # Direct prologue (direct_loads.py): thread 0 initialises the barriers and issues
            # the descriptor stores first, so that the consumers' copies queue behind them; it
            # fences the maps while they copy.
            with e.if_(e.cmp("eq", tid, 0)):
                trace.stamp("start")
                init_barriers()
                store_descriptors(descs, slots[:len(descs)], bindings)
            m.barrier()
            loaders = Loaders.of(mode.coop)
            prologue = DirectPrologue(e, p, s, memrefs, mode.direct, lay.a0, lay.a_stage, lay.b0, lay.b_stage,
                                      smem.base, loaders)
            with e.if_(e.all_of(e.cmp("sge", tid, WARPGROUP), e.cmp("slt", tid, WARPGROUP + loaders.threads))):
                m0, n0 = tiles.origin(e.c(0))
                prologue.issue(e.sub(tid, WARPGROUP), m0, n0)
            with e.if_(e.cmp("eq", tid, 0)):
                publish_descriptors(slots[:len(descs)], acquire=2)
                trace.stamp("descriptors")
        else:
            with e.if_(e.cmp("eq", tid, 0)):
                trace.stamp("start")
                # Only the operand maps are acquired on the way to the first TMA; the residual's
                # is acquired by the producer before its first residual load, the output's by the
                # consumers.
                write_descriptors(descs, slots[:len(descs)], bindings, acquire=2, sizes=sizes, strides=strides)
                trace.stamp("descriptors")
                init_barriers()
        m.barrier()
        if trace.on:
            with e.if_(e.cmp("eq", tid, 0)):
                trace.stamp("barriers")
        if mode.cluster_m > 1:
            # The kernel is compiled for a fixed cluster shape; refuse to run without it.
            trap_unless(arith_d.cmpi(0, cluster_ctarank_count(), arith_d.constant(I32(), mode.cluster_m)))
            cluster_sync()             # every CTA's barriers are initialised before any multicast

        k = WsState(mode, e, memrefs, tid, smem, ring, res_ring, turns, slots, tiles, trace, prologue, work,
                    scratch_layout, scratch)
        producer = Producer(k)
        epilogue = Epilogue(k)
        mainloop = MainLoop(k, epilogue)
        if mode.streamk:
            split_roles(e, tid, producer.run_streamk, StreamKConsumers(k, mainloop, epilogue).run)
        else:
            split_roles(e, tid, producer.run, mainloop.run, lay.consumers)
        if mode.cluster_m > 1:
            cluster_sync()             # no CTA leaves while a peer may still signal its barriers


def emit_sm90_ws(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    Sm90WarpSpecialized(p, s, machine).emit(memrefs)
