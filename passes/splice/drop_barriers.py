"""convc-drop-barriers: remove convc's `util.optimization_barrier`s once dispatches are formed.

convc-channels-last puts barriers before IREE's flow phase to steer dispatch formation: a
transposed filter must not fuse into the conv's dispatch, a model-input or model-output
transpose must stay a dispatch of its own, a channel shuffle must not fuse into a conv's
epilogue. At the flow phase that work is done: the dispatches exist and nothing after flow
fuses them again. Left in the host program, though, every barrier is an op IREE's stream
partitioning cannot move work across: each conv became an execution region of its own, with
a queue submission and a host wait between them (light ResNet-50: 51 submissions, 38 waits and
78 transient allocations per inference, where stock IREE builds one submission). Dropping the
barriers here, before IREE's backend, gives the program IREE builds for a barrier-free model:
one command buffer per inference.

Only host code is touched (barriers inside an executable are not convc's).
"""

from __future__ import annotations

from ..ir import ir

_EXECUTABLES = ("flow.executable", "hal.executable", "hal.executable.source")


def _host_barriers(op):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                if child.name in _EXECUTABLES:
                    continue
                if child.name == "util.optimization_barrier":
                    yield child
                yield from _host_barriers(child)


def drop_barriers(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-drop-barriers: every host-code barrier's results replaced by its operands."""
    for barrier in list(_host_barriers(module.operation)):
        for operand, result in zip(barrier.operands, barrier.results):
            result.replace_all_uses_with(operand)
        barrier.erase()
    return module

