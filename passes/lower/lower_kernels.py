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
    """Sizes and element types of the kernel's operands (the dispatch's, then the constants the
    matcher hoisted out of it), and its output's size. A size is (static elements, words): a
    tensor with runtime dims multiplies the static ones by the push-constant words its
    tie_shape binds them to (workload ordinal k is word k, as the matcher checked)."""
    fn = executable_function(exe)
    ties = {}
    for op in walk_ops(fn, "flow.dispatch.tie_shape"):
        words = tuple(ir.IntegerAttr(v.owner.attributes["ordinal"]).value for v in list(op.operands)[1:])
        ties[op.operands[0]] = words

    def size(arg, t):
        n = 1
        for d in ir.ShapedType(t).shape:
            n *= d if d != ir.ShapedType.get_dynamic_size() else 1
        words = next((w for a, w in ties.items() if arg is not None and a == arg), ())
        return n, words

    sizes, types, out = [], [], None
    for a in fn.regions[0].blocks[0].arguments:
        t = str(a.type)                       # !iree_tensor_ext.dispatch.tensor<readonly:tensor<AxBxf16>>
        if "tensor<" not in t:
            continue
        tt = ir.Type.parse(t[t.index("tensor<", t.index(":")):-1])
        if "readonly:" in t:
            types.append(tt)
            sizes.append(size(a, tt))
        elif out is None:
            out = size(a, tt)
    if CONSTANTS_ATTR in exe.attributes:
        for c in exe.attributes[CONSTANTS_ATTR]:
            types.append(c.type)
            sizes.append(size(None, c.type))
    return sizes[:count], [str(ir.ShapedType(t).element_type) for t in types[:count]], out


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
                    sizes, dtypes, out = _operand_types(exe, p.num_operands)
                    bindings = conv_bindings(p, sizes, dtypes, out if p.runtime_sizes else None, s.scratch_bytes)
                machine = machine_for(s.target)
                family = family_of(s.kernel)
                emitter = family.emit
                # a persistent kernel's grid is fixed; the portable and direct ones' follow the runtime sizes
                batch_grid = family.batch_grid(p, s) if family.batch_grid else None
                with target_machine(machine):
                    build_executable(ir.InsertionPoint(exe), sym, s, machine, bindings,
                                     lambda memrefs: emitter(p, s, machine, memrefs), p, batch_grid)
                made[sym] = key
            exe.attributes[KERNEL_ATTR] = ir.FlatSymbolRefAttr.get(sym)
    return module
