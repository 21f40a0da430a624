"""The copy kernel: every piece of an assembled tensor moved in one launch (plan:
passes/plan/kernels/copy_pieces.py).

The pieces' vectors are numbered one after another (piece i's from start[i]); thread t of
workgroup w takes vectors (w * per_thread + j) * threads + t, so neighbouring threads move
neighbouring vectors of a piece (coalesced on both sides: a piece's vectors follow its source in
row-major order, and its innermost run is contiguous in the destination). A binary search over
the pieces' start numbers, as nested branches with the boundaries as constants, finds the piece;
the vector's element offset within the piece (its number times the width) is taken apart over
the piece's merged axes, and its source and destination offsets are each side's first element
plus each axis index times that side's step (a whole source read in order has steps that make
the source offset the element offset).

With runtime sizes (a concatenation of images of any size) the destination is `rows` static rows
and each piece a static box of every row: piece i's vectors start at rows times the vectors of
the pieces before it in one row, products of the push-constant words; the merged axes are those
of the planned shape, whose only size that follows the rows is the outermost one, which the
decomposition never divides by.
"""

from __future__ import annotations

from ...copy_problem import CopyProblem
from ...ir import ir, hal_d, vector_d
from ...kernel_configs import CopyConfig
from ...problem import DTYPE_BYTES
from ...schedule import Schedule
from .emit import Emitter


def copy_rows(e: Emitter, p: CopyProblem, words):
    """Rows of the destination (an index value) from the dispatch's words."""
    rows = e.c(1)
    for a in range(p.row_axes):
        rows = e.mul(rows, words[p.dynamic[a]] if p.dynamic[a] >= 0 else p.shape[a])
    return rows


def row_vectors(p: CopyProblem) -> list[int]:
    """Vectors of each piece in one row of a destination with runtime sizes."""
    return [p.row_elements(x) // v for x, v in zip(p.pieces, p.vector_widths())]


def copy_grid(p: CopyProblem, s: Schedule):
    """grid(words) of a copy with runtime sizes: enough workgroups for every vector."""
    per = s.config_as(CopyConfig).per_thread

    def grid(words):
        e = Emitter()
        units = e.mul(copy_rows(e, p, words), sum(row_vectors(p)))
        return [e.ceil_div(units, s.threads * per), e.c(1), e.c(1)]
    return grid


def emit_copy_pieces(p: CopyProblem, s: Schedule, machine, memrefs: list) -> None:
    e = Emitter()
    per = s.config_as(CopyConfig).per_thread
    widths = p.vector_widths()
    starts = [0]
    if p.runtime_sizes:
        rows = copy_rows(e, p, memrefs.words)
        for n in row_vectors(p):
            starts.append(e.add(e.mul(rows, n), starts[-1]))
    else:
        for x, v in zip(p.pieces, widths):
            starts.append(starts[-1] + x.elements // v)
    out = memrefs[len(p.pieces)]
    pid = hal_d.InterfaceWorkgroupIDOp(0).result
    tid = machine.thread_id(e)

    def move(i: int, unit) -> None:
        piece, v = p.pieces[i], widths[i]
        elem = e.mul(unit if isinstance(starts[i], int) and starts[i] == 0 else e.sub(unit, starts[i]), v)
        base, sbase, axes = piece.box(p.shape)
        dest, src, rest = e.c(base), e.c(sbase), elem
        for k, (size, step, sstep) in enumerate(reversed(axes)):
            last = k == len(axes) - 1
            idx = rest if last else e.rem(rest, size)
            if not last:
                rest = e.div(rest, size)
            dest = e.add(dest, e.mul(idx, step))
            src = e.add(src, e.mul(idx, sstep))
        t = ir.VectorType.get([v], ir.MemRefType(memrefs[i].type).element_type)   # fp8: its bytes
        x = vector_d.load(t, memrefs[i], [src], alignment=v * DTYPE_BYTES[p.dtype])
        vector_d.store(x, out, [dest], alignment=v * DTYPE_BYTES[p.dtype])

    def search(lo: int, hi: int, unit) -> None:
        if hi - lo == 1:
            move(lo, unit)
            return
        mid = (lo + hi) // 2
        with e.if_else(e.cmp("ult", unit, starts[mid])) as (below, above):
            with below:
                search(lo, mid, unit)
            with above:
                search(mid, hi, unit)

    loop = e.for_(0, per, 1)
    with loop as (j, _, done):
        unit = e.add(e.mul(e.add(e.mul(pid, per), j), s.threads), tid)
        with e.if_(e.cmp("ult", unit, starts[-1])):
            search(0, len(p.pieces), unit)
        done([])
