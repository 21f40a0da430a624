"""The epilogue chain: the conv's accumulator fill and the elementwise generics between the
conv and the store, read into EpilogueSteps (fixed add/mul/relu/cast steps where the body is
made of them, else one program step re-creating its ops)."""

from __future__ import annotations

import dataclasses

from ..ir import ir
from ..problem import EpilogueOp, EpilogueStep, OperandLoad, DTYPE_BYTES
from .dispatch import Dispatch
from .ir_reading import Decline, element_dtype, float_const, int_const, linear_terms, owner_op
from .pool_forms import combine_op


def init_steps(v: ir.Value, conv_t: str) -> list[EpilogueStep]:
    """The conv accumulates into a fill. A zero fill is the kernel's own accumulator; a
    nonzero constant (IREE folds a constant bias into the fill) becomes a first epilogue step
    that adds it, in the conv's result type."""
    op = owner_op(v)
    c = float_const(op.operands[0]) if op is not None and op.name == "linalg.fill" else None
    if c is None and op is not None and op.name == "linalg.fill" and int_const(op.operands[0]) == 0:
        return []                  # an integer conv's zero accumulator
    if c is None:
        raise Decline("convolution does not accumulate into a constant fill (it reads an earlier result)")
    if c == 0.0:
        return []
    attr = owner_op(op.operands[0]).attributes["value"]
    return [EpilogueStep("program", conv_t, program=(
        EpilogueOp("arith.constant", conv_t, (), (("value", str(attr)),)),
        EpilogueOp("arith.addf", conv_t, (0, 1), ())))]



def interpret_elementwise(d: Dispatch, gen, chain_args: list[int], cur_type: str):
    """Reads one elementwise generic (reading the conv value at operands chain_args) into
    EpilogueSteps. Returns (steps, result type)."""
    iters = [str(a) for a in gen.attributes["iterator_types"]]
    if any("parallel" not in s for s in iters):
        raise Decline("epilogue is not elementwise (it reduces)")
    maps = [ir.AffineMapAttr(a).value for a in gen.attributes["indexing_maps"]]
    n_out = len(gen.results)
    if n_out != 1:
        raise Decline("epilogue has several results")
    ins = list(gen.operands)[: len(gen.operands) - n_out]
    rank = maps[-1].n_dims
    ident = [{i: 1} for i in range(rank)]
    if [linear_terms(e) for e in maps[-1].results] != ident:
        raise Decline("epilogue output is not written elementwise")
    sources = []
    for i, v in enumerate(ins):
        res = [linear_terms(e) for e in maps[i].results]
        if i in chain_args:
            if res != ident:
                raise Decline("epilogue reads the conv result transposed or broadcast")
            sources.append("chain")
            continue
        row = next((ld for val, ld in d.row_values if val == v), None)
        if row is not None:
            if res != [{i: 1} for i in range(rank - 1)]:
                raise Decline("a row reduction is read other than per output row")
            sources.append(row)
            continue
        k = d.out_channel_dims
        bcast = ("full" if res == ident else "channel" if res == [{rank - k + i: 1} for i in range(k)]
                 else "image" if d.image_operands and rank >= 3 and res == [{0: 1}, {rank - 1: 1}] else None)
        sl = d.channel_slice_of(v) if bcast == "full" else None
        if sl is not None:                         # a residual that is a channel window of its operand
            if d.residual_slice not in (None, sl[1:]):
                raise Decline("epilogue operands are different channel windows")
            d.residual_slice = sl[1:]
            src = sl[0]
        else:
            src = d.epilogue_source(v)
        if isinstance(src, ir.Attribute):          # a splat: the same scalar at every element
            sources.append(src)
        elif bcast is None:
            raise Decline("epilogue operand has an unsupported broadcast")
        else:
            sources.append(OperandLoad(src.index, bcast, src.dtype))
    block = gen.regions[0].blocks[0]
    out_t = element_dtype(ir.ShapedType(gen.results[0].type).element_type)
    if len(chain_args) == 1:
        try:
            return _fixed_steps(block, sources, cur_type, out_t), out_t
        except _NotFixed:
            pass
    return _program_steps(block, sources, out_t), out_t


