"""convc-copy-chains: a tensor assembled by a chain of IREE copy dispatches becomes one dispatch.

IREE 3.13 turns a `tensor.insert_slice` that is not contiguous in memory into a dispatch of
its own (`slow_memcpy`: load the source, store it into its slice of a read-write destination,
DispatchCreation/ConvertTensorToFlow.cpp). A channel concatenation of channels-last tensors is
never contiguous, so it runs as one dispatch per piece, chained through the destination: a
DenseNet-121 at batch 32 ran 590 of them, 3.76 ms of IREE copy kernels at ~0.2 TB/s (H200,
CUPTI, results/e2e). The sub-pixel interleave of a transposed conv's phases
(convc-subpixel-conv) is the same chain with strided slices.

A chain starts at a `flow.tensor.empty`, goes through copy dispatches each tied to the
previous one's result (its only use) and must write every destination element exactly once
(so nothing of the empty tensor is left to read). A chain may also start at a
`flow.tensor.splat` (a zero-filled tensor the copies write parts of: the frames of a 3-D conv's
depth im2col, convc-conv3d, where some taps read padding): its pieces must not overlap, the
splat stays (a fill on the queue) and the merged dispatch writes into it in place. A strided
copy on its own (a load with strides into a write-only result: every sd-th frame of a volume
for a 3-D conv's depth stride) is a chain of one. A chain is replaced, at the place of its last
copy, by one dispatch of a new executable that reads every piece and writes the destination
(`convc.copy`: a CopyProblem), which convc's copy kernel runs in one launch; a chain of more
pieces than one dispatch may bind (MAX_PIECES) continues in further dispatches, each writing its
pieces in place into the previous one's result. Executables no dispatch calls any more go away.
Static shapes of f16/bf16/f32 only; other chains stay.
"""

from __future__ import annotations

import dataclasses

from ..attrs import COPY_ATTR
from ..copy_problem import CopyPiece, CopyProblem, exact_cover, overlap as _overlap
from ..ir import ir, dict_attr, walk_ops
from ..problem import DTYPE_BYTES
from .pad_dispatch import LOAD, STORE, op_of, symbol_name
from ..target import MAX_DISPATCH_BINDINGS

# pieces one merged dispatch reads: its bindings are the pieces, the destination and the
# kernel's scratch (passes/lower/common/executable.py)
MAX_PIECES = MAX_DISPATCH_BINDINGS - 2


def _ints(a) -> list[int]:
    return [int(x) for x in a]


def _callee(d) -> tuple[str, str]:
    eps = d.attributes["entry_points"]
    exe, fn = str(eps[0]).split("::")
    return exe.lstrip("@"), fn.lstrip("@")


def piece_copy(func):
    """(source type, load offsets, load sizes, store offsets, sizes, strides, loaded type, load
    strides, in place) of a dispatch function that only copies a static box of its read-only
    operand 0 (the whole operand, a channel slice IREE folded into the load, every sd-th frame
    of a volume) into a static slice of its read-write operand 1 (in place), or whole into its
    write-only result (a strided slice on its own: a 3-D conv's depth stride); else None."""
    block = func.regions[0].blocks[0]
    args = list(block.arguments)
    ops = [op_of(o) for o in block.operations]
    if len(args) != 2 or [o.name for o in ops] != [LOAD, STORE, "func.return"]:
        return None
    load, store = ops[0], ops[1]
    src_t, dst_t = str(args[0].type), str(args[1].type)
    if "readonly:" not in src_t or ("readwrite:" not in dst_t and "writeonly:" not in dst_t):
        return None
    if load.operands[0] != args[0] or len(load.operands) != 1 or store.operands[0] != load.results[0] \
            or store.operands[1] != args[1] or len(store.operands) != 2:
        return None
    t = str(args[0].type)
    src = ir.RankedTensorType(ir.Type.parse(t[t.index("tensor<", t.index(":")):-1]))
    loaded = ir.RankedTensorType(load.results[0].type)
    lsizes = _ints(load.attributes["static_sizes"])
    lstrides = _ints(load.attributes["static_strides"])
    if not src.has_static_shape or not loaded.has_static_shape or len(lsizes) != src.rank \
            or min(lstrides) <= 0 or [x for x in lsizes if x != 1] != [x for x in loaded.shape if x != 1]:
        return None
    into = "readwrite:" in dst_t
    if not into:        # a write-only result: the copy must write all of it
        d = ir.RankedTensorType(ir.Type.parse(dst_t[dst_t.index("tensor<", dst_t.index(":")):-1]))
        if not d.has_static_shape or _ints(store.attributes["static_sizes"]) != list(d.shape) \
                or any(_ints(store.attributes["static_offsets"])) or lstrides == [1] * src.rank:
            return None
    return (src, _ints(load.attributes["static_offsets"]), lsizes, _ints(store.attributes["static_offsets"]),
            _ints(store.attributes["static_sizes"]), _ints(store.attributes["static_strides"]), loaded, lstrides,
            into)


