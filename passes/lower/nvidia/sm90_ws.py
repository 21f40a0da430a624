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

Clusters (Schedule.cluster_m = 2): the CTAs of a cluster compute vertically adjacent tiles
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

Epilogue in the ring (epilogue_slots = 0, cooperative): no staging slots. After a tile's
k-tiles the producer lends each consumer warpgroup the next ring stage (TMA-loading its
residual slice into the stage's activation or filter part, or just completing `full`); the
warpgroup stages its output there in place and stores it. Each warpgroup waits on both lent
stages and, after the next tile's first k-step and once its own store has read its stage,
arrives on both `empty` barriers for its four warps: a warpgroup that skipped the other's
lent stage could otherwise find that stage's `full` one phase behind when it next waits on it
and pass early.

Swapped tiles (Schedule.swap_ab): the wgmma's M runs over output channels (the filter
stage is its A operand, 64 channels per sub-block) and its N over the tile's pixels (the
activation stage is B), so block_m can be any multiple of 16 up to 256: tile counts that
fill the SMs evenly (e.g. 96-pixel tiles: 6272 pixels x 256 channels in 132 tiles of 96x128
where 64x256 makes 98). Cooperative consumers split the channels; the epilogue stores each
8x8 block transposed (stmatrix.trans) into the same [pixel][channel] staging layout.

Shared memory, one 1024-aligned allocation:
[A stages][B stages][out slots][residual slots unless in place][full][empty]
[res_full][res_empty][turn x2], `epilogue_slots` slots per consumer warpgroup (with none:
[A stages][B stages][full][empty][turn x2]).

Barrier parities: every waiter is at most one phase ahead of the barrier it waits on. The
ring guarantees it for the producer and for cooperative consumers (each consumes every
iteration in order); ping-pong consumers skip the other warpgroup's iterations, so `turn`
barriers hand the main loop from one warpgroup to the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import arith_d, gpu_d, hal_d
from ...problem import ConvProblem, DTYPE_BYTES, OperandLoad
from ...schedule import Schedule
from ..common.emit import Emitter
from .primitives import (I32, I64, SWIZZLE_128B_LAYOUT, SWIZZLE_64B_LAYOUT, address_of, bulk_commit, bulk_wait_read, i64, cluster_sync,
                         cluster_ctarank_count, trap_unless,
                         index_to, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init,
                         mbarrier_init_fence, mbarrier_wait, named_barrier,
                         smem_descriptor_at, smem_descriptor_lo, tma_load, tma_store, wgmma_commit, wgmma_fence,
                         wgmma_m64nk16, wgmma_wait, undef_accumulator, async_proxy_fence)
from .tile_scheduler import PersistentTiles, StreamKWork
from . import stream_k as sk
from .ring import MbarrierRing
from .smem import Carve, Region, SharedBlock
from .trace import Trace
from .warp_roles import (WARPGROUP, channel_operands, channel_operands_rows, split_roles, stage_fragments,
                         stage_fragments_swapped)
from .direct_loads import DirectPrologue, Loaders, direct_stages_for
from .tma_loader import (CHANNELS_PER_TILE, ConvTmaLoader, k_tiles, acquire_descriptor, descriptor_slots,
                         epilogue_panel, epilogue_map_args, publish_descriptors, store_descriptors, tensor_maps,
                         write_descriptors)
from . import tensormap as tm


def row_bytes(block_k: int, dtype: str = "f16") -> int:
    """Bytes of one swizzled K row of operands (128 or 64: also the swizzle span)."""
    return block_k * DTYPE_BYTES[dtype]


DESCRIPTORS = 4                            # activation, filter, output, residual
# f32 accumulator registers per consumer thread: 160 (a 128x160 tile per warpgroup, F = 320
# in two tiles) still leaves ptxas room under the 232-register consumer budget without spills.
MAX_ACC_REGS = 160


class WsUnsupported(ValueError):
    pass


def residual_step(p: ConvProblem) -> OperandLoad | None:
    """The epilogue's one output-shaped operand (loaded by TMA), if any."""
    full = p.residual_loads
    if len(full) > 1:
        raise WsUnsupported("more than one output-shaped epilogue operand")
    return full[0] if full else None


STREAM_K = "sm90_ws_streamk"          # ping-pong consumers over k-lockstep stream-K segments