class _NotFixed(Exception):
    """A body that is not made of the fixed step kinds; it becomes a program step."""


# cmpf predicates for which select(x P 0, x, 0) is relu: ogt, oge, ugt, uge
_RELU_PREDICATES = ("2 : i64", "3 : i64", "9 : i64", "10 : i64")


def _fixed_steps(block, sources, cur_type: str, out_t: str) -> list[EpilogueStep]:
    """The body as add/mul (conv value with one operand), relu, cast steps: the encoding
    existing kernels and tuning caches were built with. Raises _NotFixed otherwise. Each step
    replaces the conv value, so every use must read its latest version."""
    vals: dict = {}
    for arg, src in zip(block.arguments, sources):
        if isinstance(src, ir.Attribute):
            raise _NotFixed
        vals[arg] = ("chain", 0) if isinstance(src, str) else ("operand", src)
    steps: list[EpilogueStep] = []
    latest = ("chain", 0)

    def step(result, st=None):
        nonlocal latest
        if st is not None:
            steps.append(st)
        latest = ("chain", latest[1] + 1)
        vals[result] = latest

    for o in block.operations:
        o = o.operation
        n = o.name
        if n == "arith.constant":
            vals[o.results[0]] = ("const", float_const(o.results[0]))
            continue
        args = [vals.get(x) for x in o.operands]
        args = [a if a is not None or float_const(x) is None else ("const", float_const(x))
                for a, x in zip(args, o.operands)]
        if any(a is None or (a[0] == "chain" and a != latest) for a in args):
            raise _NotFixed
        kinds = [a[0] for a in args]
        if n in ("arith.extf", "arith.truncf"):
            to = str(o.results[0].type)
            if to not in DTYPE_BYTES:
                raise _NotFixed
            if kinds[0] != "chain":
                vals[o.results[0]] = args[0]      # operands are converted at use
            elif to != cur_type:
                step(o.results[0], EpilogueStep("cast", to))
                cur_type = to
            continue
        if n in ("arith.addf", "arith.mulf") and sorted(kinds) == ["chain", "operand"]:
            ld = args[kinds.index("operand")][1]
            step(o.results[0], EpilogueStep("add" if n == "arith.addf" else "mul", ld.dtype, ld.operand, ld.broadcast))
            continue
        if (n in ("arith.maximumf", "arith.maxnumf") and sorted(kinds) == ["chain", "const"]
                and args[kinds.index("const")][1] == 0.0):
            step(o.results[0], EpilogueStep("max0", cur_type))
            continue
        if n == "arith.cmpf":
            vals[o.results[0]] = ("cmp", str(o.attributes["predicate"]), args)
            continue
        if n == "arith.select":
            c, a, b = args
            if (c[0] == "cmp" and c[1] in _RELU_PREDICATES and c[2] == [latest, ("const", 0.0)]
                    and a == latest and b == ("const", 0.0)):
                step(o.results[0], EpilogueStep("max0", cur_type))
                continue
        if n == "linalg.yield" and args[0] == latest and out_t == cur_type:
            return steps
        raise _NotFixed
    raise _NotFixed


# Ops of other dialects that read something other than the element itself, and why not fused.
_NOT_ELEMENTWISE = {"linalg.index": "reads the iteration index",
                    "tensor.extract": "reads another element of a tensor"}


def _check_program_op(o) -> None:
    n = o.name
    if n in _NOT_ELEMENTWISE:
        raise Decline(f"epilogue op {n} {_NOT_ELEMENTWISE[n]}: only math on each output element is fused")
    if n.split(".")[0] not in ("arith", "math"):
        raise Decline(f"epilogue op {n} is not an arith or math op")
    if len(o.results) != 1 or len(o.regions):
        raise Decline(f"epilogue op {n} has several results or a region")
    for v in list(o.operands) + list(o.results):
        t = str(v.type)
        if t not in DTYPE_BYTES and t != "i1":
            raise Decline(f"epilogue op {n} computes on {t}: only f16/bf16/f32 and i8/i16/i32 values "
                          "(and comparison results) are fused")


