"""sm_100a warp-specialized persistent implicit GEMM on tcgen05 (the MAX SM100
Conv2dFpropKernel design): one SM per tile (cta_group::1, the default), or a CTA pair per
256-row tile (Sm100WsConfig.cluster_m = 2, cta_group::2; the planner's choice for large problems).

192 threads in six warps, each role one branch of one if/else:
- warp 0, TMA (one thread): walks this CTA's tiles and issues every operand TMA: im2col
  activation (block_m = 128 output pixels) + filter (block_n channels) k-tiles of block_k
  channels into the swizzled stage ring, waiting on `empty`, arming `full` (tma_loader.py, the
  same loader and descriptors as the sm_90a kernels);
- warp 1, MMA (one thread issues): per tile, waits until the epilogue has drained the tile's
  accumulator stage (`acc_empty`), then per k-tile waits on `full` and issues block_k / 16
  `tcgen05.mma.cta_group::1.kind::f16` (128 x block_n x 16, f32 accumulators in tensor
  memory), then `tcgen05.commit` onto the stage's `empty` barrier: the stage is refilled only
  once those MMAs have read it. After the tile's last k-tile a commit onto `acc_full`. The
  whole warp allocates the tensor memory at the start and frees it at the end;
- warps 2..5, epilogue (128 threads): per tile, wait on `acc_full`, read the accumulator with
  `tcgen05.ld.32x32b.x32` (warp w reads tensor-memory lanes 32 (w % 4) .. +31, i.e. output
  rows; each thread one row, 32 channels per load) + `tcgen05.wait::ld`, hand the stage back
  (`acc_empty`, after `tcgen05.fence::before_thread_sync`) once the last columns are in
  registers, apply the epilogue steps (common/epilogue.apply_steps: bias, residual, programs,
  casts) 16 bytes of output at a time, store them into a 128B/64B-swizzled staging slot (the
  sm_90a panel layout, warp_roles.swizzled), and one thread TMA-stores the slot.

Two accumulator stages in tensor memory (2 x block_n columns): the MMAs of tile j + 1 run while
the epilogue warps drain tile j. A residual of the output's dtype is TMA-loaded by the
epilogue's elected thread into the staging slot itself (`res_full`) as soon as the previous
store has read the slot, before it waits for the accumulator, so it lands under the MMAs; each
thread reads its residual elements and writes its outputs at the same addresses.

Persistent static tile walk (tile_scheduler.PersistentTiles, one CTA per SM, tile t = pid +
j * grid): the three roles evaluate the same arithmetic and agree on every tile without
communicating. Cluster launch control (hardware work stealing) is not used: IREE 3.13 launches
with plain cuLaunchKernel and the whole kernel's schedule is fixed at compile time; dynamic
tile claiming measured slower than the static order on sm_90a (bench/NOTES.md).

Tensor-memory life cycle (PTX ISA, tcgen05 memory consistency): warp 1 `tcgen05.alloc`s the
columns into a shared-memory slot and `relinquish_alloc_permit`s before the CTA barrier that
publishes the address (`fence::before_thread_sync` / barrier / `fence::after_thread_sync`);
at the end every epilogue thread, its last `tcgen05.ld` waited for, fences
(`before_thread_sync`) and meets warp 1 at named barrier 2, after which warp 1 fences
(`after_thread_sync`) and `tcgen05.dealloc`s the same columns. Every MMA has completed by
then: the epilogue waited on `acc_full` of each stage's last tile, committed after its MMAs.

Shared memory, one 1024-aligned allocation:
[A stages][B stages][staging slot][full x S][empty x S][acc_full x 2][acc_empty x 2][res_full]
[tensor-memory address].

CTA pairs (2x1 clusters): each CTA loads its 128 rows and half of the filter rows into its own
stages, counting the bytes on the leader's (rank 0's) `full` through `mapa` (only the leader
arms it); the leader's MMA thread issues cta_group::2 MMAs (M = 256) and multicasts its commits
to both CTAs' `empty` / `acc_full`; both CTAs' epilogue threads arrive on the leader's
`acc_empty`; tensor memory is allocated and freed collectively (cta_group::2) between cluster
barriers, which also keep either CTA from exiting while the other may still signal it.

Barrier parities: ring iteration it = j * k_tiles + kt uses stage it % S with parity
(it / S) % 2 (the TMA thread waits on `empty` with the other parity); tile j uses accumulator
stage j % 2 with parity (j / 2) % 2 (`acc_empty` waited with the other parity); `res_full`
completes once per tile (parity j % 2). Each barrier has one waiter kind that consumes every
phase in order, so no waiter is ever more than one phase ahead (test_sm100_protocol.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import arith_d, hal_d, llvm_d
from ...problem import ConvProblem, DTYPE_BYTES, OperandLoad
from ...kernel_configs import Sm100WsConfig
from ...schedule import Schedule
from ..common.emit import Emitter
from . import tcgen05 as tc
from . import tensormap as tm
from .primitives import (I16, I32, as_shared_ptr, cluster_ctarank_count, cluster_sync, i32, index_to,
                         mbarrier_arrive_expect_tx, mbarrier_init_fence, named_barrier, trap_unless)
from .ring import MbarrierRing, PhaseBarrier
from .sm100_ws_epilogue import Epilogue
from .sm100_ws_layout import (ACC_STAGES, BLOCK_M, DEALLOC_BARRIER, DESCRIPTORS, EPILOGUE_BARRIER,  # noqa: F401
                              EPILOGUE_THREADS, FIRST_EPILOGUE_WARP, KERNEL, MAX_STAGES, MMA_WARP, TMA_WARP, THREADS,
                              WARP, Sm100Layout, Sm100Unsupported, check_supported, sm100_layout, store_width,
                              tmem_columns)
from .smem import SharedBlock
from .tile_scheduler import PersistentTiles
from .tma_loader import (ConvTmaLoader, activation_runtime_sizes, activation_runtime_strides, descriptor_slots, epilogue_map_args, k_tile_tap, k_tiles, residual_binding, tensor_maps,
                         write_descriptors)


@dataclass(frozen=True)
class Sm100Mode:
    """The schedule resolved for the problem (sm100_mode): plain values, no IR."""
    p: ConvProblem
    s: Schedule
    lay: Sm100Layout
    group: int                       # tcgen05 cta_group: 1, or 2 for a CTA pair
    ktiles: int
    row: int                         # bytes of a swizzled K row
    res: OperandLoad | None          # the TMA-loaded residual, if any
    cols: int                        # tensor-memory columns allocated
    idesc: int                       # the MMA instruction descriptor
    desc_a: int                      # operand shared-memory descriptors at address 0
    desc_b: int

    @property
    def pair(self) -> bool:
        return self.group == 2

    @property
    def mask(self) -> int:
        """The CTAs a commit arrives in: both of a pair."""
        return 0b11 if self.pair else 0


def sm100_mode(p: ConvProblem, s: Schedule) -> Sm100Mode:
    """Resolves s for p, or raises Sm100Unsupported."""
    cluster = s.config_as(Sm100WsConfig).cluster_m
    if s.block_m != BLOCK_M or s.threads != THREADS or cluster not in (1, 2):
        raise Sm100Unsupported(f"schedule {s.describe()} is not an sm100_ws tile")
    check_supported(p, s.block_n, s.block_k, cluster)
    lay = sm100_layout(p, s.block_n, s.block_k, s.stages, cluster)
    if lay.total != s.smem_bytes:
        raise Sm100Unsupported(f"schedule allots {s.smem_bytes} B of shared memory, the layout needs {lay.total}")
    row = s.block_k * DTYPE_BYTES[p.dtype]
    # operand descriptors at address 0 (the stage address is or-ed in): 8-row core
    # matrices one swizzle atom (8 rows) apart, swizzled over the K row
    return Sm100Mode(p=p, s=s, lay=lay, group=cluster, ktiles=k_tiles(p, s.block_k), row=row,
                     res=p.residual_loads[0] if p.residual_loads else None, cols=tmem_columns(s.block_n),
                     idesc=tc.instr_descriptor(BLOCK_M * cluster, s.block_n, p.dtype,
                                               "i32" if p.acc_dtype == "i32" else "f32", cta_group=cluster),
                     desc_a=tc.smem_descriptor(0, 8 * row, row), desc_b=tc.smem_descriptor(0, 8 * row, row))


@dataclass(frozen=True)
class Sm100State:
    """What emit() builds before the role split and every role reads: the mode, the emitter,
    the kernel's operands, the tile walk, shared memory with its rings, the descriptor slots
    and the tensor-memory address. The roles set nothing on it."""
    mode: Sm100Mode
    e: Emitter
    memrefs: object
    tiles: PersistentTiles
    smem: SharedBlock
    ring: MbarrierRing              # operand stages: TMA thread -> MMA thread
    accs: MbarrierRing              # accumulator stages: MMA thread -> epilogue warps
    res_full: PhaseBarrier          # the residual's landing in the staging slot, once per tile
    slots: list
    taddr: object                   # the tensor memory's base address (i32)
    leader: object                  # this CTA is rank 0 of its pair (i1)
    extents: object = None          # the problem's Extents when sizes are read at run time


class Sm100WarpSpecialized:
    """The kernel: its mode resolved at construction (a schedule it cannot run is refused
    before any IR), its roles emitted from one Sm100State."""

    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.mode = sm100_mode(p, s)
        self.m = machine

    # ------------------------------------------------------------------ kernel
    def emit(self, memrefs) -> None:
        mode = self.mode
        p, s, lay = mode.p, mode.s, mode.lay
        e = Emitter()
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        tid = self.m.thread_id(e)
        # runtime sizes: the tile walk counts the output rows at run time, and the activation's
        # images, height and width (and the strides that follow from them) and the output's
        # (and residual's) rows are written into their maps in-kernel, as on sm_90a
        x = memrefs.extents if p.runtime_sizes else None
        rows = x.rows if x is not None else None
        tiles = PersistentTiles(e, p, s, pid, rows)
        smem = SharedBlock(self.m, lay.total)
        # operand stages (TMA thread -> MMA thread) and accumulator stages (MMA thread ->
        # epilogue warps: a tile's accumulator is the unit, so tile j is its iteration j)
        ring = MbarrierRing(e, smem, lay.full, lay.empty)
        accs = MbarrierRing(e, smem, lay.acc_full, lay.acc_empty)
        # the residual's landing in the staging slot, once per tile
        res_full = PhaseBarrier(e, smem, lay.res_full)

        maps = tensor_maps(p, s)
        descs = [maps.activation, maps.filter, tm.encode_tiled(epilogue_map_args(p, p.out_dtype, BLOCK_M, s.block_n))]
        bindings = [memrefs[p.input], memrefs[p.filter], memrefs[p.num_operands]]
        sizes = strides = None
        if x is not None:
            sizes, strides = [activation_runtime_sizes(p, x), {}, {1: rows}], [activation_runtime_strides(e, p, x), {}, {}]
        if mode.res:
            descs.append(tm.encode_tiled(epilogue_map_args(p, mode.res.dtype, BLOCK_M, s.block_n, residual=True)))
            bindings.append(residual_binding(p, memrefs, mode.res))
            if x is not None:
                sizes, strides = sizes + [{1: rows}], strides + [{}]
        slots = descriptor_slots(pid, memrefs[-1], DESCRIPTORS)
        warp = e.div(tid, WARP)
        lane = e.rem(tid, WARP)

        with e.if_(e.cmp("eq", tid, 0)):
            # the operand maps are acquired by this thread (it issues their TMAs); the epilogue's
            # elected thread acquires the output and residual maps
            write_descriptors(descs, slots[:len(descs)], bindings, acquire=2, sizes=sizes, strides=strides)
            _init_barriers(ring, accs, res_full, mode.group)
        if mode.pair:
            # the kernel is compiled for a 2x1 cluster; both CTAs' barriers are initialised
            # before either allocates (the pair's allocation is collective) or signals the other
            self.m.barrier()
            trap_unless(arith_d.cmpi(0, cluster_ctarank_count(), i32(2)))
            cluster_sync()
        with e.if_(e.cmp("eq", warp, MMA_WARP)):
            tc.tmem_alloc(smem.element(lay.tmem_slot, 0), mode.cols, mode.group)
            tc.tmem_relinquish_alloc_permit(mode.group)
        tc.fence_before_thread_sync()
        if mode.pair:
            cluster_sync()
        else:
            self.m.barrier()
        tc.fence_after_thread_sync()
        taddr = llvm_d.load(I32(), as_shared_ptr(smem.element(lay.tmem_slot, 0)), alignment=4)
        leader = e.cmp("eq", tiles.rank, 0)
        k = Sm100State(mode=mode, e=e, memrefs=memrefs, tiles=tiles, smem=smem, ring=ring, accs=accs,
                       res_full=res_full, slots=slots, taddr=taddr, leader=leader, extents=x)

        with e.if_else(e.cmp("eq", warp, TMA_WARP)) as (tma_role, rest):
            with tma_role:
                with e.if_(e.cmp("eq", lane, 0)):
                    _producer(k)
            with rest:
                with e.if_else(e.cmp("eq", warp, MMA_WARP)) as (mma_role, epilogue_role):
                    with mma_role:
                        # a pair's MMAs are issued by the leader CTA alone
                        with e.if_(arith_d.andi(e.cmp("eq", lane, 0), leader) if mode.pair
                                   else e.cmp("eq", lane, 0)):
                            _mma(k)
                        if not mode.pair:
                            # every MMA completed (the epilogue saw each stage's last acc_full)
                            # and every tcgen05.ld was waited for: free the tensor memory
                            named_barrier(DEALLOC_BARRIER, WARP + EPILOGUE_THREADS)
                            tc.fence_after_thread_sync()
                            tc.tmem_dealloc(taddr, mode.cols)
                    with epilogue_role:
                        Epilogue(k).emit(e.sub(tid, FIRST_EPILOGUE_WARP * WARP), warp, lane)
                        if not mode.pair:
                            tc.fence_before_thread_sync()
                            named_barrier(DEALLOC_BARRIER, WARP + EPILOGUE_THREADS)
        if mode.pair:
            # Both CTAs' epilogues are done (so every MMA of the pair completed and every
            # tcgen05.ld was waited for) before either frees its tensor memory, and no CTA
            # exits while its peer may still signal one of its barriers.
            tc.fence_before_thread_sync()
            cluster_sync()
            tc.fence_after_thread_sync()
            with e.if_(e.cmp("eq", warp, MMA_WARP)):
                tc.tmem_dealloc(taddr, mode.cols, mode.group)


def _init_barriers(ring: MbarrierRing, accs: MbarrierRing, res_full: PhaseBarrier, group: int) -> None:
    # full: the expect_tx arrival + TMA bytes; empty and acc_full: one tcgen05.commit;
    # acc_empty: every epilogue thread of both CTAs of a pair; res_full: expect_tx + TMA
    ring.init(1)
    accs.init(EPILOGUE_THREADS * group)
    res_full.init()
    mbarrier_init_fence()


# ---------------------------------------------------------------------- TMA warp
def _producer(k: Sm100State) -> None:
    mode, e = k.mode, k.e
    p, s, lay = mode.p, mode.s, mode.lay
    with e.for_(0, k.tiles.local_count(), 1) as (j, _, _y):
        m0, n0 = k.tiles.origin(j)
        loader = ConvTmaLoader(e, p, s, k.slots[0], k.slots[1], m0, n0,
                               k.extents if p.dynamic_spatial else None)
        with e.for_(0, mode.ktiles, 1) as (kt, _, _y2):
            st, ph = k.ring.slot(e.add(e.mul(j, mode.ktiles), kt))
            k.ring.acquire(st, ph)
            a_dst, b_dst = k.smem.element(lay.a, st), k.smem.element(lay.b, st)
            if mode.pair:
                _load_pair(k, loader, kt, a_dst, b_dst, k.ring.full(st))
            else:
                loader.load(kt, a_dst, b_dst, k.ring.full(st))


def _load_pair(k: Sm100State, loader, kt, a_dst, b_dst, full) -> None:
    """A CTA pair's k-tile: this CTA's 128 activation rows and its half of the filter rows
    (rank r: rows n0 + r block_n / 2 ..) into its own stage; the bytes of both CTAs count
    on the leader's `full`, which the leader's TMA thread arms for both."""
    e, p, s, lay = k.e, k.mode.p, k.mode.s, k.mode.lay
    bk = s.block_k
    r, sx, c0 = k_tile_tap(e, p, bk, kt)
    with e.if_(k.leader):
        mbarrier_arrive_expect_tx(full, 2 * (lay.a_stage + lay.b_stage))
    bar = tc.leader_barrier(full)
    offsets = [index_to(e.mul(sx, p.dilation[1]), I16()), index_to(e.mul(r, p.dilation[0]), I16())]
    tc.tma_load_pair(a_dst, loader.desc_a, [index_to(c0, I32()), loader.w0, loader.h0, loader.n_img], bar, offsets)
    f0 = arith_d.addi(loader.f0, index_to(e.mul(k.tiles.rank, s.block_n // 2), I32()))
    tc.tma_load_pair(b_dst, loader.desc_b, [index_to(e.mul(kt, bk), I32()), f0], bar)


# ---------------------------------------------------------------------- MMA warp
def _mma(k: Sm100State) -> None:
    mode, e = k.mode, k.e
    lay, s = mode.lay, mode.s
    with e.for_(0, k.tiles.local_count(), 1) as (j, _, _y):
        acc, aph = k.accs.slot(j)
        k.accs.acquire(acc, aph)
        tc.fence_after_thread_sync()
        d = arith_d.addi(k.taddr, index_to(e.mul(acc, s.block_n), I32()))
        with e.for_(0, mode.ktiles, 1) as (kt, _, _y2):
            st, ph = k.ring.slot(e.add(e.mul(j, mode.ktiles), kt))
            k.ring.wait(st, ph)
            da = tc.smem_descriptor_value(mode.desc_a, k.smem.element(lay.a, st))
            db = tc.smem_descriptor_value(mode.desc_b, k.smem.element(lay.b, st))
            for kk in range(mode.row // 32):
                # K step kk: 32 bytes further along the swizzled K row of both operands
                first = e.cmp("ne", kt, 0) if kk == 0 else True
                tc.mma(d, tc.descriptor_plus(da, 32 * kk), tc.descriptor_plus(db, 32 * kk),
                       mode.idesc, first, mode.group, tc.KIND[mode.p.dtype])
            # the stage is read: refill it (in both CTAs of a pair)
            tc.commit(k.ring.empty(st), mode.group, mode.mask)
        tc.commit(k.accs.full(acc), mode.group, mode.mask)   # the accumulator is done


def emit_sm100_ws(p: ConvProblem, s: Schedule, machine, memrefs) -> None:
    Sm100WarpSpecialized(p, s, machine).emit(memrefs)
