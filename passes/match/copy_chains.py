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

Runtime sizes (a dynamic batch, H or W): IREE's copies then take index operands (workload
ordinals) and tie their tensors' dims to them. A chain is taken when one set of SSA values sizes
every source, the destination and every result, and each copy takes every axis sized at run
time whole on both sides (a channel concatenation of images of any size; a source IREE reduced
by a unit batch is read whole): the CopyProblem records which word holds each such axis, and
the merged dispatch passes those values as its workload and as index operands (the splice
makes them push constants). Strided pieces on such axes (an upsample's) and zero-filled
starts stay IREE's.
"""

from __future__ import annotations

import dataclasses

from ..attrs import COPY_ATTR
from ..copy_problem import CopyPiece, CopyProblem, exact_cover, overlap as _overlap
from ..ir import DISPATCH_SEGMENTS, LOAD_SEGMENTS, STORE_SEGMENTS, ir, dict_attr, operand_segments, walk_ops
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


DYN = -(1 << 63)        # MLIR's dynamic-size marker (ShapedType.get_dynamic_size())
TIE, ORDINAL = "flow.dispatch.tie_shape", "iree_tensor_ext.dispatch.workload.ordinal"


@dataclasses.dataclass(frozen=True)
class PieceCopy:
    """A dispatch function that only copies a box of its read-only tensor into a slice of its
    read-write one (in place) or whole into its write-only result. Sizes are destination-rank
    lists; on a `dynamic` axis (sized at run time: the whole extent on both sides, at offset 0
    and stride 1) the size is -1."""

    src: ir.RankedTensorType            # the source operand (? on dynamic axes)
    load_offsets: list
    load_sizes: list
    offsets: list
    sizes: list
    strides: list
    loaded: ir.RankedTensorType
    load_strides: list
    into: bool
    dynamic: tuple[int, ...] = ()       # destination axes sized at run time
    src_arg: int = 0                    # the function arguments (= dispatch arguments) copied from
    dst_arg: int = 1                    # and into (the result's when it is write-only)


def _dispatch_type(arg) -> ir.RankedTensorType:
    t = str(arg.type)
    return ir.RankedTensorType(ir.Type.parse(t[t.index("tensor<", t.index(":")):-1]))


def _whole_dynamic(op, seg: dict, dims: list, t: ir.RankedTensorType) -> list[int] | None:
    """The axes of t sized at run time when op (a load or store) takes each of them whole (offset
    0, stride 1, its size the tensor's runtime dim `dims`) and every other axis statically;
    else None."""
    offsets, sizes, strides = (_ints(op.attributes[k]) for k in ("static_offsets", "static_sizes", "static_strides"))
    if seg["offsets"] or seg["strides"] or len(sizes) != t.rank:
        return None
    dyn = [a for a in range(t.rank) if t.is_dynamic_dim(a)]
    if len(dims) != len(dyn) or [a for a in range(t.rank) if sizes[a] == DYN] != dyn:
        return None
    if any(offsets[a] != 0 or strides[a] != 1 for a in dyn) or list(seg["sizes"]) != list(dims):
        return None
    return dyn


def piece_copy(func) -> PieceCopy | None:
    """The copy a dispatch function makes (PieceCopy): its read-only operand 0 (the whole operand,
    a channel slice IREE folded into the load, every sd-th frame of a volume) into a static slice
    of its read-write operand 1 (in place), or whole into its write-only result (a strided slice
    on its own: a 3-D conv's depth stride); with runtime sizes (index operands, workload
    ordinals, tie_shape ops), the axes sized at run time are taken whole on both sides; else
    None."""
    block = func.regions[0].blocks[0]
    tensors = [a for a in block.arguments if "dispatch.tensor<" in str(a.type)]
    indices = [a for a in block.arguments if str(a.type) == "index"]
    ops = [op_of(o) for o in block.operations]
    body = [o for o in ops if o.name not in (ORDINAL, TIE)]
    if len(tensors) != 2 or len(tensors) + len(indices) != len(block.arguments) \
            or [o.name for o in body] != [LOAD, STORE, "func.return"]:
        return None
    load, store = body[0], body[1]
    src_arg, dst_arg = tensors
    src_t, dst_t = str(src_arg.type), str(dst_arg.type)
    if "readonly:" not in src_t or ("readwrite:" not in dst_t and "writeonly:" not in dst_t):
        return None
    ties = {}
    for o in ops:
        if o.name == TIE:
            ties[o.results[0]] = (o.operands[0], list(o.operands)[1:])
    lseg, sseg = operand_segments(load, LOAD_SEGMENTS), operand_segments(store, STORE_SEGMENTS)

    def base(v):
        return ties[v][0] if v in ties else v
    if base(lseg["source"][0]) != src_arg or base(sseg["target"][0]) != dst_arg or sseg["value"][0] != load.results[0]:
        return None
    src, dst = _dispatch_type(src_arg), _dispatch_type(dst_arg)
    loaded = ir.RankedTensorType(load.results[0].type)
    ldyn = _whole_dynamic(load, lseg, lseg["source_dims"], src)
    sdyn = _whole_dynamic(store, sseg, sseg["target_dims"], dst)
    if ldyn is None or sdyn is None or len(ldyn) != len(sdyn):
        return None
    dynamic = tuple(sdyn)
    lsizes = _ints(load.attributes["static_sizes"])
    lstrides = _ints(load.attributes["static_strides"])
    plain = [-1 if a in ldyn else n for a, n in enumerate(lsizes)]
    lshape = [-1 if loaded.is_dynamic_dim(a) else n for a, n in enumerate(loaded.shape)]
    if len(lsizes) != src.rank or min(lstrides) <= 0 or [x for x in plain if x != 1] != [x for x in lshape if x != 1] \
            or (not dynamic and not (src.has_static_shape and loaded.has_static_shape)):
        return None
    whole = plain == [-1 if src.is_dynamic_dim(a) else n for a, n in enumerate(src.shape)] \
        and not any(_ints(load.attributes["static_offsets"])) and lstrides == [1] * src.rank
    if ldyn != sdyn and not whole:      # a box of a rank-reduced source: its axes are not the destination's
        return None
    into = "readwrite:" in dst_t
    if not into:        # a write-only result: the copy must write all of it
        if dynamic or not dst.has_static_shape or _ints(store.attributes["static_sizes"]) != list(dst.shape) \
                or any(_ints(store.attributes["static_offsets"])) or lstrides == [1] * src.rank:
            return None
    return PieceCopy(src, _ints(load.attributes["static_offsets"]), plain, _ints(store.attributes["static_offsets"]),
                     [-1 if a in dynamic else n for a, n in enumerate(_ints(store.attributes["static_sizes"]))],
                     _ints(store.attributes["static_strides"]), loaded, lstrides, into, dynamic,
                     src_arg.arg_number, dst_arg.arg_number)


def _copies(module: ir.Module) -> dict[tuple[str, str], PieceCopy]:
    """(executable, function) -> piece_copy() of every copy-only dispatch function."""
    out = {}
    for exe in walk_ops(module.operation, "flow.executable"):
        for func in walk_ops(exe, "func.func"):
            c = piece_copy(func)
            if c is not None:
                out[(symbol_name(exe), symbol_name(func))] = c
    return out


class _Call:
    """A copy dispatch as the chain sees it: its arguments, each argument's runtime dims and the
    result's (the SSA values IREE sizes them with), the argument its result is tied to. Read
    from the op each time: merging one chain replaces the values a later chain's copies read."""

    def __init__(self, op, copy: PieceCopy):
        self.op, self.copy = op, copy

    def _segments(self) -> dict:
        return operand_segments(self.op, DISPATCH_SEGMENTS)

    @property
    def args(self) -> list:
        return self._segments()["arguments"]

    @property
    def arg_dims(self) -> list[list]:
        seg = self._segments()
        dims, out = list(seg["argument_dims"]), []
        for a in seg["arguments"]:
            t = ir.ShapedType(a.type) if "tensor<" in str(a.type) else None
            n = sum(1 for k in range(t.rank) if t.is_dynamic_dim(k)) if t is not None else 0
            out.append(dims[:n])
            dims = dims[n:]
        return out

    @property
    def result_dims(self) -> list:
        return self._segments()["result_dims"]

    @property
    def tied(self) -> int | None:
        d = self.op
        ties = [ir.IntegerAttr(a).value for a in d.attributes["tied_operands"]] if "tied_operands" in d.attributes else [-1]
        return ties[0] if len(ties) == 1 and ties[0] >= 0 else None

    @property
    def source(self):
        return self.args[self.copy.src_arg]

    @property
    def into(self):
        return self.args[self.copy.dst_arg] if self.copy.into else None


def _call(d, copies) -> _Call | None:
    if d.name != "flow.dispatch" or _callee(d) not in copies or len(d.results) != 1:
        return None
    c = copies[_callee(d)]
    call = _Call(d, c)
    args, per_arg, rdims = call.args, call.arg_dims, call.result_dims
    tensors = [i for i, a in enumerate(args) if "tensor<" in str(a.type)]
    if tensors != sorted({c.src_arg} | ({c.dst_arg} if c.into else set())) or call.tied != (c.dst_arg if c.into else None):
        return None
    if per_arg[c.src_arg] != rdims or (c.into and per_arg[c.dst_arg] != rdims) or len(rdims) != len(c.dynamic):
        return None         # runtime sizes: one set of values sizes the source, destination and result
    return call


def _chain(start, copies) -> list[_Call] | None:
    """The copy dispatches of the chain that begins with `start` (a copy into a
    flow.tensor.empty), in order; None if start begins no chain."""
    first = _call(start, copies)
    if first is None:
        return None
    if not first.copy.into:          # a strided slice on its own: a chain of one
        return [first] if not first.copy.dynamic else None
    empty = first.into.owner
    if isinstance(empty, ir.Block) or op_of(empty).name not in ("flow.tensor.empty", "flow.tensor.splat") \
            or (first.copy.dynamic and op_of(empty).name != "flow.tensor.empty"):
        return None
    chain = [first]
    while True:
        uses = list(chain[-1].op.results[0].uses)
        if len(uses) != 1:
            break
        nxt = _call(op_of(uses[0].owner), copies)
        if nxt is None or not nxt.copy.into or nxt.into != chain[-1].op.results[0] \
                or nxt.source == chain[-1].op.results[0] or nxt.result_dims != first.result_dims:
            break
        chain.append(nxt)
    return chain


def _splat_start(chain) -> bool:
    return chain[0].copy.into and op_of(chain[0].into.owner).name == "flow.tensor.splat"


def _standalone(chain) -> bool:
    return not chain[0].copy.into


# the size a dynamic axis is planned for (vector widths, the cover check: every piece takes such
# an axis whole, so none of them depends on it)
PLANNED_SIZE = 64


def _words(chain) -> list:
    """The distinct runtime sizes of the destination, in axis order: push-constant word k."""
    out = []
    for v in chain[0].result_dims:
        if v not in out:
            out.append(v)
    return out


def _problem(chain: list[_Call]) -> CopyProblem | None:
    dst = ir.RankedTensorType(chain[0].op.results[0].type)
    dtype = str(dst.element_type)
    dynamic_axes = chain[0].copy.dynamic
    if dtype not in DTYPE_BYTES or (not dynamic_axes and not dst.has_static_shape) or \
            len(chain) < (1 if _splat_start(chain) or _standalone(chain) else 2) or \
            any(c.copy.dynamic != dynamic_axes for c in chain):
        return None
    words = _words(chain)
    dynamic = [-1] * dst.rank
    for a, v in zip(dynamic_axes, chain[0].result_dims):
        dynamic[a] = words.index(v)

    def planned(shape):
        return [PLANNED_SIZE if n in (-1, DYN) else n for n in shape]
    shape = planned(dst.shape)
    pieces = []
    for i, c in enumerate(chain):
        x = c.copy
        if str(x.src.element_type) != dtype or ir.RankedTensorType(c.source.type) != x.src:
            return None
        src_shape, lsizes = planned(x.src.shape), planned(x.load_sizes)
        whole = lsizes == src_shape
        pieces.append(CopyPiece(i, x.offsets, planned(x.sizes), x.strides,
                                *(() if whole else (src_shape, x.load_offsets, lsizes, x.load_strides))))
    why = exact_cover(tuple(shape), pieces)
    if why is not None and not (_splat_start(chain) and why == "the pieces do not add up to the destination"
                                and not any(_overlap(a, b) for i, a in enumerate(pieces) for b in pieces[i + 1:])):
        return None
    try:
        return CopyProblem(tuple(shape), dtype, tuple(pieces), dynamic=tuple(dynamic) if dynamic_axes else ())
    except ValueError:          # a runtime size on an axis some piece does not take whole
        return None


def _sizes(values: list, names: list[str]) -> str:
    """A sizes list in IR syntax: the k-th size read at run time (-1) is names[k]."""
    it = iter(names)
    return "[" + ", ".join(next(it) if v == -1 else str(v) for v in values) + "]"


def _executable_text(name: str, chain: list[_Call], dst: ir.RankedTensorType, into: bool, words: list) -> str:
    """The merged dispatch's executable: each piece loaded and stored into its slice of the
    write-only destination, read-write where it continues an earlier dispatch's (what IREE
    would build were the kernel not spliced in). With runtime sizes the function takes them as
    index arguments (workload ordinals, in word order) and ties every tensor's dims to them."""
    def dispatch_t(access: str, t) -> str:
        return f"!iree_tensor_ext.dispatch.tensor<{access}:{t}>"
    dynamic = chain[0].copy.dynamic
    ordinal = [f"%w{k}" for k in range(len(words))]
    axis_names = {}
    for a, v in zip(dynamic, chain[0].result_dims):
        axis_names[a] = ordinal[words.index(v)]
    names = [axis_names[a] for a in dynamic]          # the runtime sizes of every tensor, in axis order
    dims = "{" + ", ".join(names) + "}" if dynamic else ""
    out_t = dispatch_t("readwrite" if into else "writeonly", dst)
    args, body = [], [f"{ordinal[k]} = iree_tensor_ext.dispatch.workload.ordinal %d{k}, {k} : index"
                      for k in range(len(words))]
    out = "%out"
    if dynamic:
        body.append(f"%tout = flow.dispatch.tie_shape %out : {out_t}{dims}")
        out = "%tout"
    for i, c in enumerate(chain):
        x = c.copy
        in_t = dispatch_t("readonly", x.src)
        args.append(f"%arg{i}: {in_t}")
        src = f"%arg{i}"
        if dynamic:
            body.append(f"%t{i} = flow.dispatch.tie_shape %arg{i} : {in_t}{dims}")
            src = f"%t{i}"
        body.append(f"%v{i} = iree_tensor_ext.dispatch.tensor.load {src}, offsets = {x.load_offsets}, "
                    f"sizes = {_sizes(x.load_sizes, names)}, strides = {x.load_strides} : {in_t}{dims} "
                    f"-> {x.loaded}")
        body.append(f"iree_tensor_ext.dispatch.tensor.store %v{i}, {out}, offsets = {x.offsets}, "
                    f"sizes = {_sizes(x.sizes, names)}, strides = {x.strides} : {x.loaded} -> {out_t}{dims}")
    lines = "\n        ".join(body)
    word_args = [f"%d{k}: index" for k in range(len(words))]
    fn_args = args + ([f"%out: {out_t}"] + word_args if into else word_args + [f"%out: {out_t}"])
    count_args = ", ".join(f"%c{k}: index" for k in range(len(words)))
    count_vals = ", ".join(f"%c{k}" for k in range(len(words)))
    return f"""
flow.executable private @{name} {{
  flow.executable.export public @{name} workgroups({count_args}) -> (index, index, index) {{
    %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice({count_vals})
    flow.return %x, %y, %z : index, index, index
  }}
  builtin.module {{
    func.func @{name}({', '.join(fn_args)}) {{
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
            p = _problem(chain) if chain else None
            if p is not None:
                found.append((chain, p))
        for chain, p in found:
            dst = ir.RankedTensorType(chain[0].op.results[0].type)
            dims, words = chain[0].result_dims, _words(chain)
            splat = _splat_start(chain)
            prev = chain[0].into if splat else None
            for g in range(0, len(chain), MAX_PIECES):
                part = chain[g:g + MAX_PIECES]
                into = prev is not None
                q = dataclasses.replace(p, pieces=tuple(dataclasses.replace(x, operand=i)
                                                        for i, x in enumerate(p.pieces[g:g + MAX_PIECES])), into=into)
                name = _fresh(taken, f"{_callee(part[0].op)[0]}_copies")
                parsed = ir.Module.parse(_executable_text(name, part, dst, into, words))
                exe = op_of(next(iter(parsed.body.operations)))
                exe.move_before(first_exe)
                exe.attributes[COPY_ATTR] = dict_attr(q.to_dict())
                last = part[-1].op
                entry = ir.ArrayAttr.get([ir.SymbolRefAttr.get([name, name])])
                args = [c.source for c in part] + ([prev] if into else []) + words
                arg_dims = [v for _ in range(len(part) + into) for v in dims]
                attrs = {"entry_points": entry,
                         "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(words), len(args), len(arg_dims),
                                                                          len(dims)])}
                if into:      # the destination so far, written in place
                    attrs["tied_operands"] = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), len(part))])
                with ir.InsertionPoint(last), last.location:
                    new = ir.Operation.create("flow.dispatch", results=[dst],
                                              operands=words + args + arg_dims + dims, attributes=attrs)
                prev = new.results[0]
            chain[-1].op.results[0].replace_all_uses_with(prev)
            empty = op_of(chain[0].into.owner) if chain[0].copy.into else None
            for c in reversed(chain):
                c.op.erase()
            if empty is not None and not splat and not list(empty.results[0].uses):
                empty.erase()
        called = {_callee(d)[0] for d in walk_ops(module.operation, "flow.dispatch")}
        for exe in list(walk_ops(module.operation, "flow.executable")):
            if symbol_name(exe) not in called and any(k[0] == symbol_name(exe) for k in copies):
                exe.erase()
    return module