def _op_attrs(o) -> tuple:
    """(name, MLIR text) of an op's attributes; the default fastmath flags are left out."""
    attrs = o.attributes
    return tuple(sorted((attrs[i].name, str(attrs[i].attr)) for i in range(len(attrs))
                        if str(attrs[i].attr) != "#arith.fastmath<none>"))


def _program_steps(block, sources, out_t: str, until=None, value=None) -> list[EpilogueStep]:
    """The body as one program step: its ops in order, over the conv value, the loaded
    operands and float constants (from splat tensors, the body or the dispatch function);
    the value yielded, or with `until` (an op of the body) `value` once that op is reached."""
    nodes: list = [None]                  # 0: the conv value; then OperandLoads and EpilogueOps
    refs: dict = {}

    def add(node) -> int:
        nodes.append(node)
        return len(nodes) - 1

    def const(attr) -> int:
        return add(EpilogueOp("arith.constant", element_dtype(attr.type), (), (("value", str(attr)),)))

    def source(src) -> int:
        if isinstance(src, Widened):
            return add(EpilogueOp("arith.extf", src.dtype, (source(src.source),), ()))
        return 0 if isinstance(src, str) else add(src) if isinstance(src, OperandLoad) else const(src)

    for arg, src in zip(block.arguments, sources):
        refs[arg] = source(src)
    out_arg = block.arguments[len(sources)]
    for o in block.operations:
        o = o.operation
        if until is not None and o == until:
            return _compact(nodes, refs.get(value), out_t)
        if o.name == "linalg.yield":
            return _compact(nodes, refs.get(o.operands[0]), out_t)
        _check_program_op(o)
        for x in o.operands:
            if x not in refs:
                refs[x] = const(_outside_constant(x, out_arg, o.name))
        refs[o.results[0]] = add(EpilogueOp(o.name, str(o.results[0].type), tuple(refs[x] for x in o.operands),
                                            _op_attrs(o)))
    raise Decline("epilogue has no yield")


def _outside_constant(v: ir.Value, out_arg, user: str) -> ir.FloatAttr:
    if v == out_arg:
        raise Decline(f"epilogue op {user} reads the output buffer's previous value")
    op = owner_op(v)
    if (op is None or op.name != "arith.constant"
            or not isinstance(op.attributes["value"], (ir.FloatAttr, ir.IntegerAttr))
            or str(op.attributes["value"].type) not in DTYPE_BYTES):
        raise Decline(f"epilogue op {user} uses a value from outside its body that is not a scalar constant")
    return op.attributes["value"]


def _compact(nodes: list, result: int | None, out_t: str) -> list[EpilogueStep]:
    """The program step computing node `result`: only what it uses, renumbered (0: the conv
    value, then the loads, then the ops in order). No step when it is the conv value itself."""
    live, todo = set(), [] if result is None else [result]
    while todo:
        n = todo.pop()
        if n not in live:
            live.add(n)
            todo += nodes[n].args if isinstance(nodes[n], EpilogueOp) else []
    if 0 not in live:
        raise Decline("epilogue result does not depend on the conv")
    if result == 0:
        return []
    loads = [n for n in sorted(live) if isinstance(nodes[n], OperandLoad)]
    ops = [n for n in sorted(live) if isinstance(nodes[n], EpilogueOp)]
    new = {0: 0, **{n: i + 1 for i, n in enumerate(loads + ops)}}
    program = tuple(dataclasses.replace(nodes[n], args=tuple(new[a] for a in nodes[n].args)) for n in ops)
    if program[-1].dtype != out_t:
        raise Decline("epilogue result type differs from its computation")
    return [EpilogueStep("program", out_t, loads=tuple(nodes[n] for n in loads), program=program)]


