"""Builds the `hal.executable.source` shell a kernel lives in.

Bindings follow the dispatch: one per operand (read-only), the result, then one scratch
buffer (reserved for TMA descriptors). Every binding is a flat 1-D memref; emitters index
it linearly. The export's count region returns the schedule's grid.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ir, arith_d, func_d, hal_d, parse_attr
from ...problem import ConvProblem
from ...schedule import Schedule
from .emit import float_type

SCRATCH_BYTES = 128   # one 128-byte slot: enough for one CUtensorMap


@dataclass
class Binding:
    name: str
    dtype: str
    elements: int
    readonly: bool


def conv_bindings(p: ConvProblem, operand_shapes: list[list[int]], operand_dtypes: list[str],
                  scratch_bytes: int = SCRATCH_BYTES) -> list[Binding]:
    """Bindings in dispatch order: operands, the output, the descriptor scratch."""
    out = []
    for i, (shape, dt) in enumerate(zip(operand_shapes, operand_dtypes)):
        n = 1
        for d in shape:
            n *= d
        out.append(Binding(f"arg{i}", dt, n, True))
    out.append(Binding("out", p.out_dtype, p.gemm_m * p.F, False))
    out.append(Binding("scratch", "i8", scratch_bytes, False))
    return out


def _layout(bindings: list[Binding]) -> ir.Attribute:
    items = ", ".join("#hal.pipeline.binding<storage_buffer, ReadOnly>" if b.readonly
                      else "#hal.pipeline.binding<storage_buffer>" for b in bindings)
    return parse_attr(f"#hal.pipeline.layout<bindings = [{items}]>")


def _elem_type(dtype: str) -> ir.Type:
    return ir.IntegerType.get_signless(8) if dtype == "i8" else float_type(dtype)


def build_executable(ip: ir.InsertionPoint, sym: str, s: Schedule, machine,
                     bindings: list[Binding], emit_body) -> hal_d.ExecutableSourceOp:
    """Creates `hal.executable.source @sym` with export `@sym` and calls
    emit_body(memrefs) inside its function to write the kernel."""
    layout = _layout(bindings)
    exe = hal_d.ExecutableSourceOp(sym, sym_visibility="private", ip=ip)
    exe_block = exe.regions[0].blocks.append()
    with ir.InsertionPoint(exe_block):
        export = hal_d.ExecutableExportOp(sym, layout, ordinal=ir.IntegerAttr.get(ir.IndexType.get(), 0))
        count = export.regions[0].blocks.append(ir.Type.parse("!hal.device"))
        with ir.InsertionPoint(count):
            g = [arith_d.constant(ir.IndexType.get(), x) for x in s.grid]
            hal_d.ReturnOp(g)
        inner = ir.Operation.create("builtin.module", regions=1)
        inner_block = inner.regions[0].blocks.append()
        hal_d.ExecutableSourceEndOp()
    with ir.InsertionPoint(inner_block):
        fn = func_d.FuncOp(sym, ([], []))
        fn.attributes["translation_info"] = machine.translation_info(s)
        for k, v in machine.func_attributes(s).items():
            fn.attributes[k] = v
        entry = fn.add_entry_block()
    with ir.InsertionPoint(entry):
        c0 = arith_d.constant(ir.IndexType.get(), 0)
        memrefs = []
        for i, b in enumerate(bindings):
            t = ir.MemRefType.get([b.elements], _elem_type(b.dtype))
            flags = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1) if b.readonly else None
            m = hal_d.InterfaceBindingSubspanOp(t, layout, i, [], byte_offset=c0, alignment=64,
                                               descriptor_flags=flags)
            memrefs.append(m.result)
        emit_body(memrefs)
        func_d.ReturnOp([])
    return exe
