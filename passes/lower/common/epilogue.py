"""Fused epilogue: applies a problem's EpilogueSteps to accumulator vectors and stores them.

Shared by every kernel: given f32 accumulators for `width` consecutive output channels of one
output row, it loads the epilogue's operand slices (ConvProblem.operand_loads), applies the
steps in the order matched (add/mul/relu/casts, and program steps whose arith/math ops are
re-created by name on the vectors), and stores to the output in its element type.
"""

from __future__ import annotations

from ...ir import ir, arith_d, vector_d
from ...problem import ConvProblem, DTYPE_BYTES, EpilogueStep
from .emit import Emitter, convert, vec_type, zeros
from .executable import gemm_rows
from .program_math import (channel_invariant, emit_fast, fast_math, fold_constants, fuse_promoted,
                           hoist_channel_invariants, promoted_dtype, promotes, quantize_chains)


def _align(width: int, dtype: str, aligned: bool) -> int:
    return min(16, width * DTYPE_BYTES[dtype]) if aligned else DTYPE_BYTES[dtype]


def load_operands(e: Emitter, p: ConvProblem, memrefs: list, width: int, m: ir.Value, f: ir.Value,
                  aligned: bool, row: ir.Value | None = None) -> list:
    """The operand slices the epilogue of (m, f .. f+width-1) reads, in p.operand_loads order;
    `row`: row m's reduction (ConvProblem.row_reduce, a scalar the kernel computed), which "row"
    loads broadcast.

    Split from apply_and_store so a kernel can issue many rows' loads before the first use
    (m and f must then be in bounds: clamp them and mask only the store)."""
    out_index = e.add(e.mul(m, p.F), f)
    full = out_index if not p.residual_channels else \
        e.add(e.mul(m, p.residual_pitch), e.add(f, p.residual_channel_offset))    # a channel window
    index = {"channel": f, "full": full}
    if any(ld.broadcast == "image" for ld in p.operand_loads):
        x = getattr(memrefs, "extents", None)          # runtime image sizes: Ho * Wo read at run time
        index["image"] = e.add(e.mul(e.div(m, p.Ho * p.Wo if x is None else x.howo), p.F), f)   # [N, F]: row m's image
    return [vector_d.broadcast(vec_type(width, ld.dtype), row) if ld.broadcast == "row" else
            vector_d.load(vec_type(width, ld.dtype), memrefs[ld.operand], [index[ld.broadcast]],
                          alignment=_align(width, ld.dtype, aligned))
            for ld in p.operand_loads]


def apply_and_store(e: Emitter, p: ConvProblem, memrefs: list, acc: ir.Value, width: int,
                    m: ir.Value, f: ir.Value, aligned: bool, operands: list | None = None,
                    row: ir.Value | None = None) -> None:
    """acc: vector<width x f32> for output row m, channels f .. f+width-1 (all in bounds).

    aligned: f is a multiple of `width` and F is too, so slices may use wide alignment.
    operands: slices from load_operands (loaded here when omitted); row: as load_operands.
    """
    if operands is None:
        operands = load_operands(e, p, memrefs, width, m, f, aligned, row)
    out_index = e.add(e.mul(m, p.F), f)
    vector_d.store(apply_steps(p, acc, operands, width), memrefs[p.num_operands], [out_index],
                   alignment=_align(width, p.out_dtype, aligned))


def store_row_masked(e: Emitter, p: ConvProblem, memrefs: list, acc: ir.Value, width: int,
                     m: ir.Value, f: ir.Value, row: ir.Value | None = None) -> None:
    """Epilogue of `width` accumulators for output row m, channels f .. f+width-1, any of which
    may lie past the output (rows past M and channels past F are skipped). One vector access
    when F is a multiple of width (then f is too, and the group is all in or all out), else
    channel by channel."""
    with e.if_(e.cmp("slt", m, gemm_rows(e, p, memrefs))):
        if p.F % width == 0:
            with e.if_(e.cmp("slt", f, p.F)):
                apply_and_store(e, p, memrefs, acc, width, m, f, aligned=True, row=row)
            return
        for c in range(width):
            fc = e.add(f, c)
            with e.if_(e.cmp("slt", fc, p.F)):
                one = vector_d.extract_strided_slice(vec_type(1, p.acc_dtype), acc, [c], [1], [1])
                apply_and_store(e, p, memrefs, one, 1, m, fc, aligned=False, row=row)