def chain_user(v: ir.Value):
    """The op using v and at which operands (an epilogue generic may read the conv twice)."""
    uses = [(u.owner.operation if hasattr(u.owner, "operation") else u.owner, u.operand_number) for u in v.uses]
    if not uses or any(op != uses[0][0] for op, _ in uses):
        raise Decline("an intermediate result has several users")
    return uses[0][0], [i for _, i in uses]



def row_program(op) -> tuple[EpilogueOp, ...]:
    """The per-element value a row reduction (map_forms.row_reduction) combines: its body's
    ops from the input element (value 0) to the combine's other operand, as EpilogueOps;
    none when it combines the element itself."""
    steps = _combined_program(op, ["chain"], "row reduction")
    return steps[0].program if steps else ()


def _combined_program(op, sources: list, what: str) -> tuple[EpilogueStep, ...]:
    """The math a reduction's body does on each element before its combine, as one program
    step over the element (value 0) and `sources` (as for _program_steps); none when it
    combines the element itself. Declines name `what`."""
    block = op.regions[0].blocks[0]
    comb = combine_op(op)
    acc = block.arguments[len(block.arguments) - 1]
    others = [v for v in comb.operands if v != acc]
    if len(others) != 1:
        raise Decline(f"{what} combines its accumulator with itself")
    try:
        return tuple(_program_steps(block, sources, element_dtype(others[0].type), until=comb, value=others[0]))
    except Decline as e:
        raise Decline(f"{what}: {e}") from None


@dataclasses.dataclass(frozen=True)
class Widened:
    """A program source read in a narrower type and extended to `dtype` in the dispatch (a
    BatchNorm's f16 constants widened to f32 by a generic of their own)."""

    source: object
    dtype: str


def _widened_source(d: Dispatch, v: ir.Value):
    """The source of v: d.epilogue_source's, or, where v is an elementwise generic that only
    extends one tensor (linalg.generic {extf; yield}), that tensor's source, Widened."""
    op = owner_op(v)
    if op is not None and op.name == "linalg.generic" and len(op.operands) == 2 and len(op.results) == 1:
        names = [o.operation.name for o in op.regions[0].blocks[0].operations]
        maps = {str(a) for a in op.attributes["indexing_maps"]}
        if names == ["arith.extf", "linalg.yield"] and len(maps) == 1:
            return Widened(d.epilogue_source(op.operands[0]), element_dtype(ir.ShapedType(v.type).element_type))
    return d.epilogue_source(v)


def pool_prologue(d: Dispatch, op) -> tuple[EpilogueStep, ...]:
    """A global pool's math on each input element before its combine
    (pool_forms.global_reduction_dims; ConvProblem.prologue): one program step over the
    element (value 0) and operands read per channel or shaped like the input (IREE's ONNX
    import can leave a SiLU's sigmoid in the dispatch before); none when it combines the
    element itself."""
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    ins = list(op.operands)[:-1]
    x_terms = [linear_terms(e) for e in maps[0].results]
    sources: list = ["chain"]
    for i, v in enumerate(ins[1:], 1):
        terms = [linear_terms(e) for e in maps[i].results]
        if v == ins[0] and terms == x_terms:
            sources.append("chain")
            continue
        src = _widened_source(d, v)
        inner = src.source if isinstance(src, Widened) else src
        if isinstance(inner, ir.Attribute):
            sources.append(src)
        elif terms in ([x_terms[-1]], x_terms):
            ld = OperandLoad(inner.index, "channel" if terms == [x_terms[-1]] else "full", inner.dtype)
            sources.append(Widened(ld, src.dtype) if isinstance(src, Widened) else ld)
        else:
            raise Decline("an operand of the reduction's per-element math is read neither per channel nor "
                          "like its input")
    return _combined_program(op, sources, "the pool's per-element math")
