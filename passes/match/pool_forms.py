"""Pooling windows: a max or sum (average) pool over an NHWC input, read as a depthwise window
without a filter.

IREE forms a dispatch around each pool of the model (ResNet-50's 3x3/2 max-pool after the stem:
131 us at batch 32 on an H100 in IREE's codegen, for 64 MB moved). Its loops are those of a
depthwise conv, (n, oh, ow, c) parallel and (kh, kw) reducing, with the window operand an empty
[kh, kw] tensor that only gives the window's extent; the body takes the max (or the sum) of the
accumulator and the input. So the direct depthwise kernel serves it with its filter taps
dropped and the multiply-add replaced by the window's combine; the padding and the accumulator
start at the combine's identity (-inf, or the lowest finite value an importer writes for it,
for max; zero for sum), and an average pool's division by the window size is an epilogue step
like any other elementwise op after the reduction.
"""

from __future__ import annotations

import math

from ..ir import ir
from .conv_forms import Geometry, _window_roles
from .ir_reading import Decline, linear_terms, owner_op

# the named pools, as their generic maps (loops n, oh, ow, c, kh, kw)
NAMED_POOLS = {
    "linalg.pooling_nhwc_max": "max",
    "linalg.pooling_nhwc_sum": "sum",
}
# combine ops of a pool body (acc, input) -> acc
COMBINES = {"arith.maximumf": "max", "arith.maxnumf": "max", "arith.addf": "sum"}


def _named_maps(op):
    st = [int(v) for v in op.attributes["strides"]]
    dl = [int(v) for v in op.attributes["dilations"]]
    dims = "(n, oh, ow, c, kh, kw)"
    rows = (f"(n, oh * {st[0]} + kh * {dl[0]}, ow * {st[1]} + kw * {dl[1]}, c)", "(kh, kw)", "(n, oh, ow, c)")
    maps = [ir.AffineMap(ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{dims} -> {r}>")).value) for r in rows]
    return ["p", "p", "p", "p", "r", "r"], maps


def combine_op(op):
    """The op of a reduction's body that combines into the accumulator (its last block
    argument) the value it yields: a COMBINES op with the accumulator as an operand; None if
    the body yields anything else."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    comb = owner_op(ops[-1].operands[0]) if ops[-1].operands else None
    acc = block.arguments[len(block.arguments) - 1]
    if comb is None or comb.name not in COMBINES or acc not in list(comb.operands):
        return None
    return comb


def plain_combine(op) -> str | None:
    """"max" / "sum" for a body that only combines the accumulator with the input (extensions
    allowed), None for anything else."""
    if op.name in NAMED_POOLS:
        return NAMED_POOLS[op.name]
    names = [o.operation.name for o in op.regions[0].blocks[0].operations]
    comb = combine_op(op)
    if comb is None or sum(n in COMBINES for n in names) != 1 \
            or any(n not in (*COMBINES, "arith.extf", "linalg.yield") for n in names):
        return None
    return COMBINES[comb.name]


def is_pool(op) -> bool:
    """A pooling window over one input: reduction loops the window operand alone indexes."""
    if op.name in NAMED_POOLS:
        return True
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.operands) != 3:
        return False
    iters = [str(a) for a in op.attributes["iterator_types"]]
    if sum("reduction" in s for s in iters) != 2 or plain_combine(op) is None:
        return False
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    try:
        win = [linear_terms(e) for e in maps[1].results]
    except Decline:
        return False
    red = {i for i, s in enumerate(iters) if "reduction" in s}
    return len(win) == 2 and all(len(t) == 1 and next(iter(t)) in red for t in win)


def global_reduction_dims(op) -> tuple[str, int, bool] | None:
    """(combine, rank of the input, whether it has a batch axis) of a global pool as IREE forms
    it: a generic reducing a channels-last [N, H*W, C] or [N, H, W, C] input (its first
    operand) over its pixel axes into [N, C] ([H*W, C] into [C] at batch 1, where IREE drops
    the unit batch; no window operand: the window is the whole image), None for anything
    else. Its body may compute on each element before the combine, reading more operands (a
    BatchNorm and activation IREE fused into the reduction): epilogue.pool_prologue reads that."""
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.operands) < 2:
        return None
    comb = combine_op(op)
    if comb is None:
        return None
    kind = COMBINES[comb.name]
    iters = ["r" if "reduction" in str(a) else "p" for a in op.attributes["iterator_types"]]
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    try:
        inp, out = ([linear_terms(e) for e in m.results] for m in (maps[0], maps[-1]))
    except Decline:
        return None
    single = lambda t: len(t) == 1 and list(t.values())[0] == 1 and -1 not in t
    batch = len(out) == 2
    if len(inp) not in ((3, 4) if batch else (2, 3)) or len(out) not in (1, 2) or not all(single(t) for t in inp + out):
        return None
    dims = [next(iter(t)) for t in inp]
    kept = [dims[0], dims[-1]] if batch else [dims[-1]]
    if [next(iter(t)) for t in out] != kept or any(iters[d] != "p" for d in kept):
        return None
    if sorted(dims[1 if batch else 0:-1]) != sorted(i for i, k in enumerate(iters) if k == "r"):
        return None
    return kind, len(inp), batch


def pool_geometry(op) -> tuple[str, Geometry]:
    """(combine, Geometry) of a pool: the input as a depthwise conv's (the channel dim in the
    group position), the window operand's [kh, kw] as the filter's [R, S] (f_pos), no filter
    channels. Decline for a window that is not a plain strided/dilated 2-D one."""
    kind = plain_combine(op)
    if kind is None:
        raise Decline("pooling body is not a max or a sum of the window")
    if op.name in NAMED_POOLS:
        iters, maps = _named_maps(op)
    else:
        iters = ["r" if "reduction" in str(a) else "p" for a in op.attributes["iterator_types"]]
        maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    inp, win, out = ([linear_terms(e) for e in m.results] for m in maps)
    single = lambda t: len(t) == 1 and list(t.values())[0] == 1 and -1 not in t
    if not all(single(t) for t in out + win):
        raise Decline("pooling output or window is not indexed by plain loop dimensions")
    out_d = [next(iter(t)) for t in out]
    win_d = [next(iter(t)) for t in win]
    c = out_d[-1]
    if inp[-1] != {c: 1} or iters[c] != "p":
        raise Decline("pooling is not channels-last (NHWC)")
    names, h, w = _window_roles(inp[:-1], iters, out_d[:-1], win_d)
    x_pos = {k: i for i, k in enumerate(names)}
    x_pos.setdefault("n", None)
    x_pos["g"] = len(names)
    x_pos["c"] = None
    f_pos = {"g": None, "f": None, "c": None, "r": None, "s": None}
    for key, role in (("r", h), ("s", w)):
        if role[2] is not None:
            f_pos[key] = win_d.index(role[2])
    return kind, Geometry((h[1], w[1]), (h[3], w[3]), x_pos, f_pos, "depthwise", 1, "hwf")


def identity_value(kind: str, value: float | None, dtype: str) -> bool:
    """Whether `value` (a pad's or the accumulator's fill) is the combine's identity: zero for
    a sum; for a max -inf, or the lowest finite value of the type (importers write that)."""
    if value is None:
        return False
    if kind == "sum":
        return value == 0.0
    lowest = {"f16": -65504.0, "bf16": -3.3895313892515355e38, "f32": -3.4028234663852886e38}.get(dtype)
    return value == -math.inf or (lowest is not None and value <= lowest)
