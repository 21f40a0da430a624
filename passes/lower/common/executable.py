"""Builds the `hal.executable.source` shell a kernel lives in.

Bindings follow the dispatch: one per operand (read-only), the result, then one scratch
buffer (reserved for TMA descriptors). Every binding is a flat 1-D memref; emitters index
it linearly. The export's count region returns the schedule's grid.

Runtime sizes (a dynamic batch, image height and width) arrive as push constants (the splice
passes each index operand of the dispatch as one i32: IREE packs operands only for its own
executables); the bindings they size become memref<?xT>, and the count region receives the
dispatch's workload (the same values) for kernels whose grid depends on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ir, arith_d, func_d, hal_d, parse_attr
from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Schedule
from .emit import Emitter, float_type
from .extents import extents

SCRATCH_BYTES = 128   # one 128-byte slot: enough for one CUtensorMap
DESCRIPTOR_READ_ONLY, DESCRIPTOR_INDIRECT = 1, 2      # IREE's HAL DescriptorFlags bits


@dataclass
class Binding:
    name: str
    dtype: str
    elements: int
    readonly: bool
    words: tuple[int, ...] = ()     # runtime sizes: push-constant words whose values multiply `elements`


class KernelOperands(list):
    """The bindings' memrefs in binding order; `words`: the push-constant words as index values
    (runtime sizes; empty for a static problem), `extents`: the problem's sizes (extents.py),
    `batch`: the runtime batch (an index value) when the problem's batch is dynamic, else None."""

    batch = None
    words: tuple = ()
    extents = None


def gemm_rows(e, p: ConvProblem, operands):
    """M = N*Ho*Wo: an int, or (runtime sizes) an index value from the runtime batch, H and W."""
    x = getattr(operands, "extents", None)
    return p.gemm_m if x is None else x.rows


def conv_bindings(p: ConvProblem, operand_sizes: list[tuple[int, tuple]], operand_dtypes: list[str],
                  out_size: tuple[int, tuple] | None = None, scratch_bytes: int = SCRATCH_BYTES) -> list[Binding]:
    """Bindings in dispatch order: operands, the output, the descriptor scratch. Sizes are
    (static elements, runtime words) per tensor (lower_kernels reads them from the dispatch's
    tie_shape ops); out_size defaults to the problem's static output."""
    out = [Binding(f"arg{i}", dt, n, True, tuple(words))
           for i, ((n, words), dt) in enumerate(zip(operand_sizes, operand_dtypes))]
    n, words = out_size if out_size is not None else (p.gemm_m * p.F, ())
    out.append(Binding("out", p.out_dtype, n, False, tuple(words)))
    out.append(Binding("scratch", "i8", scratch_bytes, False))
    return out


def copy_bindings(p, scratch_bytes: int = SCRATCH_BYTES) -> list[Binding]:
    """Bindings of a copy kernel (a CopyProblem): each piece, the destination, the scratch. With
    runtime sizes a tensor holds its static row times the words of the row axes sized at run
    time (the other row axes' sizes are in the row's static count)."""
    words = tuple(k for k in p.dynamic if k >= 0)
    out = [Binding(f"arg{i}", p.dtype, p.static_elements(x.source or x.sizes), True, words)
           for i, x in enumerate(p.pieces)]
    return out + [Binding("out", p.dtype, p.static_elements(p.shape), False, words),
                  Binding("scratch", "i8", scratch_bytes, False)]


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
    """A binding's element type: i8 for every 1-byte type (int8, and fp8, whose bytes the TMA and
    copy kernels move as they are and the portable kernel reinterprets: NVVM's lowering has no
    fp8 memref loads)."""
    return ir.IntegerType.get_signless(8) if DTYPE_BYTES.get(dtype) == 1 else float_type(dtype)


def build_executable(ip: ir.InsertionPoint, sym: str, s: Schedule, machine,
                     bindings: list[Binding], emit_body, p: ConvProblem | None = None,
                     batch_grid=None) -> hal_d.ExecutableSourceOp:
    """Creates `hal.executable.source @sym` with export `@sym` and calls
    emit_body(operands: KernelOperands) inside its function to write the kernel.

    With runtime sizes (p.runtime_sizes), the count region receives the dispatch's workload
    (its index operands, in word order) and batch_grid(extents) -> (x, y, z), if given, builds
    the grid from them (else the schedule's fixed grid, as for persistent kernels); a copy
    (CopyProblem) has no conv extents: its batch_grid takes the words."""
    dynamic = p is not None and p.runtime_sizes
    layout = _layout(bindings, p.num_constants if dynamic else 0)
    index = ir.IndexType.get()
    exe = hal_d.ExecutableSourceOp(sym, sym_visibility="private", ip=ip)
    exe_block = exe.regions[0].blocks.append()
    with ir.InsertionPoint(exe_block):
        export = hal_d.ExecutableExportOp(sym, layout, ordinal=ir.IntegerAttr.get(index, 0))
        count = export.regions[0].blocks.append(ir.Type.parse("!hal.device"),
                                                *([index] * p.num_constants if dynamic else []))
        with ir.InsertionPoint(count):
            if dynamic and batch_grid is not None:
                words = list(count.arguments)[1:]
                g = batch_grid(extents(Emitter(), p, words) if isinstance(p, ConvProblem) else words)
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
            i32 = ir.IntegerType.get_signless(32)
            operands.words = [arith_d.index_castui(index, hal_d.InterfaceConstantLoadOp(
                i32, layout, ir.IntegerAttr.get(index, k)).result) for k in range(p.num_constants)]
            if isinstance(p, ConvProblem):
                operands.extents = extents(Emitter(), p, operands.words)
            if getattr(p, "dynamic_batch", False):
                operands.batch = operands.words[p.batch_constant]
        for i, b in enumerate(bindings):
            dims = []
            if b.words:
                t = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], _elem_type(b.dtype))
                size = arith_d.constant(index, b.elements)
                for k in b.words:
                    size = arith_d.muli(size, operands.words[k])
                dims = [size]
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
