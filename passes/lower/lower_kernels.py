"""convc-lower-kernel: emit a `hal.executable.source` for every planned conv.

Looks up the kernel family of each Schedule.kernel in the registry (passes/kernel_families.py:
its emitter, and where its grid follows a run-time batch, that grid) and the Machine by the
target's backend; the flow.executable is tagged `convc.kernel = @sym` for the splice pass.
Identical problems with identical schedules share one kernel.
"""

from __future__ import annotations

from ..ir import ir, attr_to_py, walk_ops
from ..attrs import COPY_ATTR, CONSTANTS_ATTR, KERNEL_ATTR, PROBLEM_ATTR, SCHEDULE_ATTR  # noqa: F401 (KERNEL_ATTR re-exported)
from ..match.match_conv import executable_function
from ..copy_problem import CopyProblem
from ..problem import ConvProblem
from ..schedule import Schedule
from ..target import get_target
from .common.executable import build_executable, conv_bindings, copy_bindings
from ..kernel_families import family_of
from .amd.machine import AmdMachine
from .cpu.machine import CpuMachine
from .nvidia.machine import NvidiaMachine
from .common.program_math import target_machine


MACHINES = {"nvidia": NvidiaMachine, "amd": AmdMachine}


def machine_for(arch: str):
    return MACHINES.get(get_target(arch).backend, CpuMachine)()


def _operand_types(exe, count: int):
    """Shapes and element types of the kernel's operands: the dispatch's, then the constants
    the matcher hoisted out of it."""
    types = []
    for a in executable_function(exe).regions[0].blocks[0].arguments:
        t = str(a.type)                       # !iree_tensor_ext.dispatch.tensor<readonly:tensor<AxBxf16>>
        if "readonly:" in t:
            types.append(ir.Type.parse(t[t.index("tensor<", t.index(":")):-1]))
    if CONSTANTS_ATTR in exe.attributes:
        types += [c.type for c in exe.attributes[CONSTANTS_ATTR]]
    shapes = [list(ir.ShapedType(t).shape) for t in types[:count]]
    return shapes, [str(ir.ShapedType(t).element_type) for t in types[:count]]


def lower_kernels(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-lower-kernel."""
    with module.context, ir.Location.unknown():
        made: dict[str, tuple] = {}
        for exe in list(walk_ops(module.operation, "flow.executable")):
            if SCHEDULE_ATTR not in exe.attributes:
                continue
            copy = COPY_ATTR in exe.attributes
            prob_d = attr_to_py(exe.attributes[COPY_ATTR if copy else PROBLEM_ATTR])
            sched_d = attr_to_py(exe.attributes[SCHEDULE_ATTR])
            p = CopyProblem.from_dict(prob_d) if copy else ConvProblem.from_dict(prob_d)
            s = Schedule.from_dict(sched_d)
            base = p.name
            if getattr(options, "candidate", None) is not None:
                base += f"_cand{options.candidate}"     # tuning rounds: kernels named per round
            sym = base
            key = (repr(prob_d), repr(sched_d))
            n = 0
            while sym in made and made[sym] != key:
                n += 1
                sym = f"{base}_{n}"
            if sym not in made:
                if copy:
                    bindings = copy_bindings(p, s.scratch_bytes)
                else:
                    shapes, dtypes = _operand_types(exe, p.num_operands)
                    bindings = conv_bindings(p, shapes, dtypes, s.scratch_bytes)
                machine = machine_for(s.target)
                family = family_of(s.kernel)
                emitter = family.emit
                # a persistent kernel's grid is fixed; the portable and direct ones' follow the batch
                batch_grid = family.batch_grid(p, s) if family.batch_grid else None
                with target_machine(machine):
                    build_executable(ir.InsertionPoint(exe), sym, s, machine, bindings,
                                     lambda memrefs: emitter(p, s, machine, memrefs), None if copy else p, batch_grid)
                made[sym] = key
            exe.attributes[KERNEL_ATTR] = ir.FlatSymbolRefAttr.get(sym)
    return module
