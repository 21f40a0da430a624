"""What the warp-specialized sm_90a kernels (sm90_ws.py, sm90_rows.py) share: the producer /
consumer role split with register reallocation, and the epilogue's fragment -> staging-slot
pass (per-channel operands, an optional residual from shared memory, swizzled panels).
"""

from __future__ import annotations

from ...ir import arith_d, llvm_d, memref_d, vector_d
from ...problem import ConvProblem, DTYPE_BYTES
from ..common.emit import float_type, vec_type
from ..common.epilogue import apply_steps
from .primitives import I32, I64, as_shared_ptr, index_to, ldmatrix_x4, set_max_registers, stmatrix_x4
from .tma_loader import epilogue_panel

WARPGROUP = 128
THREADS = 3 * WARPGROUP
PRODUCER_REGS, CONSUMER_REGS = 40, 232
SM_REGISTERS = 65536


def threads_for(consumers: int) -> int:
    """Threads of a kernel with one producer warpgroup and `consumers` consumer warpgroups."""
    return (1 + consumers) * WARPGROUP


def consumer_registers_for(consumers: int) -> int:
    """setmaxnreg count of each consumer warpgroup. A CTA launches with the registers ptxas gave
    every thread (65536 / threads, in multiples of 8: 168 for 384 threads, 128 for 512), and
    the share here is what those plus the producer's setmaxnreg.dec to 40 hand back cover.
    Four consumer warpgroups asking for 112 hung on an H200 (their 96 launch registers and the
    producer's 7168 returned ones cover 104); that setmaxnreg.inc waits for registers the CTA
    does not have is the lead, not isolated (no run since), so four are refused
    (sm90_ws_layout.check_supported). Two: 232 (the most a warpgroup takes beside the
    producer), three: 152 (ran correct), four: 104."""
    launch = SM_REGISTERS // threads_for(consumers) // 8 * 8
    freed = (launch - PRODUCER_REGS) * WARPGROUP
    return min(CONSUMER_REGS, launch + freed // (consumers * WARPGROUP) // 8 * 8)


def split_roles(e, tid, producer, consumer, consumers: int = 2) -> None:
    """One if/else: warpgroup 0 gives registers back (`setmaxnreg.dec`) and its thread 0 runs
    producer(); warpgroups 1 .. consumers take them (`setmaxnreg.inc`) and run consumer(cw)
    with cw = 0 .. consumers - 1."""
    wg = e.div(tid, WARPGROUP)
    with e.if_else(e.cmp("eq", wg, 0)) as (prod, cons):
        with prod:
            set_max_registers(PRODUCER_REGS, increase=False)
            with e.if_(e.cmp("eq", tid, 0)):
                producer()
        with cons:
            set_max_registers(consumer_registers_for(consumers), increase=True)
            consumer(e.sub(wg, 1))


def swizzled(e, slot_base_i64, rows: int, row, col_static: int, col_lane, dtype: str, block_n: int):
    """i64 shared address of (row, col) in a swizzled staging slot of block_n channels: panels
    (epilogue_panel) of `rows` rows each; col = col_static + col_lane, both in col_static's
    panel (col_lane: a lane-dependent offset of at most 16 columns)."""
    ob = DTYPE_BYTES[dtype]
    panel = epilogue_panel(dtype, block_n)
    chunk, cin = divmod(col_static, panel.cols)
    byte = e.add(e.mul(col_lane, ob), cin * ob)
    off = panel.offset(e, row, byte)
    return arith_d.addi(slot_base_i64, index_to(e.add(off, chunk * rows * panel.span), I64()))


class _OnFirstUse(dict):
    """A mapping whose values are emitted where they are first read (the epilogue's straight-
    line code, so each load dominates its later uses)."""

    def __init__(self, keys, load):
        super().__init__()
        self._keys, self._load = frozenset(keys), load

    def __missing__(self, key):
        if key not in self._keys:
            raise KeyError(key)
        self[key] = value = self._load(*key)
        return value


def channel_operands(e, p: ConvProblem, memrefs, n0, q2, block_n: int, on_first_use: bool = False) -> dict:
    """{(load index, j): vector<2> of that per-channel epilogue operand (p.operand_loads) at
    this thread's columns 8j + q2 + {0, 1} of the tile (q2 = 2(lane%4); clamped in bounds:
    stores clip)}. on_first_use: each load is emitted where the epilogue first reads it, so
    only a batch's operands are live at a time (tiles whose operands would not fit the
    registers beside the accumulators)."""
    def load(i, j):
        ld = p.operand_loads[i]
        f = e.add(n0, e.add(q2, 8 * j))
        f_safe = e.select(e.cmp("slt", f, p.F), f, p.F - 2)
        return vector_d.load(vec_type(2, ld.dtype), memrefs[ld.operand], [f_safe],
                             alignment=2 * DTYPE_BYTES[ld.dtype])
    keys = [(i, j) for i, ld in enumerate(p.operand_loads) if ld.broadcast == "channel"
            for j in range(block_n // 8)]
    if on_first_use:
        return _OnFirstUse(keys, load)
    return {key: load(*key) for key in keys}


def channel_operands_rows(e, p: ConvProblem, memrefs, ch0, warp, lane, subs: int) -> dict:
    """Swapped tiles (channels on the wgmma's M): {(load index, sub, h): vector<2> holding twice
    the per-channel epilogue operand of this thread's channel row 64 sub + 16 warp + lane/4 + 8h
    after ch0 (both pixel columns of a fragment share it; clamped in bounds: stores clip)}."""
    out = {}
    g = e.add(e.mul(warp, 16), e.div(lane, 4))
    for i, ld in enumerate(p.operand_loads):
        if ld.broadcast != "channel":
            continue
        for sub in range(subs):
            for h in range(2):
                f = e.add(ch0, e.add(g, 64 * sub + 8 * h))
                f_safe = e.select(e.cmp("slt", f, p.F), f, p.F - 1)
                out[(i, sub, h)] = vector_d.broadcast(vec_type(2, ld.dtype),
                                                      memref_d.load(memrefs[ld.operand], [f_safe]))
    return out


# Fragments per batch of the epilogue: all of a batch's residual loads are issued before any
# of its stores. One load then one store per fragment serialized them (the store may alias the
# next load, so neither ptxas nor the hardware overlaps the loads' latency): 2.5 us per
# 64x256 tile on the H200 (per-phase trace), against 0.45 us for the same epilogue without a
# residual.
EPILOGUE_BATCH = 12


def _acc_pair(acc, j: int, h: int, dtype: str):
    """vector<2 x dtype> of the fragment (8-column block j, row half h) of an accumulator of
    dtype values (f32, or i32: the s32 fragments of s8 wgmma sit in the same positions)."""
    t = float_type(dtype)
    return vector_d.from_elements(vec_type(2, dtype), [llvm_d.extractvalue(t, acc, [4 * j + 2 * h]),
                                                       llvm_d.extractvalue(t, acc, [4 * j + 2 * h + 1])])


def _operands(p: ConvProblem, channel_ops, j: int, residual) -> list:
    """The epilogue's operands (p.operand_loads) for 8-column block j: per-channel ones from
    channel_ops, the output-shaped one from residual(load index, load)."""
    return [channel_ops[(i, j)] if ld.broadcast == "channel" else residual(i, ld)
            for i, ld in enumerate(p.operand_loads)]


def stage_fragments(e, p: ConvProblem, accs, block_n: int, slot, rows: int, warp, lane, channel_ops,
                    res_slot=None, first_sub: int = 0) -> None:
    """Epilogue of m64nNk16 f32 fragments, or i32 ones of s8 wgmma (lane l of warp w holds, per
    8-column block j, rows 16w + l/4 (+8) of each 64-row sub-block and columns 8j + 2(l%4) +
    {0, 1}): apply the epilogue steps from p.acc_dtype (residual read from res_slot, same
    swizzled layout; it may be the staging slot itself) and store the result into the staging
    slot for a TMA store, a pair of adjacent channels per store (2 bytes of an i8 output).
    accs[i] is sub-block first_sub + i of the slot."""
    if (DTYPE_BYTES[p.out_dtype] == 2 and all(DTYPE_BYTES[ld.dtype] == 2 for ld in p.residual_loads)
            and block_n % 16 == 0):
        _stage_fragments_matrix(e, p, accs, block_n, slot, rows, warp, lane, channel_ops, res_slot, first_sub)
        return
    q2 = e.mul(e.rem(lane, 4), 2)
    frags = [(first_sub + i, acc, j, h) for i, acc in enumerate(accs) for j in range(block_n // 8) for h in range(2)]
    for b in range(0, len(frags), EPILOGUE_BATCH):
        batch = []
        for sub, acc, j, h in frags[b:b + EPILOGUE_BATCH]:
            row = e.add(e.add(e.mul(warp, 16), e.div(lane, 4)), 64 * sub + 8 * h)

            def residual(i, ld, row=row, j=j):
                addr = swizzled(e, res_slot, rows, row, 8 * j, q2, ld.dtype, block_n)
                return llvm_d.load(vec_type(2, ld.dtype), as_shared_ptr(addr), alignment=2 * DTYPE_BYTES[ld.dtype])
            batch.append((acc, j, h, row, _operands(p, channel_ops, j, residual)))
        for acc, j, h, row, operands in batch:
            addr = swizzled(e, slot, rows, row, 8 * j, q2, p.out_dtype, block_n)
            llvm_d.StoreOp(apply_steps(p, _acc_pair(acc, j, h, p.acc_dtype), operands, 2), as_shared_ptr(addr),
                           alignment=2 * DTYPE_BYTES[p.out_dtype])


# 8x8 matrix groups (four fragments each) per batch of the matrix epilogue.
MATRIX_BATCH = 3


def _stage_fragments_matrix(e, p: ConvProblem, accs, block_n: int, slot, rows: int, warp, lane,
                            channel_ops, res_slot, first_sub: int = 0) -> None:
    """16-bit outputs (and residual): four fragments, (j, h) for j in a pair of 8-column
    blocks and both row halves, move per ldmatrix / stmatrix x4, a quarter of the shared-memory
    instructions of per-fragment loads and stores. Lane L addresses row L%8 of matrix L/8."""
    m = e.div(lane, 8)
    row_in = e.add(e.add(e.mul(warp, 16), e.rem(lane, 8)), e.mul(e.rem(m, 2), 8))
    col_pair = e.mul(e.div(m, 2), 8)          # 0 or 8: which block of the pair this lane addresses
    groups = [(first_sub + i, acc, j) for i, acc in enumerate(accs) for j in range(0, block_n // 8, 2)]

    def lane_addr(base, sub, j, dtype):
        return swizzled(e, base, rows, e.add(row_in, 64 * sub), 8 * j, col_pair, dtype, block_n)

    _move_matrix_groups(e, p, groups, lane_addr, slot, res_slot,
                        lambda sub, jj, h, residual: _operands(p, channel_ops, jj, residual))


def _move_matrix_groups(e, p: ConvProblem, groups, lane_addr, slot, res_slot, operands_of,
                        trans: bool = False) -> None:
    """The x4 matrix epilogue shared by both tile orientations: per group (sub-block, its
    accumulator, fragment block j), matrix mm of the x4 move is (block j + mm/2, half mm%2).
    Each batch of MATRIX_BATCH groups loads its residual matrices (ldmatrix) before any of its
    stores (stmatrix), applies the epilogue steps in registers, and stores the outputs at the
    same lane addresses (lane_addr(base, sub, j, dtype)); operands_of(sub, jj, h, residual)
    gives a fragment's epilogue operands, residual(load index, load) its residual pair."""
    for b in range(0, len(groups), MATRIX_BATCH):
        loaded = []
        for sub, acc, j in groups[b:b + MATRIX_BATCH]:
            res = {i: ldmatrix_x4(lane_addr(res_slot, sub, j, ld.dtype), trans=trans)
                   for i, ld in enumerate(p.operand_loads) if ld.broadcast == "full"}
            loaded.append((sub, acc, j, res))
        for sub, acc, j, res in loaded:
            regs = []
            for mm in range(4):
                jj, h = j + mm // 2, mm % 2
                operands = operands_of(sub, jj, h,
                                       lambda i, ld: llvm_d.bitcast(vec_type(2, ld.dtype), res[i][mm]))
                regs.append(llvm_d.bitcast(I32(), apply_steps(p, _acc_pair(acc, jj, h, p.acc_dtype), operands, 2)))
            stmatrix_x4(lane_addr(slot, sub, j, p.out_dtype), regs, trans=trans)


def swapped_cell(ops, lane, warp, sub: int = 0, j: int = 0):
    """(pixel row, first of 8 channels) of the 16-byte staging row that `lane` addresses in
    the transposed x4 move of sub-block `sub`, pixel blocks j and j + 1: matrix m = lane/8 is
    (pixel block j + m/2, channel half m%2) of warp `warp`'s 16 channel rows, and the lane
    gives its pixel row lane%8. `ops`: an Emitter, or the tests' int model."""
    m = ops.div(lane, 8)
    pixel = ops.add(ops.add(ops.rem(lane, 8), ops.mul(ops.div(m, 2), 8)), 8 * j)
    channel = ops.add(ops.add(ops.mul(warp, 16), ops.mul(ops.rem(m, 2), 8)), 64 * sub)
    return pixel, channel


def stage_fragments_swapped(e, p: ConvProblem, accs, rows: int, slot, cols: int, warp, lane, channel_ops,
                            res_slot=None) -> None:
    """Epilogue of swapped tiles: accs[sub] holds m64n{rows} f32 fragments whose rows are the
    channels 64 sub .. 64 sub + 63 of this warpgroup's `cols` and whose columns are the tile's
    `rows` pixels. The staging slot keeps the usual [pixel][channel] swizzled layout (what the
    TMA store and the residual load use), so every 8x8 block moves transposed: stmatrix.trans
    (ldmatrix.trans for the residual), four blocks per instruction, (pixel block j or j + 1)
    x (channel half h). Lane L addresses pixel row L%8 of matrix L/8. 16-bit outputs and
    residuals only; rows a multiple of 16."""
    pixel_in, channel_in = swapped_cell(e, lane, warp)
    groups = [(sub, acc, j) for sub, acc in enumerate(accs) for j in range(0, rows // 8, 2)]

    def lane_addr(base, sub, j, dtype):
        return swizzled(e, base, rows, e.add(pixel_in, 8 * j), 64 * sub, channel_in, dtype, cols)

    def operands_of(sub, jj, h, residual):
        return [channel_ops[(i, sub, h)] if ld.broadcast == "channel" else residual(i, ld)
                for i, ld in enumerate(p.operand_loads)]

    _move_matrix_groups(e, p, groups, lane_addr, slot, res_slot, operands_of, trans=True)
