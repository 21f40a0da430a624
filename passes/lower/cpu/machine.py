"""llvm-cpu hooks: one "thread" per workgroup, workgroup memory on the stack.

With a single thread, per-thread loops run in program order and barriers are no-ops.
"""

from ...ir import ir, memref_d
from ..common.emit import float_type
from ..common.machine import Machine


class CpuMachine(Machine):
    backend = "cpu"
    threads_are_parallel = False

    def thread_id(self, e):
        return e.c(0)

    def barrier(self):
        pass

    def alloc_workgroup(self, shape, dtype, alignment=16):
        t = ir.MemRefType.get(shape, float_type(dtype))
        return memref_d.alloca(t, [], [], alignment=alignment)
