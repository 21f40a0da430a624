"""What is left after IREE: the transpose dispatches of a flow-phase module, each with why it
exists (--report)."""

from __future__ import annotations

from ..ir import ir, walk_ops
from .builders import owner, user_op

_LOOK_THROUGH = ("flow.tensor.reshape", "flow.tensor.bitcast", "hal.tensor.import", "hal.tensor.barrier",
                 "util.optimization_barrier")


def _is_transpose_function(func) -> bool:
    """A dispatch whose work is a layout change: a linalg.transpose, or a copy generic whose
    input map is a non-identity permutation."""
    ops = [o for o in walk_ops(func) if o.name.startswith("linalg.") and o.name != "linalg.yield"]
    if any(o.name == "linalg.transpose" for o in ops):
        return True
    gens = [o for o in ops if o.name == "linalg.generic"]
    if len(gens) != 1 or len(ops) != 1:
        return False
    maps = [ir.AffineMapAttr(a).value for a in gens[0].attributes["indexing_maps"]]
    return (len(maps) == 2 and maps[0].is_permutation and maps[1].is_permutation
            and maps[0] != maps[1] and len(maps[0].results) > 1)


def _entry(dispatch) -> str:
    ep = dispatch.attributes["entry_points"]
    return str(ep[0]).split("::")[-1].lstrip("@")


def _source(v: ir.Value):
    """The op producing v, looking through reshapes/imports (None for a function argument)."""
    while True:
        op = owner(v)
        if op is None or op.name not in _LOOK_THROUGH:
            return op
        v = op.operands[0]


def _sinks(v: ir.Value) -> list:
    out = []
    for use in v.uses:
        op = user_op(use)
        if op.name in _LOOK_THROUGH or op.name == "hal.tensor.export":
            for r in op.results:
                out += _sinks(r)
            if op.name == "hal.tensor.export":
                out.append(op)
        else:
            out.append(op)
    return out


def _in_initializer(op) -> bool:
    while op is not None:
        if op.name == "util.initializer":
            return True
        op = op.parent if hasattr(op, "parent") else None
    return False


def transpose_dispatches(module: ir.Module) -> list[tuple[str, str]]:
    """(dispatch entry, why it exists) for every transpose dispatch of a flow-phase module."""
    transposing = set()
    for exe in walk_ops(module.operation, "flow.executable"):
        for func in walk_ops(exe, "func.func"):
            if _is_transpose_function(func):
                transposing.add(ir.StringAttr(func.attributes["sym_name"]).value)
    out = []
    for d in walk_ops(module.operation, "flow.dispatch"):
        name = _entry(d)
        if name not in transposing:
            continue
        srcs = [_source(v) for v in d.operands if isinstance(v.type, ir.RankedTensorType)]
        sinks = [s for r in d.results for s in _sinks(r)]
        if _in_initializer(d):
            why = "module initialization (once per load): a weight's layout change"
        elif any(s is None for s in srcs):
            why = "model input: converts an NCHW input to channels-last"
        elif any(s.name in ("hal.tensor.export", "util.return", "func.return") for s in sinks):
            why = "model output: converts a channels-last result back to NCHW"
        else:
            prod = [_entry(s) for s in srcs if s is not None and s.name == "flow.dispatch"]
            cons = [_entry(s) for s in sinks if s.name == "flow.dispatch"]
            why = (f"between {', '.join(prod) or 'a non-dispatch value'} and "
                   f"{', '.join(cons) or 'a non-dispatch use'}: an op there needs another layout")
        out.append((name, why))
    return out