def consumer_slice(kernel: str, block_m: int, block_n: int, swap: bool = False) -> tuple[int, int]:
    """(pixel rows, channels) of the tile that one consumer warpgroup computes and stages:
    cooperative warpgroups split the rows, or the channels of a swapped tile."""
    if kernel != "sm90_ws_cooperative":
        return block_m, block_n
    return (block_m, block_n // 2) if swap else (block_m // 2, block_n)


@dataclass(frozen=True)
class WsLayout:
    """Shared memory of the persistent kernels: the operand ring, then `slots` staging slots
    per consumer warpgroup (each also the residual's when it has the output's dtype, else
    separate residual slots), then the barriers. Two slots let tile u's residual land while
    tile u - 1's epilogue and store run, and let a store drain while the next tile is staged.
    slots = 0: no staging slots; each consumer warpgroup stages its slice of a tile (and
    receives its residual) in one ring stage of its own, the activation or filter part of
    that stage (`out` and `res` are then that ring part), so the whole allocation is ring:
    128x256 cooperative tiles get 4 stages instead of 3."""
    rows: int                  # pixel rows per consumer warpgroup
    cols: int                  # channels per consumer warpgroup
    out_slot: int              # bytes of a warpgroup's staged slice
    res_slot: int              # bytes of a warpgroup's residual slice (0: no residual)
    res_in_place: bool         # the residual is loaded into the staging slot itself
    slots: int                 # staging (and residual) slots per consumer warpgroup; 0: in the ring
    a: Region                  # the ring stages' activation parts
    b: Region                  # ... and filter parts
    out: Region                # staging slots, warpgroup-major
    res: Region                # residual slots (`out` when in place)
    full: Region               # per ring stage: the producer filled it
    empty: Region              # per ring stage: the consumers released it
    res_full: Region           # per residual slot: its residual landed
    res_empty: Region          # per residual slot: it may be refilled
    turn: Region               # per ping-pong warpgroup: its main loop may start
    total: int

    stages = property(lambda self: self.a.count)
    a_stage = property(lambda self: self.a.size)
    b_stage = property(lambda self: self.b.size)
    a0 = property(lambda self: self.a.offset)
    b0 = property(lambda self: self.b.offset)
    out0 = property(lambda self: self.out.offset)
    res0 = property(lambda self: self.res.offset)
    slot_stride = property(lambda self: self.out.size)
    bars = property(lambda self: self.full.offset)


def swap_max_pixels(kernel: str, block_n: int) -> int:
    """Most pixels a swapped tile of block_n channels may hold: the wgmma's N limit (256),
    and the accumulators of a warpgroup's channels (cols x pixels / 128 per thread) within
    MAX_ACC_REGS, in multiples of 16."""
    cols = consumer_slice(kernel, 0, block_n, swap=True)[1]
    return min(256, MAX_ACC_REGS * WARPGROUP // cols // 16 * 16)


def ws_layout(p: ConvProblem, kernel: str, block_m: int, block_n: int, stages: int,
              block_k: int = CHANNELS_PER_TILE, slots: int = 1, swap: bool = False) -> WsLayout:
    rows, cols = consumer_slice(kernel, block_m, block_n, swap)
    res = residual_step(p)
    out_slot = rows * cols * DTYPE_BYTES[p.out_dtype]
    res_slot = rows * cols * DTYPE_BYTES[res.dtype] if res else 0
    in_place = bool(res) and res.dtype == p.out_dtype
    carve = Carve()
    a = carve.take(block_m * row_bytes(block_k, p.dtype), stages)
    b = carve.take(block_n * row_bytes(block_k, p.dtype), stages)
    if slots == 0:
        # the smaller ring part that holds a warpgroup's slice (check_supported: one does)
        out = min([part for part in (a, b) if out_slot <= part.size] or [b], key=lambda r: (r.size, r.offset))
        res = out
    else:
        out = carve.take(out_slot, 2 * slots)
        res = out if in_place else carve.take(res_slot, 2 * slots)
    full, empty = carve.barriers(stages), carve.barriers(stages)
    res_full, res_empty = carve.barriers(2 * slots), carve.barriers(2 * slots)
    turn = carve.barriers(2)
    return WsLayout(rows, cols, out_slot, res_slot, in_place, slots, a, b, out, res, full, empty, res_full,
                    res_empty, turn, carve.top)


def check_supported(p: ConvProblem, kernel: str, block_m: int, block_n: int, slots: int = 1,
                    swap: bool = False, cluster_m: int = 1, block_k: int = CHANNELS_PER_TILE) -> None:
    """Raises WsUnsupported with the reason when the kernel cannot serve p with this tile."""
    res = residual_step(p)
    rows, cols = consumer_slice(kernel, block_m, block_n, swap)
    if kernel == STREAM_K and res:
        raise WsUnsupported("stream-K with a residual (the residual load follows tiles, not segments)")
    if slots not in (0, 1, 2) or (kernel == STREAM_K and slots != 1):
        raise WsUnsupported(f"{slots} epilogue slots per warpgroup with {kernel}")
    if slots == 0:
        # staging in the ring: each cooperative warpgroup lends one ring stage per tile
        if kernel != "sm90_ws_cooperative" or cluster_m != 1:
            raise WsUnsupported("epilogue staged in the ring needs cooperative consumers without a cluster")
        if res and res.dtype != p.out_dtype:
            raise WsUnsupported("epilogue staged in the ring with a residual whose dtype differs from the output's")
        lay = ws_layout(p, kernel, block_m, block_n, 1, block_k, 0, swap)
        if lay.out_slot > max(lay.a_stage, lay.b_stage):
            raise WsUnsupported(f"a {lay.rows}x{lay.cols} {p.out_dtype} slice does not fit a ring stage's operand part")
    if slots > 1 and res and res.dtype != p.out_dtype:
        # the residual would need slots of its own (not in place): a protocol no GPU check covers
        raise WsUnsupported("two epilogue slots with a residual whose dtype differs from the output's")
    if swap:
        if kernel == STREAM_K or cluster_m != 1:
            raise WsUnsupported("swapped tiles with stream-K or a cluster")
        if cols % 64 or cols > 128:
            raise WsUnsupported(f"swapped tiles: {cols} channels per consumer warpgroup (64 or 128)")
        if block_m % 16 or block_m > 256 or cols * block_m > MAX_ACC_REGS * WARPGROUP:
            raise WsUnsupported(f"swapped tiles: block_m={block_m} (a multiple of 16, at most 256)")
        if any(DTYPE_BYTES[dt] != 2 for dt in [p.out_dtype] + ([res.dtype] if res else [])):
            raise WsUnsupported("swapped tiles need 16-bit outputs and residuals (transposed 8x8 moves)")
    else:
        if rows % 64 or rows > 128:
            raise WsUnsupported(f"{rows} rows per consumer warpgroup (64 or 128)")
        if block_n % 8 or block_n > 256 or rows * block_n > MAX_ACC_REGS * WARPGROUP:
            raise WsUnsupported(f"block_n={block_n}")
    for dt in [p.out_dtype] + ([res.dtype] if res else []):
        try:
            epilogue_panel(dt, cols)
        except ValueError as e:
            raise WsUnsupported(str(e)) from None
        if (p.F * DTYPE_BYTES[dt]) % 16:
            raise WsUnsupported(f"F={p.F} rows of {dt} are not 16-byte aligned for TMA")
        try:
            tm.encode_tiled(epilogue_map_args(p, dt, rows, cols))
        except tm.TensorMapError as e:
            raise WsUnsupported(f"epilogue TMA descriptor refused: {e}") from None


class Sm90WarpSpecialized:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.e = Emitter()
        self.coop = s.kernel == "sm90_ws_cooperative"
        self.streamk = s.kernel == STREAM_K
        self.swap = s.swap_ab
        self.lay = ws_layout(p, s.kernel, s.block_m, s.block_n, s.stages, s.block_k, s.epilogue_slots, s.swap_ab)
        # per consumer warpgroup: 64-row wgmma sub-blocks (of pixels; of channels when
        # swapped) and the wgmma's N
        self.subs = (self.lay.cols if self.swap else self.lay.rows) // 64
        self.mma_n = s.block_m if self.swap else s.block_n
        self.res = residual_step(p)
        self.ktiles = k_tiles(p, s.block_k)
        # ring iterations per tile: its k-tiles, then (epilogue in the ring) one lent stage
        # per consumer warpgroup
        self.in_ring = self.lay.slots == 0
        self.per_tile = self.ktiles + (2 if self.in_ring else 0)
        self.row = row_bytes(s.block_k, p.dtype)
        # the planner sets direct_stages (plan._with_direct_loads); a schedule asking for more
        # than this kernel can take is refused, not quietly changed
        self.direct = s.direct_stages
        if direct_stages_for(p, s, self.ktiles) != s.direct_stages:
            raise WsUnsupported(f"direct_stages={s.direct_stages}: this schedule takes "
                                f"{direct_stages_for(p, s, self.ktiles)} direct k-tiles")
        self.swizzle_layout = SWIZZLE_128B_LAYOUT if self.row == 128 else SWIZZLE_64B_LAYOUT

    def emit(self, memrefs) -> None:
        p, s, e, lay = self.p, self.s, self.e, self.lay
        self.memrefs = memrefs
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        tid = gpu_d.thread_id(gpu_d.Dimension.x)
        self.tid = tid
        batch = getattr(memrefs, "batch", None)
        if batch is not None and (self.streamk or self.direct or self.swap or s.cluster_m > 1):
            raise WsUnsupported("a dynamic batch takes plain tiles (no stream-K, direct loads, swapped tiles "
                                "or clusters)")
        rows = None if batch is None else e.mul(batch, p.Ho * p.Wo)
        self.tiles = PersistentTiles(e, p, s, pid, rows)

        self.smem = SharedBlock(self.m, lay.total)
        self.base = self.smem.base
        self.ring = MbarrierRing(e, self.smem, lay.full, lay.empty)
        self.res_ring = MbarrierRing(e, self.smem, lay.res_full, lay.res_empty)

        maps = tensor_maps(p, s)
        descs = [maps.activation, maps.filter, tm.encode_tiled(epilogue_map_args(p, p.out_dtype, lay.rows, lay.cols))]
        bindings = [memrefs[p.input], memrefs[p.filter], memrefs[p.num_operands]]
        # a dynamic batch: the activation's images and the output's rows are written in-kernel
        sizes = None if batch is None else [{3: batch}, {}, {1: rows}]
        if self.res:
            descs.append(tm.encode_tiled(epilogue_map_args(p, self.res.dtype, lay.rows, lay.cols)))
            bindings.append(memrefs[self.res.operand])
            sizes = None if batch is None else sizes + [{1: rows}]
        self.slots = descriptor_slots(pid, memrefs[-1], DESCRIPTORS)
        self.trace = Trace(e, pid, address_of(memrefs[-1]), s.scratch_bytes)
        if self.streamk:
            self.work = StreamKWork(e, self.tiles.count, self.ktiles, s.grid[0], self.tiles.pid)
            self.sk = sk.streamk_scratch(s.grid[0], s.block_m, s.block_n, s.grid[0] * DESCRIPTORS * tm.DESCRIPTOR_BYTES)
            self.scratch = address_of(memrefs[-1])

        if self.direct:
            # Direct prologue (direct_loads.py): thread 0 initialises the barriers and issues
            # the descriptor stores first, so that the consumers' copies queue behind them; it
            # fences the maps while they copy.
            with e.if_(e.cmp("eq", tid, 0)):
                self.trace.stamp("start")
                self._init_barriers()
                store_descriptors(descs, self.slots[:len(descs)], bindings)
            gpu_d.barrier()
            loaders = Loaders.of(self.coop)
            self.prologue = DirectPrologue(e, p, s, memrefs, self.direct, lay.a0, lay.a_stage, lay.b0,
                                           lay.b_stage, self.base, loaders)
            with e.if_(e.all_of(e.cmp("sge", tid, WARPGROUP), e.cmp("slt", tid, WARPGROUP + loaders.threads))):
                m0, n0 = self.tiles.origin(e.c(0))
                self.prologue.issue(e.sub(tid, WARPGROUP), m0, n0)
            with e.if_(e.cmp("eq", tid, 0)):
                publish_descriptors(self.slots[:len(descs)], acquire=2)
                self.trace.stamp("descriptors")
        else:
            with e.if_(e.cmp("eq", tid, 0)):
                self.trace.stamp("start")
                # Only the operand maps are acquired on the way to the first TMA; the residual's
                # is acquired by the producer before its first residual load, the output's by the
                # consumers.
                write_descriptors(descs, self.slots[:len(descs)], bindings, acquire=2, sizes=sizes)
                self.trace.stamp("descriptors")
                self._init_barriers()
        gpu_d.barrier()
        if self.trace.on:
            with e.if_(e.cmp("eq", tid, 0)):
                self.trace.stamp("barriers")
        if s.cluster_m > 1:
            # The kernel is compiled for a fixed cluster shape; refuse to run without it.
            trap_unless(arith_d.cmpi(0, cluster_ctarank_count(), arith_d.constant(I32(), s.cluster_m)))
            cluster_sync()             # every CTA's barriers are initialised before any multicast

        if self.streamk:
            split_roles(e, tid, self._producer_streamk, self._consumer_streamk)
        else:
            split_roles(e, tid, self._producer, self._consumer)
        if s.cluster_m > 1:
            cluster_sync()             # no CTA leaves while a peer may still signal its barriers

    def _init_barriers(self) -> None:
        s, lay = self.s, self.lay
        self.ring.init((2 if self.coop else 1) * WARPGROUP // 32 * s.cluster_m)
        self.res_ring.init(1 if lay.res_in_place else WARPGROUP)
        for w in range(2):
            mbarrier_init(self.smem.element(lay.turn, w), 1)
        mbarrier_init_fence()

    # ------------------------------------------------------------------ helpers

    def _slice(self, w):
        """(pixel, channel) offsets of consumer warpgroup w's slice of a tile (w: an index
        value; ping-pong warpgroups own whole tiles)."""
        e = self.e
        if not self.coop:
            return e.c(0), e.c(0)
        return (e.c(0), e.mul(w, self.lay.cols)) if self.swap else (e.mul(w, self.lay.rows), e.c(0))

    def _slot(self, w, use):
        """(epilogue slot index, phase parity as i32) of warpgroup w's use-th tile: the slots
        of a warpgroup are used round-robin, so a slot's barriers complete a phase every
        `slots` tiles."""
        e, n = self.e, self.lay.slots
        if n == 1:
            return w, index_to(e.rem(use, 2), I32())
        return e.add(e.mul(w, n), e.rem(use, n)), index_to(e.rem(e.div(use, n), 2), I32())

    # ------------------------------------------------------------------ producer
    def _producer(self) -> None:
        p, s, e, lay = self.p, self.s, self.e, self.lay
        prime = min(s.stages, self.ktiles)
        with e.for_(0, self.tiles.local_count(), 1) as (j, _, _y):
            m0, n0 = self.tiles.origin(j)
            loader = ConvTmaLoader(e, p, s, self.slots[0], self.slots[1], m0, n0)
            with e.for_(0, self.ktiles, 1) as (kt, _, _y2):
                direct = e.all_of(e.cmp("eq", j, 0), e.cmp("slt", kt, self.direct)) if self.direct else None
                self._issue(loader, kt, e.add(e.mul(j, self.per_tile), kt), cluster_rank=self.tiles.rank,
                            direct=direct)
                if self.res and not self.in_ring:
                    with e.if_(e.cmp("eq", kt, prime - 1)):
                        with e.if_(e.cmp("eq", j, 0)):
                            acquire_descriptor(self.slots[3])
                        self._load_residual(j, m0, n0)
            if self.in_ring:
                if self.res:
                    with e.if_(e.cmp("eq", j, 0)):
                        acquire_descriptor(self.slots[3])
                for w in range(2):
                    self._lend_stage(j, w, m0, n0)
        self.trace.stamp("producer_done")
        self.trace.stamp("tiles", index_to(self.tiles.local_count(), I64()))

    def _issue(self, loader, kt, it, cluster_rank=None, direct=None) -> None:
        """k-tile kt into ring iteration it's stage, once the consumers released it. Where
        `direct` holds, the consumers loaded it themselves (direct_loads.py): just complete
        the stage's `full` phase."""
        e, lay, ring = self.e, self.lay, self.ring
        st, phase = ring.slot(it)
        ring.acquire(st, phase)
        full = ring.full(st)

        def tma():
            loader.load(kt, self.smem.element(lay.a, st), self.smem.element(lay.b, st), full,
                        cluster_rank=cluster_rank)
        if direct is None:
            tma()
        else:
            with e.if_else(direct) as (loaded, fetch):
                with loaded:
                    mbarrier_arrive(full)
                with fetch:
                    tma()
        if self.trace.on:
            with e.if_(e.cmp("eq", it, 0)):
                self.trace.stamp("first_issue")

    def _epilogue_iteration(self, j, w):
        """Ring iteration of the stage that consumer warpgroup w stages tile j in (slots = 0)."""
        e = self.e
        return e.add(e.add(e.mul(j, self.per_tile), self.ktiles), w)

    def _lend_stage(self, j, w, m0, n0) -> None:
        """Epilogue in the ring: once the consumers released the stage of warpgroup w's
        epilogue iteration of tile j, TMA that warpgroup's residual rows into it (arming
        `full` for their bytes), or, without a residual, just complete its `full` phase."""
        e, ring = self.e, self.ring
        st, phase = ring.slot(self._epilogue_iteration(j, w))
        ring.acquire(st, phase)
        full = ring.full(st)
        if not self.res:
            mbarrier_arrive(full)
            return
        self._tma_residual(st, full, e.c(w), m0, n0)

    def _tma_residual(self, k, full, w, m0, n0) -> None:
        """Arm `full` for consumer warpgroup w's residual slice of the tile at (m0, n0) and TMA
        it into residual slot k (with slots = 0: ring stage k's lent part), one box per
        epilogue panel."""
        e, lay = self.e, self.lay
        mbarrier_arrive_expect_tx(full, lay.res_slot)
        dm, dn = self._slice(w)
        row0, col0 = e.add(m0, dm), e.add(n0, dn)
        slot = self.smem.element(lay.res, k)
        for off, ch in epilogue_panel(self.res.dtype, lay.cols).boxes(lay.cols, lay.rows):
            tma_load(arith_d.addi(slot, i64(off)), self.slots[3],
                     [index_to(e.add(col0, ch), I32()), index_to(row0, I32())], full)

    def _load_residual(self, j, m0, n0) -> None:
        """TMA the residual rows of tile j for each consumer warpgroup that computes them."""
        e, lay = self.e, self.lay
        targets = [(e.c(w), j) for w in range(2)] if self.coop else [(e.rem(j, 2), e.div(j, 2))]
        for w, use in targets:
            k, parity = self._slot(w, use)
            self.res_ring.acquire(k, parity)
            self._tma_residual(k, self.res_ring.full(k), w, m0, n0)

    # ------------------------------------------------------------------ stream-K
    def _producer_streamk(self) -> None:
        """The k-tiles of this CTA's stream-K segments (tile_scheduler.StreamKWork), in ring
        order."""
        p, s, e, lay = self.p, self.s, self.e, self.lay
        with e.for_(0, self.work.count(), 1) as (si, _, _y):
            t, k0, k1, it0 = self.work.segment(si)
            m0, n0 = self.tiles.origin_of(t)
            loader = ConvTmaLoader(e, p, s, self.slots[0], self.slots[1], m0, n0)
            with e.for_(k0, k1, 1) as (kt, _, _y2):
                self._issue(loader, kt, e.add(it0, e.sub(kt, k0)))
        self.trace.stamp("producer_done")
        self.trace.stamp("tiles", index_to(self.work.count(), I64()))

    def _flag(self, cta):
        return arith_d.addi(self.scratch, index_to(self.e.add(self.e.mul(cta, 8), self.sk.flags0), I64()))

    def _partial(self, cta):
        return arith_d.addi(self.scratch, arith_d.addi(
            i64(self.sk.work0), arith_d.muli(index_to(cta, I64()), i64(self.sk.tile_bytes))))

    def _consumer_streamk(self, cw) -> None:
        """Ping-pong consumers over this CTA's segments (warpgroup 0: the head of a tile, if
        any; warpgroup 1: the tail of the previous CTA's head tile): the main loop over the
        segment's k-tiles, then a head publishes its partial for the next CTA, and a tail adds
        the previous CTA's partial and runs the epilogue."""
        s, e, lay = self.s, self.e, self.lay
        wtid = e.rem(self.tid, WARPGROUP)
        elected = e.cmp("eq", wtid, 0)
        pid = self.tiles.pid
        with e.if_(elected):
            acquire_descriptor(self.slots[2])
        subs = self.subs
        row_base = e.c(0)
        with e.for_(cw, self.work.count(), 2) as (si, _, _y):
            t, k0, k1, it0 = self.work.segment(si)
            m0, n0 = self.tiles.origin_of(t)
            use = e.div(si, 2)
            self._turn_wait(cw, use)
            channel_ops = self._channel_ops(n0, wtid)
            st0, ph0 = self.ring.slot(it0)
            accs = self._k_step(st0, ph0, [undef_accumulator(self.mma_n) for _ in range(subs)], row_base, first=True)
            first_tile = arith_d.andi(elected, e.cmp("eq", use, 0)) if self.trace.on else None
            self.trace.consumer(e, cw, "first_data", first_tile)
            accs, last = self._k_loop(st0, ph0, e.sub(k1, k0), accs, row_base)
            self._turn_pass(cw, elected)
            wgmma_wait(0)
            self.trace.consumer(e, cw, "mainloop", first_tile)
            self._release(last)
            # A tail adds the head's partial from the previous CTA (0 or 1 iterations).
            prev = e.sub(pid, 1)
            fix = e.for_(prev, e.select(e.cmp("sgt", k0, 0), pid, prev), 1, accs)
            with fix as (q, accs, set_acc):
                with e.if_(elected):
                    sk.await_partial(self._flag(q), t)
                named_barrier(e.add(cw, 1), WARPGROUP)
                set_acc(sk.add_partial(e, accs, s.block_n, self._partial(q), wtid))
                if self.trace.on:
                    self.trace.consumer(e, cw, "fixed", elected)
            accs = fix.results
            head = e.all_of(e.cmp("eq", k0, 0), e.cmp("slt", k1, self.ktiles))
            with e.if_else(head) as (partial, finish):
                with partial:
                    sk.store_partial(e, accs, s.block_n, self._partial(pid), wtid)
                    named_barrier(e.add(cw, 1), WARPGROUP)
                    with e.if_(elected):
                        sk.publish(self._flag(pid), t)
                        self.trace.stamp("partial")
                with finish:
                    self._epilogue(accs, cw, None, use, m0, n0, wtid, elected, channel_ops, first_tile)
                    self.trace.consumer(e, cw, "stored", first_tile)
        with e.if_(elected):
            bulk_wait_read(0)          # the last store has read its staging slot
        self.trace.consumer(e, cw, "done", elected)

    # ------------------------------------------------------------------ consumers
    def _consumer(self, cw) -> None:
        s, e, lay = self.s, self.e, self.lay
        wtid = e.rem(self.tid, WARPGROUP)
        elected = e.cmp("eq", wtid, 0)
        with e.if_(elected):
            acquire_descriptor(self.slots[2])
        subs = self.subs
        step = 1 if self.coop else 2
        lb = e.c(0) if self.coop else cw
        dm, dn = self._slice(cw)
        with e.for_(lb, self.tiles.local_count(), step) as (j, _, _y):
            m0, n0 = self.tiles.origin(j)
            # the warpgroup's first operand row in the stage: pixels, or channels when swapped
            row_base = dn if self.swap else dm
            use = j if self.coop else e.div(j, 2)
            if not self.coop:
                self._turn_wait(cw, use)
            channel_ops = self._channel_ops(e.add(n0, dn), wtid)
            # k-tile 0 is peeled: its first wgmma ignores the (undefined) accumulator
            # (scale-d 0), so no zero-fill sits between the wgmma fence and the wgmma.
            st0, ph0 = self.ring.slot(e.mul(j, self.per_tile))
            # the CTA's first tile (ring iteration 0 on): its leading k-tiles may be direct loads
            direct = e.cmp("eq", j, 0) if self.direct else None
            accs = self._k_step(st0, ph0, [undef_accumulator(self.mma_n) for _ in range(subs)], row_base, first=True,
                                direct=None if direct is None else (0, direct))
            first_tile = arith_d.andi(elected, e.cmp("eq", use, 0)) if self.trace.on else None
            self.trace.consumer(e, cw, "first_data", first_tile)
            if self.in_ring:
                # Hand both stages the previous tile was staged in back to the producer once
                # this warpgroup's TMA store has read its own: each warpgroup arrives for its
                # four warps on both, so neither stage refills before both warpgroups waited
                # on it (a skipped phase would let a later wait on that stage pass early).
                with e.if_(arith_d.andi(elected, e.cmp("sgt", use, 0))):
                    bulk_wait_read(0)
                    for w in range(2):
                        prev, _ = self.ring.slot(self._epilogue_iteration(e.sub(j, 1), w))
                        self.ring.release(prev, count=WARPGROUP // 32)
            elif lay.res_in_place:
                # The staging slot doubles as the residual slot: once the previous tile's TMA
                # store has read its slot, hand that slot back to the producer (for this
                # tile's residual with one slot, the next tile's with two).
                with e.if_(arith_d.andi(elected, e.cmp("sgt", use, 0))):
                    bulk_wait_read(0)
                    self.res_ring.release(self._slot(cw, e.sub(use, 1))[0])
            last = st0
            if self.ktiles > 1:
                accs, last = self._k_loop(st0, ph0, self.ktiles, accs, row_base,
                                          direct if self.direct > 1 else None)
            if not self.coop:
                self._turn_pass(cw, elected)
            wgmma_wait(0)
            self.trace.consumer(e, cw, "mainloop", first_tile)
            self._release(last)
            self._epilogue(accs, cw, j, use, e.add(m0, dm), e.add(n0, dn), wtid, elected, channel_ops, first_tile)
            self.trace.consumer(e, cw, "stored", first_tile)
        with e.if_(elected):
            bulk_wait_read(0)          # the last store has read its staging slot
        self.trace.consumer(e, cw, "done", elected)

    def _turn_wait(self, cw, use) -> None:
        """Ping-pong turns: this warpgroup's main loop (its use-th) starts once the other one
        has waited on every stage of its tile, so the shared ring's phases never alias."""
        e = self.e
        mbarrier_wait(self.smem.element(self.lay.turn, cw), index_to(e.rem(e.add(use, e.add(cw, 1)), 2), I32()))

    def _turn_pass(self, cw, elected) -> None:
        """Hand the ring to the other warpgroup (it has waited on all of this main loop's stages)."""
        with self.e.if_(elected):
            mbarrier_arrive(self.smem.element(self.lay.turn, self.e.sub(1, cw)))

    def _channel_ops(self, n0, wtid) -> dict:
        """Per-channel operands (bias) for the warpgroup's channels from n0, loaded before the
        main loop so their latency hides under it (loaded in the epilogue they were its
        largest stall)."""
        e = self.e
        lane = e.rem(wtid, 32)
        if self.swap:
            return channel_operands_rows(e, self.p, self.memrefs, n0, e.div(wtid, 32), lane, self.subs)
        return channel_operands(e, self.p, self.memrefs, n0, e.mul(e.rem(lane, 4), 2), self.s.block_n)

    def _k_loop(self, st0, ph0, n, accs, row_base, direct_tile=None):
        """The n - 1 ring iterations after the peeled first one (stage st0, phase parity ph0),
        each releasing the stage before it (wgmma keeps one group in flight). The stage and its
        parity are carried through the loop (no division per k-step on the way to the wgmmas).
        direct_tile: this tile's first `self.direct` k-tiles were direct loads (i1).
        Returns the accumulators and the last iteration's stage (still to be released)."""
        e = self.e
        loop = e.for_(1, n, 1, list(accs) + [st0, ph0])
        with loop as (kt, carried, set_acc):
            accs, prev, ph = carried[:-2], carried[-2], carried[-1]
            st, ph = self.ring.advance(prev, ph)
            # direct k-tiles are 0 and 1 (direct_loads.MAX_DIRECT_STAGES): here only k-tile 1
            direct = None if direct_tile is None else (1, arith_d.andi(direct_tile, e.cmp("eq", kt, 1)))
            accs = self._k_step(st, ph, accs, row_base, direct=direct)
            self._release(prev)
            set_acc(list(accs) + [st, ph])
        return loop.results[:-2], loop.results[-2]

    def _release(self, st) -> None:
        """This warp is done reading ring stage st (and tells the cluster's peers, which
        multicast into it too)."""
        self.ring.release_warp(st, self.e.rem(self.tid, 32), self.tiles.rank, self.s.cluster_m)

    def _k_step(self, st, phase, accs, row_base, first: bool = False, direct=None):
        """Ring stage st at phase parity `phase`: wait for it, issue its wgmmas, keep one group
        in flight. direct = (kt, i1): where it holds, the stage is direct k-tile kt, loaded by
        the consumers' cp.async (direct_loads.py): join it first."""
        if direct is not None:
            kt, cond = direct
            with self.e.if_(cond):
                self.prologue.join(kt)
        self.ring.wait(st, phase)
        accs = self._mma_stage(accs, self.smem.element(self.lay.a, st), self.smem.element(self.lay.b, st), row_base,
                               first)
        wgmma_wait(1)
        return accs

    def _mma_stage(self, accs, a_stage, b_stage, row_base, first: bool = False):
        """One K tile of block_k channels: per 64-row sub-block, one wgmma m64n{N}k16 (k8 for
        TF32) per 32 bytes of the row (the first of a tile with scale-d 0: D = A * B). The
        sub-blocks are activation rows (N = block_n), or filter rows when swapped (N = block_m
        pixels)."""
        s = self.s
        row, lay = self.row, self.swizzle_layout
        m_stage, n_stage = (b_stage, a_stage) if self.swap else (a_stage, b_stage)
        m_wg = arith_d.addi(m_stage, arith_d.muli(index_to(row_base, I64()), i64(row)))
        wgmma_fence()
        out = []
        a_lo, b_lo = smem_descriptor_lo(m_wg), smem_descriptor_lo(n_stage)
        for sub, acc in enumerate(accs):
            for kk in range(row // 32):
                da = smem_descriptor_at(a_lo, 64 * sub * row + 32 * kk, 8 * row, layout=lay)
                db = smem_descriptor_at(b_lo, 32 * kk, 8 * row, layout=lay)
                acc = wgmma_m64nk16(acc, da, db, self.mma_n, self.p.dtype, accumulate=not (first and kk == 0))
            out.append(acc)
        wgmma_commit()
        return out

    def _epilogue(self, accs, cw, j, use, m0, n0, wtid, elected, channel_ops, first_tile=None) -> None:
        """Residual wait, fragments -> staging slot, TMA store of the slot to the warpgroup's
        slice of the output at (m0, n0)."""
        p, s, e, lay = self.p, self.s, self.e, self.lay
        if self.in_ring:
            # the lent stage: its `full` phase says the producer has it (and its residual landed)
            k, parity = self.ring.slot(self._epilogue_iteration(j, cw))
            self.ring.wait(k, parity)
        else:
            k, parity = self._slot(cw, use)
            with e.if_(elected):
                bulk_wait_read(lay.slots - 1)    # the previous store from this slot has read it
            named_barrier(e.add(cw, 1), WARPGROUP)
            if self.res:
                self.res_ring.wait(k, parity)
        if self.res:
            self.trace.consumer(e, cw, "residual", first_tile)
        out_slot = self.smem.element(lay.out, k)
        res_slot = self.smem.element(lay.res, k) if self.res else None
        lane = e.rem(wtid, 32)
        if self.swap:
            stage_fragments_swapped(e, p, accs, lay.rows, out_slot, lay.cols, e.div(wtid, 32), lane, channel_ops,
                                    res_slot)
        else:
            stage_fragments(e, p, accs, s.block_n, out_slot, lay.rows, e.div(wtid, 32), lane, channel_ops, res_slot)
        self.trace.consumer(e, cw, "staged", first_tile)
        if self.res and not lay.res_in_place:
            self.res_ring.release(k)    # residual slot may be refilled
        async_proxy_fence()            # st.shared -> visible to the TMA store
        named_barrier(e.add(cw, 1), WARPGROUP)
        with e.if_(elected):
            panel = epilogue_panel(p.out_dtype, lay.cols)
            for off, ch in panel.boxes(lay.cols, lay.rows):
                tma_store(self.slots[2], arith_d.addi(out_slot, i64(off)),
                          [index_to(e.add(n0, ch), I32()), index_to(m0, I32())])
            bulk_commit()
        if self.in_ring:
            # observe the other warpgroup's lent stage too: every consumer thread then waits on
            # every phase of every stage's `full` barrier, as in the main loop
            other, other_parity = self.ring.slot(self._epilogue_iteration(j, e.sub(1, cw)))
            self.ring.wait(other, other_parity)


def emit_sm90_ws(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    Sm90WarpSpecialized(p, s, machine).emit(memrefs)
