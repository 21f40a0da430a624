"""convc-pad-copy: a dispatch that writes a padded tensor becomes a fill and a copy into it.

IREE's pad fusion, which convc asks for, keeps a tensor.pad whole when its single use is a
linalg op; when that op then takes no fused pad (IREE rewrote the conv into a matmul or an
elementwise op, or a grouped view lies between), the pad gets a dispatch of its own. IREE
3.13's GPU codegen folds such a stored pad into an iree_linalg_ext.map_store that yields the
source indices without the low padding (iree-codegen-gpu-combine-layout-transformation): the
data lands `low` elements early, a wrong answer on every GPU target. Without pad fusion IREE
writes a pad as a splat and a dispatch that copies the source into it at the low offsets
(`slow_memcpy`); this pass gives those dispatches that form, leaving every other dispatch (and
the pads fused into convs) as they are.
"""

from __future__ import annotations

from ..ir import ir, walk_ops

STORE = "iree_tensor_ext.dispatch.tensor.store"
LOAD = "iree_tensor_ext.dispatch.tensor.load"


def op_of(x):
    return x.operation if hasattr(x, "operation") else x


def _users(v: ir.Value) -> list:
    return [op_of(u.owner) for u in v.uses]


def _owner(v: ir.Value):
    o = v.owner
    return None if isinstance(o, ir.Block) else op_of(o)


def _attrs(op) -> dict:
    return {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}


def symbol_name(func) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def stored_pads(module: ir.Module) -> list:
    """(executable, function, pad) for each tensor.pad of a flow-phase module that no
    computation in its dispatch consumes."""
    out = []
    for exe in walk_ops(module.operation, "flow.executable"):
        for func in walk_ops(exe, "func.func"):
            for pad in walk_ops(func, "tensor.pad"):
                if any(not u.name.startswith("linalg.") for u in _users(pad.results[0])):
                    out.append((exe, func, pad))
    return out


def pad_dispatches(module: ir.Module) -> list[str]:
    """Entries of the dispatches that write a padded tensor (see the module docstring)."""
    return [symbol_name(f) for _, f, _ in stored_pads(module)]


def uncopyable_pad_dispatches(module: ir.Module) -> list[str]:
    """Entries of the pad dispatches this pass cannot rewrite (the driver then builds the flow
    phase without pad fusion)."""
    return [symbol_name(f) for _, f, p in stored_pads(module) if _copyable(f, p) is None]


def _copyable(func, pad):
    """(load, store, pad value) when the dispatch is exactly load -> static pad by a constant
    -> store of the whole result into its second binding; else None."""
    body = [op_of(o) for o in func.regions[0].blocks[0].operations]
    names = sorted(o.name for o in body if o.name != "arith.constant")
    if names != sorted([LOAD, "tensor.pad", STORE, "func.return"]) or len(func.regions[0].blocks[0].arguments) != 2:
        return None
    load = _owner(pad.operands[0])
    store = _users(pad.results[0])
    if load is None or load.name != LOAD or len(pad.operands) != 1 or len(store) != 1 or store[0].name != STORE:
        return None
    store = store[0]
    src_t, out_t = ir.RankedTensorType(pad.operands[0].type), ir.RankedTensorType(pad.results[0].type)
    if not (src_t.has_static_shape and out_t.has_static_shape) or len(store.operands) != 2 or len(load.operands) != 1:
        return None
    if [int(x) for x in store.attributes["static_offsets"]] != [0] * out_t.rank:
        return None
    yields = [op_of(o) for o in pad.regions[0].blocks[0].operations]
    value = _owner(yields[0].operands[0]) if len(yields) == 1 and len(yields[0].operands) == 1 else None
    if value is None or value.name != "arith.constant":
        return None
    return load, store, value.attributes["value"]


def _rewrite_function(func, pad, load, store) -> None:
    arg = func.regions[0].blocks[0].arguments[1]
    rw = ir.Type.parse(str(arg.type).replace("writeonly:", "readwrite:"))
    arg.set_type(rw)
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([ft.inputs[0], rw], []))
    src_t = ir.RankedTensorType(pad.operands[0].type)
    attrs = _attrs(store)
    attrs["static_offsets"] = ir.DenseI64ArrayAttr.get([int(x) for x in pad.attributes["static_low"]])
    attrs["static_sizes"] = ir.DenseI64ArrayAttr.get(list(src_t.shape))
    with ir.InsertionPoint(store), store.location:
        ir.Operation.create(STORE, results=[], operands=[load.results[0], arg], attributes=attrs)
    store.erase()
    pad.erase()
    for o in [op_of(o) for o in func.regions[0].blocks[0].operations]:
        if o.name == "arith.constant" and not list(o.results[0].uses):
            o.erase()


def _rewrite_calls(module: ir.Module, exe, func, value: ir.Attribute, out_t: ir.Type) -> None:
    ref = f"@{symbol_name(exe)}::@{symbol_name(func)}"
    for d in list(walk_ops(module.operation, "flow.dispatch")):
        eps = d.attributes["entry_points"]
        if len(eps) != 1 or str(eps[0]) != ref:
            continue
        segs = [int(x) for x in d.attributes["operandSegmentSizes"]]
        args = list(d.operands)
        with ir.InsertionPoint(d), d.location:
            c = ir.Operation.create("arith.constant", results=[value.type], attributes={"value": value})
            fill = ir.Operation.create("flow.tensor.splat", results=[out_t], operands=[c.results[0]])
            attrs = _attrs(d)
            attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([segs[0], segs[1] + 1] + segs[2:])
            attrs["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), segs[1])])
            new = ir.Operation.create("flow.dispatch", results=[out_t],
                                      operands=args[:segs[0] + segs[1]] + [fill.results[0]] + args[segs[0] + segs[1]:],
                                      attributes=attrs)
        d.results[0].replace_all_uses_with(new.results[0])
        d.erase()


def pads_to_copies(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-pad-copy (flow-phase IR)."""
    with module.context, ir.Location.unknown():
        for exe, func, pad in stored_pads(module):
            parts = _copyable(func, pad)
            if parts is None:
                continue
            load, store, value = parts
            out_t = pad.results[0].type
            _rewrite_function(func, pad, load, store)
            _rewrite_calls(module, exe, func, value, out_t)
    return module
