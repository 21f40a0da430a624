"""IR builders the layout rewrites share: transposes, reshapes, barriers, elementwise ops."""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, flow as flow_d, linalg as linalg_d, tensor as tensor_d, util as util_d

from ..ir import ir, walk_ops

NCHW_TO_NHWC = [0, 2, 3, 1]
NHWC_TO_NCHW = [0, 3, 1, 2]
HWCF_TO_FHWC = [3, 0, 1, 2]


def ints(attr) -> list[int]:
    return [int(x) for x in ir.DenseIntElementsAttr(attr)]


def mixed_sizes(v: ir.Value, replace: dict[int, int] | None = None) -> list:
    """v's sizes as tensor.empty takes them: ints, and tensor.dim values for dynamic ones;
    `replace` sets some dimensions to static sizes instead."""
    t = ir.RankedTensorType(v.type)
    replace = replace or {}
    return [replace[i] if i in replace else
            tensor_d.dim(v, arith_d.constant(ir.IndexType.get(), i)) if t.is_dynamic_dim(i) else t.shape[i]
            for i in range(t.rank)]


def empty_like(v: ir.Value, perm: list[int]) -> ir.Value:
    """tensor.empty of v's type permuted by perm (dynamic sizes read with tensor.dim)."""
    sizes = mixed_sizes(v)
    return tensor_d.EmptyOp([sizes[p] for p in perm], ir.RankedTensorType(v.type).element_type).result


def zero(t: ir.Type) -> ir.Value:
    """A zero constant of element type t."""
    return arith_d.constant(t, ir.IntegerAttr.get(t, 0) if isinstance(t, ir.IntegerType) else ir.FloatAttr.get(t, 0.0))


def transpose(v: ir.Value, perm: list[int]) -> ir.Value:
    return value_of(linalg_d.transpose(v, outs=[empty_like(v, perm)], permutation=perm))


def value_of(x) -> ir.Value:
    """The single result of what a builder returned (an op view or already a value)."""
    if isinstance(x, ir.Value):
        return x
    if isinstance(x, (list, tuple)):
        return x[0]
    return x.results[0]


def owner(v: ir.Value):
    o = v.owner
    return None if isinstance(o, ir.Block) else (o.operation if hasattr(o, "operation") else o)


def is_zero_fill(v: ir.Value) -> bool:
    op = owner(v)
    if op is None or op.name != "linalg.fill":
        return False
    c = owner(op.operands[0])
    if c is None or c.name != "arith.constant":
        return False
    a = c.attributes["value"]
    return isinstance(a, ir.FloatAttr) and a.value == 0.0 or isinstance(a, ir.IntegerAttr) and a.value == 0


def add_elementwise(a: ir.Value, b: ir.Value) -> ir.Value:
    """a + b, elementwise, same shapes (a linalg.generic IREE fuses into the conv dispatch)."""
    t = ir.RankedTensorType(a.type)
    ident = ir.AffineMap.get_identity(t.rank)
    gen = linalg_d.GenericOp([t], [a, b], [empty_like(a, list(range(t.rank)))],
                             ir.ArrayAttr.get([ir.AffineMapAttr.get(ident)] * 3),
                             ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * t.rank))
    block = gen.regions[0].blocks.append(t.element_type, t.element_type, t.element_type)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([arith_d.addf(block.arguments[0], block.arguments[1])])
    return gen.results[0]



def reshape(v: ir.Value, shape: list[int], groups: list[list[int]]) -> ir.Value:
    """v collapsed or expanded (by the rank change) to `shape` (static but for the batch)."""
    t = ir.RankedTensorType(v.type)
    rt = ir.RankedTensorType.get(shape, t.element_type)
    assoc = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
                                                for i in g]) for g in groups])
    if len(shape) < t.rank:
        return tensor_d.CollapseShapeOp(rt, v, assoc).result
    # a dynamic size is the batch, dimension 0 of both (its own group in every view here)
    dims = [tensor_d.dim(v, arith_d.constant(ir.IndexType.get(), 0))] if rt.is_dynamic_dim(0) else []
    return tensor_d.ExpandShapeOp(rt, v, assoc, dims, shape).result



def extract(v: ir.Value, offsets: list[int], sizes: list[int], strides: list[int]) -> ir.Value:
    """A static tensor.extract_slice of v."""
    t = ir.RankedTensorType(v.type)
    return tensor_d.ExtractSliceOp(ir.RankedTensorType.get(sizes, t.element_type), v, [], [], [],
                                   offsets, sizes, strides).result


