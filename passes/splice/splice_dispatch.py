"""convc-splice-dispatch: point conv `flow.dispatch`es at convc kernels.

Each dispatch of a flow.executable tagged `convc.kernel` is rebuilt to call the
`hal.executable.source` export instead, with one extra `tensor<Bxi8>` result: the per-call
scratch buffer the kernel may use for TMA descriptors, and the constants the matcher hoisted
out of the dispatch (`convc.constants`) as extra operands, each an immutable `util.global`
(one per distinct value) loaded before the call. A constant left in the host function would
become a buffer IREE uploads on every call, and the command buffer that names it could not be
recorded once; a global is uploaded at module load, as IREE does for the constants it hoists. A dynamic batch keeps the dispatch's workload (the kernel's count region
reads it) and travels as an i32 operand (a push constant). The replaced flow.executables go
away.
"""

from __future__ import annotations

from ..ir import DISPATCH_SEGMENTS, ir, arith_d, attr_to_py, flow_d, operand_segments, util_d, walk_ops
from ..attrs import CONSTANTS_ATTR, KERNEL_ATTR, SCHEDULE_ATTR
from ..schedule import Schedule


def _entry_executable(dispatch) -> str:
    ep = dispatch.attributes["entry_points"]
    ref = ir.SymbolRefAttr(ep[0]) if not isinstance(ep[0], ir.SymbolRefAttr) else ep[0]
    return str(ref).split("::")[0].lstrip("@")


class _ConstantGlobals:
    """One private immutable util.global per distinct constant, placed at the module's top."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.names: dict[str, str] = {}         # constant (as text) -> global name
        self.taken = {ir.StringAttr(op.attributes["sym_name"]).value
                      for op in walk_ops(module.operation, "util.global")}

    def load(self, value: ir.Attribute) -> ir.Value:
        key = f"{value}"
        if key not in self.names:
            i = len(self.names)
            while f"__convc_constant_{i}" in self.taken:
                i += 1
            name = f"__convc_constant_{i}"
            self.taken.add(name)
            self.names[key] = name
            with ir.InsertionPoint.at_block_begin(self.module.body):
                # never inlined: IREE folds a small constant global's loads back into constants,
                # which its stream phase then uploads in the function on every call
                util_d.GlobalOp(name, ir.TypeAttr.get(value.type), sym_visibility="private", initial_value=value,
                                inlining_policy=ir.Attribute.parse("#util.inline.never"))
        return util_d.GlobalLoadOp(value.type, ir.FlatSymbolRefAttr.get(self.names[key]), is_immutable=True).result


def splice_dispatches(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-splice-dispatch."""
    with module.context, ir.Location.unknown():
        kernels = {}
        for exe in walk_ops(module.operation, "flow.executable"):
            if KERNEL_ATTR in exe.attributes:
                name = ir.StringAttr(exe.attributes["sym_name"]).value
                sched = Schedule.from_dict(attr_to_py(exe.attributes[SCHEDULE_ATTR]))
                constants = list(exe.attributes[CONSTANTS_ATTR]) if CONSTANTS_ATTR in exe.attributes else []
                kernels[name] = (exe, ir.FlatSymbolRefAttr(exe.attributes[KERNEL_ATTR]).value,
                                 sched.scratch_bytes, constants)
        if not kernels:
            return module
        i8 = ir.IntegerType.get_signless(8)
        globals_ = _ConstantGlobals(module)
        for d in list(walk_ops(module.operation, "flow.dispatch")):
            exe_name = _entry_executable(d)
            if exe_name not in kernels:
                continue
            _, sym, scratch_bytes, constants = kernels[exe_name]
            scratch_t = ir.RankedTensorType.get([scratch_bytes], i8)
            seg = operand_segments(d, DISPATCH_SEGMENTS)
            args = seg["arguments"]
            with ir.InsertionPoint(d), d.location:
                # index operands (a dynamic batch) become i32 push constants
                i32 = ir.IntegerType.get_signless(32)
                args = [arith_d.index_castui(i32, a) if str(a.type) == "index" else a for a in args]
                args += [globals_.load(c) for c in constants]
            arg_dims, res_dims = seg["argument_dims"], seg["result_dims"]
            entry = ir.ArrayAttr.get([ir.SymbolRefAttr.get([sym, sym])])
            tied = None
            if "tied_operands" in d.attributes:
                old = [ir.IntegerAttr(a).value for a in d.attributes["tied_operands"]]
                tied = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), v)
                                         for v in old + [-1]])
            workload = seg["workload"]          # a dynamic batch: the kernel's count region reads it
            new = flow_d.DispatchOp([r.type for r in d.results] + [scratch_t], workload, entry, args,
                                    arg_dims, res_dims, tied_operands=tied,
                                    loc=d.location, ip=ir.InsertionPoint(d))
            for a in d.attributes:
                name = a.name if hasattr(a, "name") else a
                if name not in ("entry_points", "operandSegmentSizes", "tied_operands"):
                    new.operation.attributes[name] = d.attributes[name]
            for old_r, new_r in zip(d.results, new.results):
                old_r.replace_all_uses_with(new_r)
            d.erase()
        for exe, *_ in kernels.values():
            exe.erase()
    return module
