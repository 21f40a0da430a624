"""The row kernel: a map that reads a reduction of each row's channels (plan:
passes/plan/kernels/row_map.py).

Row r of the workgroup's block_m rows is held by `lanes` consecutive lanes; lane l loads the
row's channel vectors l, l + lanes, ... once. The reduction's per-element program
(ConvProblem.row_reduce, in the input type) runs on those registers, its results are combined
in f32 (within each vector, then across the lanes by shuffles) and rounded to the reduction's
type, and the same vectors then go through the map's epilogue with that value as its "row"
operand. Rows past the end read row 0 and are not stored, so every lane takes part in the
shuffles.
"""

from __future__ import annotations

from ...ir import ir, arith_d, hal_d, vector_d
from ...kernel_configs import RowMapConfig
from ...problem import ConvProblem, DTYPE_BYTES, EpilogueStep
from ...schedule import Schedule
from .emit import cdiv, convert, float_type, splat, vec_type, Emitter
from .epilogue import run_program, store_row_masked
from .executable import gemm_rows


def emit_row_map(p: ConvProblem, s: Schedule, machine, memrefs: list) -> None:
    e = Emitter()
    lanes, V = s.config_as(RowMapConfig).lanes, s.block_n
    vectors = cdiv(p.C, V)
    f32v = vec_type(V, "f32")
    pid = hal_d.InterfaceWorkgroupIDOp(0).result
    tid = machine.thread_id(e)
    row, lane = e.add(e.mul(pid, s.block_m), e.div(tid, lanes)), e.rem(tid, lanes)
    safe = e.select(e.cmp("slt", row, gemm_rows(e, p, memrefs)), row, 0)
    held = []
    for j in range(cdiv(vectors, lanes)):
        f = e.mul(e.add(lane, j * lanes), V)
        ok = None if vectors % lanes == 0 else e.cmp("slt", f, p.C)
        addr = e.add(e.mul(safe, p.C), f)
        v = vector_d.load(vec_type(V, p.dtype), memrefs[p.input], [addr if ok is None else e.select(ok, addr, 0)],
                          alignment=V * DTYPE_BYTES[p.dtype])
        held.append((ok, f, v))
    (row_load,) = {ld for ld in p.operand_loads if ld.broadcast == "row"}
    identity = float("-inf") if p.row_combine == "max" else 0.0
    kind = vector_d.CombiningKind.MAXIMUMF if p.row_combine == "max" else vector_d.CombiningKind.ADD
    total = None
    for ok, f, v in held:
        c = v
        if p.row_reduce:
            c = run_program(EpilogueStep("program", p.row_reduce[-1].dtype, program=p.row_reduce), v, [], V)
        c = convert(c, f32v)
        if ok is not None:
            c = arith_d.select(ok, c, splat(f32v, identity))
        part = vector_d.reduction(ir.F32Type.get(), kind, c)
        total = part if total is None else (arith_d.addf(total, part) if p.row_combine == "sum"
                                            else arith_d.maximumf(total, part))
    total = machine.subgroup_reduce(total, lanes, s.subgroup_size, p.row_combine)
    value = convert(total, float_type(row_load.dtype))
    for ok, f, v in held:
        if ok is None:
            store_row_masked(e, p, memrefs, convert(v, f32v), V, row, f, row=value)
        else:
            with e.if_(ok):
                store_row_masked(e, p, memrefs, convert(v, f32v), V, row, f, row=value)


def row_map_batch_grid(p: ConvProblem, s: Schedule):
    """The grid for a runtime batch: one workgroup per block_m rows."""
    def grid(x):
        e = Emitter()
        return [e.div(e.add(x.rows, s.block_m - 1), s.block_m), e.c(1), e.c(1)]
    return grid