def apply_steps(p: ConvProblem, acc: ir.Value, operands: list, width: int) -> ir.Value:
    """The epilogue arithmetic alone: acc (vector<width x f32>) and the operand slices in
    p.operand_loads order (each in its dtype) -> the output value in p.out_dtype."""
    operands = list(operands)
    val = acc
    cur = p.acc_dtype
    for step in p.epilogue:
        if step.op in ("add", "mul"):
            x = convert(operands.pop(0), vec_type(width, cur))
            val = arith_d.addf(val, x) if step.op == "add" else arith_d.mulf(val, x)
        elif step.op == "max0":
            if cur == "f32":
                val = arith_d.maximumf(val, zeros(vec_type(width, cur)))
            else:   # in f32, which is exact (IREE 3.13's llvm-cpu f16 expansion breaks on vector maximumf)
                wide = arith_d.maximumf(convert(val, vec_type(width, "f32")), zeros(vec_type(width, "f32")))
                val = convert(wide, vec_type(width, cur))
        elif step.op == "cast":
            val = convert(val, vec_type(width, step.dtype))
            cur = step.dtype
        elif step.op == "program":
            val = run_program(step, val, [operands.pop(0) for _ in step.loads], width)
            cur = step.dtype
    return convert(val, vec_type(width, p.out_dtype))


def run_program(step: EpilogueStep, val: ir.Value, loads: list, width: int) -> ir.Value:
    """Re-creates a program step's ops, by name and with their attributes, elementwise on
    vector<width> values: val is the step's input, loads its operand slices. Constant
    subexpressions are folded first and some math takes a cheaper form (program_math.py);
    a 16-bit program of float math runs in f32, rounded once at its end (program_math.promotes)."""
    vals = [val] + list(loads)
    first = len(vals)
    program, consts = fold_constants(step.program, first)
    program = quantize_chains(program, consts, first)
    fast = fast_math(step.dtype)
    dtypes = [_element(v) for v in loads]
    invariant = channel_invariant(program, first, {i + 1 for i, ld in enumerate(step.loads) if ld.broadcast == "channel"})
    hoisted, invariant = hoist_channel_invariants(program, first, invariant)
    wide = promotes(hoisted, step.dtype, _element(val), dtypes, invariant, first)
    if wide:
        vals = [convert(v, vec_type(width, "f32")) for v in vals]
        program, consts = fuse_promoted(hoisted, consts, first)
    for ins in program:
        dtype = promoted_dtype(ins.dtype) if wide else ins.dtype
        t = ir.VectorType.get([width], ir.IntegerType.get_signless(1)) if dtype == "i1" else vec_type(width, dtype)
        attrs = {name: ir.Attribute.parse(text) for name, text in ins.attrs}
        args = [vals[a] for a in ins.args]
        if wide and ins.op in ("arith.truncf", "arith.extf"):
            vals.append(args[0])                 # every float value is f32 already
            continue
        if ins.op == "arith.constant":
            value = attrs["value"]
            if wide:                             # the constant's own (16-bit) value, exact in f32
                value = ir.FloatAttr.get(ir.F32Type.get(), ir.FloatAttr(value).value)
            attrs["value"] = ir.DenseElementsAttr.get_splat(t, value)
        cheaper = emit_fast(ins, args, t, consts, fast)
        if cheaper is not None:
            vals.append(cheaper)
            continue
        if (wide or step.dtype in _INTEGER) and ins.op in _CONTRACTED and "fastmath" not in attrs:
            # a multiply feeding an add may fuse into an fma: one rounding fewer, as the
            # promotion itself; an integer result (a requantize) moves with it only where the
            # value lies within an ulp of a half
            attrs["fastmath"] = ir.Attribute.parse("#arith.fastmath<contract>")
        if ins.op == "arith.maximumf" and dtype == "f16":
            # IREE 3.13's llvm-cpu f16 expansion breaks on vector maximumf (it builds a scalar
            # extf): take it in f32, which is exact
            f32 = vec_type(width, "f32")
            wide_max = ir.Operation.create(ins.op, results=[f32], operands=[convert(a, f32) for a in args], attributes=attrs)
            vals.append(convert(wide_max.result, t))
            continue
        vals.append(ir.Operation.create(ins.op, results=[t], operands=args, attributes=attrs).result)
    return convert(vals[-1], vec_type(width, step.dtype)) if wide else vals[-1]


_CONTRACTED = ("arith.addf", "arith.subf", "arith.mulf")
_INTEGER = ("i8", "i16")


def _element(v: ir.Value) -> str:
    return str(ir.VectorType(v.type).element_type)
