"""Builds the `hal.executable.source` shell a kernel lives in.

Bindings follow the dispatch: one per operand (read-only), the result, then one scratch
buffer (reserved for TMA descriptors). Every binding is a flat 1-D memref; emitters index
it linearly. The export's count region returns the schedule's grid.

A dynamic batch arrives as a push constant (the splice passes each index operand of the
dispatch as one i32: IREE packs operands only for its own executables); the batch-sized bindings become memref<?xT>, and the count region
receives the dispatch's workload (the batch) for kernels whose grid depends on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ir, arith_d, func_d, hal_d, parse_attr
from ...problem import ConvProblem
from ...schedule import Schedule
from .emit import float_type

SCRATCH_BYTES = 128   # one 128-byte slot: enough for one CUtensorMap
DESCRIPTOR_READ_ONLY, DESCRIPTOR_INDIRECT = 1, 2      # IREE's HAL DescriptorFlags bits


@dataclass
class Binding:
    name: str
    dtype: str
    elements: int
    readonly: bool
    per_batch: int = 0          # a batch-sized binding: elements per batch unit (0: static)


class KernelOperands(list):
    """The bindings' memrefs in binding order, and `batch`: the runtime batch (an index
    value) when the problem's batch is dynamic, else None."""

    batch = None


def gemm_rows(e, p: ConvProblem, operands):
    """M = N*Ho*Wo: an int, or (a dynamic batch) an index value from the runtime batch."""
    batch = getattr(operands, "batch", None)
    return p.gemm_m if batch is None else e.mul(batch, p.Ho * p.Wo)


def conv_bindings(p: ConvProblem, operand_shapes: list[list[int]], operand_dtypes: list[str],
                  scratch_bytes: int = SCRATCH_BYTES) -> list[Binding]:
    """Bindings in dispatch order: operands, the output, the descriptor scratch."""
    out = []
    dyn = ir.ShapedType.get_dynamic_size()
    for i, (shape, dt) in enumerate(zip(operand_shapes, operand_dtypes)):
        n = 1
        for d in shape[1:] if shape and shape[0] == dyn else shape:
            n *= d
        if shape and shape[0] == dyn:
            out.append(Binding(f"arg{i}", dt, -1, True, per_batch=n))
        else:
            out.append(Binding(f"arg{i}", dt, n, True))
    if p.dynamic_batch:
        out.append(Binding("out", p.out_dtype, -1, False, per_batch=p.Ho * p.Wo * p.F))
    else:
        out.append(Binding("out", p.out_dtype, p.gemm_m * p.F, False))
    out.append(Binding("scratch", "i8", scratch_bytes, False))
    return out


def copy_bindings(p, scratch_bytes: int = SCRATCH_BYTES) -> list[Binding]:
    """Bindings of a copy kernel (a CopyProblem): each piece, the destination, the scratch."""
    out = [Binding(f"arg{i}", p.dtype, x.source_elements, True) for i, x in enumerate(p.pieces)]
    return out + [Binding("out", p.dtype, p.elements, False), Binding("scratch", "i8", scratch_bytes, False)]


def _layout(bindings: list[Binding], constants: int = 0) -> ir.Attribute:
    """Every binding is `Indirect`, as IREE marks the bindings of its own executables that
    carry activations: IREE then records the dispatch with binding-table slots, so the
    inference's command buffer is recorded once at module load and replayed with the call's
    buffers. Without the flag the dispatch names the per-call transient buffer directly and
    IREE records the whole command buffer again on every call."""
    items = ", ".join('#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">' if b.readonly
                      else "#hal.pipeline.binding<storage_buffer, Indirect>" for b in bindings)
    head = f"constants = {constants}, " if constants else ""
    return parse_attr(f"#hal.pipeline.layout<{head}bindings = [{items}]>")


def _elem_type(dtype: str) -> ir.Type:
    return ir.IntegerType.get_signless(8) if dtype == "i8" else float_type(dtype)


def build_executable(ip: ir.InsertionPoint, sym: str, s: Schedule, machine,
                     bindings: list[Binding], emit_body, p: ConvProblem | None = None,
                     batch_grid=None) -> hal_d.ExecutableSourceOp:
    """Creates `hal.executable.source @sym` with export `@sym` and calls
    emit_body(operands: KernelOperands) inside its function to write the kernel.

    With a dynamic batch (p.dynamic_batch), batch_grid(batch) -> (x, y, z), if given, builds
    the grid from the batch in the count region (else the schedule's fixed grid, as for
    persistent kernels)."""
    dynamic = p is not None and p.dynamic_batch
    layout = _layout(bindings, p.num_constants if dynamic else 0)
    index = ir.IndexType.get()
    exe = hal_d.ExecutableSourceOp(sym, sym_visibility="private", ip=ip)
    exe_block = exe.regions[0].blocks.append()
    with ir.InsertionPoint(exe_block):
        export = hal_d.ExecutableExportOp(sym, layout, ordinal=ir.IntegerAttr.get(index, 0))
        count = export.regions[0].blocks.append(ir.Type.parse("!hal.device"), *([index] if dynamic else []))
        with ir.InsertionPoint(count):
            if dynamic and batch_grid is not None:
                g = batch_grid(count.arguments[1])
            else:
                g = [arith_d.constant(index, x) for x in s.grid]
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
        c0 = arith_d.constant(index, 0)
        operands = KernelOperands()
        if dynamic:
            word = hal_d.InterfaceConstantLoadOp(ir.IntegerType.get_signless(32), layout,
                                                 ir.IntegerAttr.get(index, p.batch_constant)).result
            operands.batch = arith_d.index_castui(index, word)
        for i, b in enumerate(bindings):
            dims = []
            if b.per_batch:
                t = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], _elem_type(b.dtype))
                dims = [arith_d.muli(operands.batch, arith_d.constant(index, b.per_batch))]
            else:
                t = ir.MemRefType.get([b.elements], _elem_type(b.dtype))
            flags = ir.IntegerAttr.get(ir.IntegerType.get_signless(32),
                                       DESCRIPTOR_READ_ONLY | DESCRIPTOR_INDIRECT if b.readonly
                                       else DESCRIPTOR_INDIRECT)
            m = hal_d.InterfaceBindingSubspanOp(t, layout, i, dims, byte_offset=c0, alignment=64,
                                               descriptor_flags=flags)
            operands.append(m.result)
        emit_body(operands)
        func_d.ReturnOp([])
    return exe
