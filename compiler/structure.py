"""What the IREE runtime executes per inference: counted in a vmfb's VM bytecode.

An exported async function (`NAME$async`) is the host program of one inference. Its calls into
the HAL say how the runtime will run it: each `hal.device.queue.execute[.indirect]` is a queue
submission, each `hal.fence.await` a host wait for the device, each `hal.device.queue.alloca` a
transient allocation. A command buffer created in the function (or in a function it calls) is
recorded on every call; one recorded at module load (IREE's memoization) is only replayed. A
constant the function holds is a buffer imported (or allocated and copied) on every call
(`hal.allocator.import`); constants in globals are uploaded once, at load.

Read with IREE's own `iree-dump-module --output=disassembly` (iree-base-runtime), so the
counts are those of the bytecode the runtime loads, on any machine, GPU or not.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass

from .errors import ConvcError

_FUNC = re.compile(r"^vm\.func @(\S+?)\(([^)]*)\)", re.M)
# a call into the module itself; the disassembler may give internal functions an exported
# function's name (an outlined command-buffer recorder shows as `__init`), so arity tells them apart
_CALL = re.compile(r"vm\.call(?:\.variadic)?(?:\.yieldable)? @module\.([\w.$-]+)\(([^)]*)\)")


@dataclass(frozen=True)
class ProgramStructure:
    function: str
    submissions: int        # hal.device.queue.execute / .execute.indirect
    host_waits: int         # hal.fence.await
    allocations: int        # hal.device.queue.alloca
    dispatches_recorded_per_call: int   # hal.command_buffer.dispatch reached on every call
    uploads: int = 0        # constant buffers materialized on every call (hal.allocator.import)
    fixed_buffers: bool = False   # executes a command buffer recorded at load with no binding table


    def line(self) -> str:
        recorded = (f"; {self.dispatches_recorded_per_call} dispatches recorded per call"
                    if self.dispatches_recorded_per_call else "; command buffer recorded once")
        if self.fixed_buffers and not self.dispatches_recorded_per_call:
            recorded += " against fixed buffers (a CUDA graph with --cuda_use_streams=false)"
        if self.uploads:
            recorded += f"; {self.uploads} constant buffer{'s' * (self.uploads != 1)} uploaded per call"
        return (f"program {self.function}: {self.submissions} queue submission{'s' * (self.submissions != 1)}, "
                f"{self.host_waits} host wait{'s' * (self.host_waits != 1)}, "
                f"{self.allocations} transient allocation{'s' * (self.allocations != 1)} per inference{recorded}")

    def as_dict(self) -> dict:
        return asdict(self)


def _dump_tool() -> str:
    try:
        import iree.runtime as rt
        tool = os.path.join(os.path.dirname(rt.__file__), "..", "_runtime_libs", "iree-dump-module")
        if os.path.exists(tool):
            return tool
    except ImportError:
        pass
    tool = shutil.which("iree-dump-module")
    if tool is None:
        raise ConvcError("iree-dump-module not found (it comes with iree-base-runtime)")
    return tool


def disassembly(vmfb: str) -> str:
    """The VM functions of a vmfb as text (its read-only data, which holds the kernels' binaries
    and any inlined weights as hex, is skipped as it streams by)."""
    keep = []
    with subprocess.Popen([_dump_tool(), "--output=disassembly", vmfb], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            if not line.startswith("vm.rodata"):
                keep.append(line)
        err = proc.stderr.read()
    if proc.returncode != 0:
        raise ConvcError(f"iree-dump-module failed on {vmfb}: {err.strip()[:200]}")
    return "".join(keep)


def _arity(args: str) -> int:
    return len([a for a in args.split(",") if a.strip()])


def _functions(text: str) -> dict[tuple[str, int], str]:
    """(function name, arity) -> its body text."""
    starts = [((m.group(1), _arity(m.group(2))), m.start()) for m in _FUNC.finditer(text)]
    out = {}
    for i, (key, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(text)
        out[key] = text[start:end]
    return out


def _reached(funcs: dict, key: tuple[str, int]) -> list:
    """key and the module's functions it calls, transitively."""
    seen, todo = [], [key]
    while todo:
        f = todo.pop()
        if f in seen or f not in funcs:
            continue
        seen.append(f)
        todo += [(name, _arity(args)) for name, args in _CALL.findall(funcs[f])]
    return seen


def _count(body: str, op: str) -> int:
    return len(re.findall(rf"vm\.call(?:\.variadic)?(?:\.yieldable)? @{re.escape(op)}[ (]", body))


def program_structure(vmfb: str, function: str | None = None) -> list[ProgramStructure]:
    """The counts for every exported async function (plain MLIR models: every exported
    function), or for the one named."""
    funcs = _functions(disassembly(vmfb))
    if function:
        keys = [k for k in funcs if k[0] == function]
    else:       # the async functions of an import's ABI, else (plain MLIR) the exported functions
        keys = [k for k in funcs if k[0].endswith("$async")] or [k for k in funcs if not k[0].startswith("__")]
    if function and not keys:
        raise ConvcError(f"{vmfb} has no function {function}")
    out = []
    for key in keys:
        name = key[0]
        bodies = [funcs[f] for f in _reached(funcs, key)]
        own = funcs[key]
        per_call = sum(_count(b, "hal.command_buffer.dispatch") for b in bodies)
        out.append(ProgramStructure(
            function=name,
            submissions=_count(own, "hal.device.queue.execute") + _count(own, "hal.device.queue.execute.indirect"),
            host_waits=_count(own, "hal.fence.await"),
            allocations=_count(own, "hal.device.queue.alloca"),
            dispatches_recorded_per_call=per_call,
            uploads=_count(own, "hal.allocator.import"),
            # a command buffer executed without a binding table, recorded at load, not per call
            fixed_buffers=_count(own, "hal.device.queue.execute") > 0 and per_call == 0))
    return out


def stream_structure(mlir_path: str, flags: list[str] = ()) -> list[ProgramStructure]:
    """Stock IREE's program for an input-phase model (no convc pass), read at its stream phase:
    `stream.cmd.execute` (a submission), `stream.timepoint.await` (a host wait) and
    `stream.resource.alloca` (a transient allocation) in each public async function. No code
    generation runs, so any target's program can be read on any machine."""
    from iree.compiler.tools.binaries import find_tool   # the compiler: absent where vmfbs only run
    proc = subprocess.run([find_tool("iree-compile"), mlir_path, "--compile-to=stream", *flags, "-o", "-"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise ConvcError(f"iree-compile --compile-to=stream failed on {mlir_path}: "
                         f"{next((x for x in proc.stderr.splitlines() if 'error' in x), proc.stderr[:200])}")
    text = proc.stdout
    out = []
    for m in re.finditer(r"^  util\.func public @(\S+?\$async)\(", text, re.M):
        end = text.find("\n  }\n", m.start())
        body = text[m.start(): end]
        out.append(ProgramStructure(m.group(1), body.count("stream.cmd.execute"), body.count("stream.timepoint.await"),
                                    body.count("stream.resource.alloca"), 0))
    return out