def extract_sized(v: ir.Value, offsets: list[int], sizes: list, strides: list[int]) -> ir.Value:
    """tensor.extract_slice of v with static offsets and strides and sizes that are ints or
    index values (runtime sizes)."""
    t = ir.RankedTensorType(v.type)
    dyn = ir.ShapedType.get_dynamic_size()
    static = [x if isinstance(x, int) else dyn for x in sizes]
    return tensor_d.ExtractSliceOp(ir.RankedTensorType.get(static, t.element_type), v, [],
                                   [x for x in sizes if not isinstance(x, int)], [],
                                   offsets, static, strides).result


def insert(v: ir.Value, dest: ir.Value, offsets: list[int], sizes: list[int], strides: list[int]) -> ir.Value:
    """A static tensor.insert_slice of v into dest."""
    return tensor_d.InsertSliceOp(v, dest, [], [], [], offsets, sizes, strides).result


def pad(v: ir.Value, low: list[int], high: list[int], value: ir.Value) -> ir.Value:
    """tensor.pad of static v by `value` (static low/high)."""
    t = ir.RankedTensorType(v.type)
    new = tensor_d.PadOp(ir.RankedTensorType.get([n + a + b for n, a, b in zip(t.shape, low, high)], t.element_type),
                         v, [], [], low, high)
    block = new.regions[0].blocks.append(*([ir.IndexType.get()] * t.rank))
    with ir.InsertionPoint(block):
        tensor_d.YieldOp(value)
    return new.result


def regenerate(gen, ins: list[ir.Value], init: ir.Value, maps: ir.ArrayAttr | None = None) -> ir.Value:
    """generic `gen` rebuilt on new inputs and output (same iterators; `maps`, or its own), its
    body moved over; gen itself is left without a body, for the caller to replace and erase."""
    new = linalg_d.GenericOp([init.type], ins, [init], maps or gen.attributes["indexing_maps"],
                             gen.attributes["iterator_types"])
    old = gen.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*[a.type for a in old.arguments])
    for old_a, new_a in zip(old.arguments, block.arguments):
        old_a.replace_all_uses_with(new_a)
    for o in list(old.operations):
        o.operation.detach_from_parent()
        ir.InsertionPoint(block).insert(o.operation)
    return new.results[0]


# a barrier that only fences fusion: convc-channels-last moves layout transposes through it
LAYOUT_FREE = "convc.layout_free"


def barrier(v: ir.Value, layout_free: bool = False) -> ir.Value:
    """v behind a util.optimization_barrier (IREE cannot fold or fuse across it). A dynamic
    size (the batch) is tied back onto the result, since IREE cannot resolve sizes through
    the barrier. layout_free: marked LAYOUT_FREE (transpose_sinking moves an NHWC -> NCHW
    transpose through it)."""
    t = ir.RankedTensorType(v.type)
    dims = [tensor_d.dim(v, arith_d.constant(ir.IndexType.get(), i)) for i in range(t.rank) if t.is_dynamic_dim(i)]
    out = value_of(util_d.optimization_barrier([v.type], [v]))
    if layout_free:
        owner(out).attributes[LAYOUT_FREE] = ir.UnitAttr.get()
    return flow_d.tensor_tie_shape(out, dims) if dims else out



def user_op(use):
    """The operation holding an OpOperand (an OpView or an Operation, as the bindings return it)."""
    return use.owner.operation if hasattr(use.owner, "operation") else use.owner


def users(op) -> list:
    """The ops using any result of op, once per use."""
    return [user_op(u) for r in op.results for u in r.uses]


def is_transpose(op, perm: list[int]) -> bool:
    return (op is not None and op.name == "linalg.transpose"
            and list(ir.DenseI64ArrayAttr(op.attributes["permutation"])) == perm)



def truncf_tensor(v: ir.Value, et: ir.Type) -> ir.Value:
    """v converted elementwise to float type et (a linalg.generic)."""
    t = ir.RankedTensorType(v.type)
    init = tensor_d.EmptyOp([tensor_d.dim(v, arith_d.constant(ir.IndexType.get(), i)) if t.is_dynamic_dim(i)
                             else t.shape[i] for i in range(t.rank)], et).result
    ident = ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))
    gen = linalg_d.GenericOp([init.type], [v], [init], ir.ArrayAttr.get([ident, ident]),
                             ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * t.rank))
    block = gen.regions[0].blocks.append(t.element_type, et)
    with ir.InsertionPoint(block):
        linalg_d.YieldOp([arith_d.truncf(et, block.arguments[0])])
    return gen.results[0]



def erase_dead(module: ir.Module, kinds: tuple[str, ...]) -> None:
    """Erases ops of these kinds whose results have no users, until none is left (a rewrite's
    leftovers: the erasure of one frees its operands' producers)."""
    changed = True
    while changed:
        changed = False
        for op in list(walk_ops(module.operation)):
            if op.name in kinds and all(not list(r.uses) for r in op.results):
                op.erase()
                changed = True
