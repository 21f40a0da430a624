"""Assembled tensors (channel concatenations, sub-pixel interleaves): the copy kernel
(lower/common/copy_pieces.py).

A CopyProblem (passes/copy_problem.py) is pure data movement: every piece read once, every
destination element written once. The kernel numbers the vectors of all pieces one after
another and gives each thread `per_thread` of them; a piece moves in 16-byte vectors where its
slices are aligned to them (a channel slice of a multiple of 8 f16 channels at a multiple of 8),
else in the widest aligned vector. IREE's own copies of such slices ran at ~0.2 TB/s, one
launch per piece (H200, CUPTI: a DenseNet-121's 590 concatenation copies took 3.76 ms).
"""

from __future__ import annotations

import math

from ...copy_problem import CopyProblem
from ...kernel_configs import CopyConfig
from ...problem import DTYPE_BYTES
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import PlanError, cdiv
from ...lower.common.copy_pieces import copy_grid, emit_copy_pieces
from ...kernel_families import KernelFamily, register

THREADS = 256
# vectors per thread by the total vector count: more loads in flight per thread only where the
# grid would otherwise be many waves of short-lived workgroups
PER_THREAD = ((1 << 22, 4), (1 << 20, 2))
# a CPU workgroup (one thread) loops over this many vectors
CPU_PER_THREAD = 4096
# runtime sizes: the grid follows the rows (count region), the vectors per thread are fixed
DYNAMIC_PER_THREAD = 2


def supports(p: CopyProblem, t: Target) -> str | None:
    return None if isinstance(p, CopyProblem) else "not an assembled tensor"


def plan_copy(p: CopyProblem, t: Target) -> Schedule:
    why = supports(p, t)
    if why:
        raise PlanError(why)
    vectors = p.vector_widths()
    units = sum(x.elements // v for x, v in zip(p.pieces, vectors))
    if t.backend == "cpu":
        threads, per = 1, CPU_PER_THREAD
    elif p.runtime_sizes:
        threads, per = THREADS, DYNAMIC_PER_THREAD
    else:
        threads, per = THREADS, next((n for limit, n in PER_THREAD if units >= limit), 1)
    v = max(vectors)
    narrow = sum(1 for x in vectors if x < v)
    return Schedule(kernel=Kernel.COPY_PIECES, target=t.arch, block_m=threads * per, block_n=v, block_k=1,
                    threads=threads, stages=1, grid=(cdiv(units, threads * per), 1, 1), smem_bytes=0,
                    config=CopyConfig(per_thread=per),
                    reason=f"{len(p.pieces)} pieces in one launch: "
                           + (f"{units} vectors" if not p.runtime_sizes else
                              f"{units // math.prod(p.shape[:p.row_axes])} vectors per row, rows read at run time,")
                           + f" of up to {v * DTYPE_BYTES[p.dtype]} bytes, {per} per thread"
                           + (f" ({narrow} piece{'s' if narrow > 1 else ''} in narrower vectors)" if narrow else ""))


COPY_PIECES = register(KernelFamily("copy_pieces", CopyConfig, supports, plan_copy, emit_copy_pieces,
                                    batch_grid=copy_grid))