def _copies(module: ir.Module) -> dict[tuple[str, str], tuple]:
    """(executable, function) -> piece_copy() of every copy-only dispatch function."""
    out = {}
    for exe in walk_ops(module.operation, "flow.executable"):
        for func in walk_ops(exe, "func.func"):
            c = piece_copy(func)
            if c is not None:
                out[(symbol_name(exe), symbol_name(func))] = c
    return out


def _tied_to(d) -> int | None:
    if "tied_operands" not in d.attributes:
        return None
    ties = [ir.IntegerAttr(a).value for a in d.attributes["tied_operands"]]
    return ties[0] if len(ties) == 1 else None


def _chain(start, copies) -> list | None:
    """The copy dispatches of the chain that begins with `start` (a copy into a
    flow.tensor.empty), in order; None if start begins no chain."""
    if start.name != "flow.dispatch" or _callee(start) not in copies or len(start.results) != 1:
        return None
    ops = list(start.operands)
    if not copies[_callee(start)][-1]:          # a strided slice on its own: a chain of one
        return [start] if len(ops) == 1 and _tied_to(start) in (None, -1) else None
    if len(ops) != 2 or _tied_to(start) != 1:
        return None
    empty = ops[1].owner
    if isinstance(empty, ir.Block) or op_of(empty).name not in ("flow.tensor.empty", "flow.tensor.splat"):
        return None
    chain = [start]
    while True:
        uses = list(chain[-1].results[0].uses)
        if len(uses) != 1:
            break
        nxt = op_of(uses[0].owner)
        if (nxt.name != "flow.dispatch" or _callee(nxt) not in copies or not copies[_callee(nxt)][-1]
                or len(list(nxt.operands)) != 2
                or nxt.operands[1] != chain[-1].results[0] or _tied_to(nxt) != 1
                or nxt.operands[0] == chain[-1].results[0]):
            break
        chain.append(nxt)
    return chain


def _splat_start(chain) -> bool:
    return len(chain[0].operands) == 2 and op_of(chain[0].operands[1].owner).name == "flow.tensor.splat"


def _standalone(chain) -> bool:
    return len(chain[0].operands) == 1


def _problem(chain, copies) -> CopyProblem | None:
    dst = ir.RankedTensorType(chain[0].results[0].type)
    dtype = str(dst.element_type)
    if not dst.has_static_shape or dtype not in DTYPE_BYTES or \
            len(chain) < (1 if _splat_start(chain) or _standalone(chain) else 2):
        return None
    pieces = []
    for i, d in enumerate(chain):
        src, loffsets, lsizes, offsets, sizes, strides, _, lstrides, _ = copies[_callee(d)]
        if str(src.element_type) != dtype or ir.RankedTensorType(d.operands[0].type) != src:
            return None
        whole = lsizes == list(src.shape)
        pieces.append(CopyPiece(i, offsets, sizes, strides,
                                *(() if whole else (src.shape, loffsets, lsizes, lstrides))))
    why = exact_cover(tuple(dst.shape), pieces)
    if why is not None and not (_splat_start(chain) and why == "the pieces do not add up to the destination"
                                and not any(_overlap(a, b) for i, a in enumerate(pieces) for b in pieces[i + 1:])):
        return None
    return CopyProblem(tuple(dst.shape), dtype, tuple(pieces))


def _executable_text(name: str, chain, copies, dst: ir.RankedTensorType, into: bool) -> str:
    """The merged dispatch's executable: each piece loaded and stored into its slice of the
    write-only destination, read-write where it continues an earlier dispatch's (what IREE
    would build were the kernel not spliced in)."""
    out_t = f"!iree_tensor_ext.dispatch.tensor<{'readwrite' if into else 'writeonly'}:{dst}>"
    args, body = [], []
    for i, d in enumerate(chain):
        src, loffsets, lsizes, offsets, sizes, strides, loaded, lstrides, _ = copies[_callee(d)]
        in_t = f"!iree_tensor_ext.dispatch.tensor<readonly:{src}>"
        args.append(f"%arg{i}: {in_t}")
        body.append(f"%v{i} = iree_tensor_ext.dispatch.tensor.load %arg{i}, offsets = {loffsets}, sizes = {lsizes}, "
                    f"strides = {lstrides} : {in_t} -> {loaded}")
        body.append(f"iree_tensor_ext.dispatch.tensor.store %v{i}, %out, offsets = {offsets}, sizes = {sizes}, "
                    f"strides = {strides} : {loaded} -> {out_t}")
    lines = "\n        ".join(body)
    return f"""
flow.executable private @{name} {{
  flow.executable.export public @{name} workgroups() -> (index, index, index) {{
    %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
    flow.return %x, %y, %z : index, index, index
  }}
  builtin.module {{
    func.func @{name}({', '.join(args)}, %out: {out_t}) {{
        {lines}
        return
    }}
  }}
}}"""


def _fresh(taken: set[str], base: str) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def merge_copy_chains(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-copy-chains (flow-phase IR)."""
    with module.context, ir.Location.unknown():
        copies = _copies(module)
        if not copies:
            return module
        taken = {symbol_name(e) for e in walk_ops(module.operation, "flow.executable")}
        first_exe = next(walk_ops(module.operation, "flow.executable"))
        # a chain begins only at a copy into a flow.tensor.empty: chains never share a dispatch
        found = []
        for d in walk_ops(module.operation, "flow.dispatch"):
            chain = _chain(d, copies)
            p = _problem(chain, copies) if chain else None
            if p is not None:
                found.append((chain, p))
        for chain, p in found:
            dst = ir.RankedTensorType(chain[0].results[0].type)
            splat = _splat_start(chain)
            prev = chain[0].operands[1] if splat else None
            for g in range(0, len(chain), MAX_PIECES):
                part = chain[g:g + MAX_PIECES]
                into = prev is not None
                q = CopyProblem(p.shape, p.dtype, tuple(dataclasses.replace(x, operand=i)
                                                        for i, x in enumerate(p.pieces[g:g + MAX_PIECES])), into)
                name = _fresh(taken, f"{_callee(part[0])[0]}_copies")
                parsed = ir.Module.parse(_executable_text(name, part, copies, dst, into))
                exe = op_of(next(iter(parsed.body.operations)))
                exe.move_before(first_exe)
                exe.attributes[COPY_ATTR] = dict_attr(q.to_dict())
                last = part[-1]
                entry = ir.ArrayAttr.get([ir.SymbolRefAttr.get([name, name])])
                attrs = {"entry_points": entry,
                         "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(part) + into, 0, 0])}
                if into:      # the destination so far, written in place
                    attrs["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), len(part))])
                with ir.InsertionPoint(last), last.location:
                    new = ir.Operation.create("flow.dispatch", results=[dst],
                                              operands=[c.operands[0] for c in part] + ([prev] if into else []),
                                              attributes=attrs)
                prev = new.results[0]
            chain[-1].results[0].replace_all_uses_with(prev)
            empty = op_of(chain[0].operands[1].owner) if len(chain[0].operands) == 2 else None
            for c in reversed(chain):
                c.erase()
            if empty is not None and not splat and not list(empty.results[0].uses):
                empty.erase()
        called = {_callee(d)[0] for d in walk_ops(module.operation, "flow.dispatch")}
        for exe in list(walk_ops(module.operation, "flow.executable")):
            if symbol_name(exe) not in called and any(k[0] == symbol_name(exe) for k in copies):
                exe.erase()
    return module
