"""convc-match-conv: recognise conv dispatches and describe them as a ConvProblem.

Works on the module at IREE's `flow` phase. For every `flow.executable` whose function holds a
convolution, it attaches either `convc.problem` (a DictAttr of ConvProblem) or
`convc.decline` (the reason IREE's own codegen keeps it). Executables without a conv are left
alone. Accepted: `linalg.conv_2d_nhwc_fhwc`, named or generic, reading a dispatch operand
directly or through a zero `tensor.pad` of H/W, accumulating into a zero fill, followed by a
chain of elementwise generics and one store. Their bodies become EpilogueSteps: bias/residual
add or mul, relu and casts in the fixed encoding kernels and tuning caches were built with;
any other elementwise arith/math computation over the conv value, per-channel and
output-shaped tensors and float constants as a "program" step that re-creates its ops.
Constant tensors the dispatch inlines (dense or dense_resource) as per-channel or full operands
are hoisted out as extra kernel operands (`convc.constants`, passed by the splice pass); splat
ones become scalars.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .ir import ir, dict_attr, walk_ops
from .problem import ConvProblem, EpilogueOp, EpilogueStep, OperandLoad, INPUT_DTYPES, DTYPE_BYTES

from .attrs import CONSTANTS_ATTR, DECLINE_ATTR, PROBLEM_ATTR  # noqa: F401 (re-exported)


class Decline(Exception):
    """A conv we recognise but cannot take; the message is the user-facing reason."""


@dataclass
class _Operand:
    index: int      # dispatch operand index
    dtype: str


# ---------------------------------------------------------------------------------------
# small IR helpers

def _owner_op(v: ir.Value):
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def _dtype(t: ir.Type) -> str:
    s = str(t)
    if s not in DTYPE_BYTES:
        raise Decline(f"element type {s} not supported")
    return s


# The batch a dynamic-batch conv is planned for (images; rows of a GEMM-form 1x1 conv): kernels
# take the real one at run time, the schedule only needs a typical size.
BATCH_HINT = 8
ROWS_HINT = 8192


def _static_shape(t, batch: int | None = None) -> list[int]:
    """The shape of t; a dynamic leading size (the batch) reads as `batch` where given."""
    st = ir.ShapedType(t)
    shape = list(st.shape)
    if batch is not None and st.rank and st.is_dynamic_dim(0):
        shape[0] = batch
    if any(st.is_dynamic_dim(i) for i in range(st.rank) if i or batch is None):
        raise Decline("dynamic sizes other than the batch (the leading dimension) are not supported")
    return shape


def _tensor_text(t) -> str:
    """tensor<...> of a !iree_tensor_ext.dispatch.tensor<access:tensor<...>> type."""
    t = str(t)
    return t[t.index("tensor<", t.index(":")):-1]


def _terms(e: ir.AffineExpr) -> dict[int, int]:
    """Flattens a linear affine expression into {dim: coefficient} (-1: constant)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return {e.position: 1}
    if isinstance(e, ir.AffineConstantExpr):
        return {-1: e.value}
    if isinstance(e, ir.AffineAddExpr):
        out = dict(_terms(e.lhs))
        for k, v in _terms(e.rhs).items():
            out[k] = out.get(k, 0) + v
        return out
    if isinstance(e, ir.AffineMulExpr):
        lhs, rhs = _terms(e.lhs), _terms(e.rhs)
        if list(rhs) == [-1]:
            return {k: v * rhs[-1] for k, v in lhs.items()}
        if list(lhs) == [-1]:
            return {k: v * lhs[-1] for k, v in rhs.items()}
    raise Decline(f"non-linear indexing expression {e}")


def _float_const(v: ir.Value) -> float | None:
    op = _owner_op(v)
    if op is None or op.name != "arith.constant":
        return None
    a = op.attributes["value"]
    if isinstance(a, ir.FloatAttr):
        return a.value
    return None


# ---------------------------------------------------------------------------------------
# tracing operands back to dispatch arguments

class _Dispatch:
    """The executable function: which block argument is which dispatch operand/result.

    Tensor operands are numbered in order, skipping the index arguments (push constants). One
    index argument may be a dynamic batch: workload ordinal 0, the leading size of every
    dynamic tensor (`batch` is then the planning hint, `batch_word` its push-constant word)."""

    def __init__(self, func):
        self.func = func
        args = list(func.regions[0].blocks[0].arguments)
        self.inputs, self.outputs = {}, {}
        index_args = []
        for a in args:
            ts = str(a.type)
            if ts == "index":
                index_args.append(a)
            elif "writeonly:" in ts:
                self.outputs[len(self.inputs) + len(self.outputs)] = a
            elif "readonly:" in ts:
                self.inputs[len(self.inputs)] = a
            else:
                raise Decline("dispatch result is tied to an operand (read-write)")
        self.num_operands = len(self.inputs)
        self.num_constants = len(index_args)          # the splice passes each index as one i32
        self.batch = self.batch_word = None
        self.batch_value = None
        if index_args:
            self._find_batch(index_args)
        self.hoisted: list = []        # (value, elements attribute) of constants made kernel operands

    def _find_batch(self, index_args) -> None:
        if len(index_args) > 1:
            raise Decline("dispatch takes several runtime sizes: only a dynamic batch is supported")
        (a,) = index_args
        users = [u.owner for u in a.uses]
        if (len(users) != 1 or users[0].name != "iree_tensor_ext.dispatch.workload.ordinal"
                or ir.IntegerAttr(users[0].attributes["ordinal"]).value != 0):
            raise Decline("dispatch takes a runtime value that is not its workload")
        self.batch_value = users[0].results[0]
        self.batch_word = 0
        self.batch = BATCH_HINT
        for op in walk_ops(self.func, "flow.dispatch.tie_shape"):
            if ir.ShapedType(ir.Type.parse(_tensor_text(op.operands[0].type))).rank == 2:
                self.batch = ROWS_HINT          # a GEMM-form 1x1 conv: the rows are dynamic
            if list(op.operands)[1:] != [self.batch_value]:
                raise Decline("a dynamic size of the dispatch is not its batch")
            if not ir.ShapedType(ir.Type.parse(_tensor_text(op.operands[0].type))).is_dynamic_dim(0):
                raise Decline("a dynamic size of the dispatch is not a leading (batch) dimension")

    def shape(self, t) -> list[int]:
        return _static_shape(t, self.batch)

    def epilogue_source(self, v: ir.Value):
        """An epilogue input: an _Operand (a dispatch operand, or a constant tensor the dispatch
        inlines, dense or dense_resource, hoisted into a kernel operand), or the FloatAttr of a
        splat constant."""
        op = _owner_op(v)
        if op is None or op.name != "arith.constant":
            return self.operand_of(v)
        a = op.attributes["value"]
        dtype = _dtype(ir.ShapedType(a.type).element_type)
        if isinstance(a, ir.DenseElementsAttr) and a.is_splat:
            return a.get_splat_value()
        for i, (val, _) in enumerate(self.hoisted):
            if val == v:
                return _Operand(self.num_operands + i, dtype)
        self.hoisted.append((v, a))
        return _Operand(self.num_operands + len(self.hoisted) - 1, dtype)

    def operand_of(self, v: ir.Value, allow_strides: bool = False):
        """The dispatch operand a tensor is loaded from; with allow_strides, returns
        (operand, full shape, load strides) for a strided load of the whole operand."""
        op = _owner_op(v)
        if op is None or op.name != "iree_tensor_ext.dispatch.tensor.load":
            raise Decline(f"operand is produced by {op.name if op else 'a block argument'}, not loaded")
        src = op.operands[0]
        tie = _owner_op(src)
        if tie is not None and tie.name == "flow.dispatch.tie_shape":
            src = tie.operands[0]
        idx = None
        for i, a in self.inputs.items():
            if a == src:
                idx = i
        if idx is None:
            raise Decline("operand is not a dispatch input")
        loaded = self.shape(op.results[0].type)
        full = self.shape(ir.Type.parse(_tensor_text(src.type)))
        strides = [int(x) for x in op.attributes["static_strides"]]
        offsets = [int(x) for x in op.attributes["static_offsets"]]
        sizes = [int(x) for x in op.attributes["static_sizes"]]
        if (sizes and sizes[0] == ir.ShapedType.get_dynamic_size()
                and all(x == self.batch_value for x in list(op.operands)[1:])):
            sizes[0] = full[0]
        operand = _Operand(idx, _dtype(ir.ShapedType(op.results[0].type).element_type))
        if offsets != [0] * len(full) or len(sizes) != len(full):
            raise Decline("dispatch reads a slice of an operand")
        if allow_strides:
            return operand, full, strides
        if sizes != full or strides != [1] * len(full) or loaded != full:
            raise Decline("dispatch reads a slice of an operand")
        return operand


# ---------------------------------------------------------------------------------------
# the conv itself

@dataclass
class _Geometry:
    """Where each conv dimension sits in the (possibly rank-reduced) operand tensors.

    IREE folds unit dimensions (N=1, R=1, ...) before dispatch formation, so positions are
    found by role. A missing position means that dimension has size 1 (same memory layout).
    """

    stride: tuple[int, int]
    dilation: tuple[int, int]
    x_pos: dict          # n, h, w, c (, g) -> position in the input tensor (None if folded)
    f_pos: dict          # f, r, s, c (, g) -> position in the filter tensor
    kind: str = "dense"  # "dense" | "grouped" | "depthwise"
    out_channel_dims: int = 1   # trailing output dims that index the channel (2: [.., G, F/G])
    filter_layout: str = "fhwc"  # ConvProblem.filter_layout


# Named grouped/depthwise convs, as their generic forms (loops n, oh, ow, then the rest):
# the same analysis then reads both.
_NAMED_GROUPED = {
    "linalg.depthwise_conv_2d_nhwc_hwc": (
        "ppppr r", "(n, oh, ow, c, kh, kw)", "(n, oh * {sh} + kh * {dh}, ow * {sw} + kw * {dw}, c)",
        "(kh, kw, c)", "(n, oh, ow, c)"),
    "linalg.depthwise_conv_2d_nhwc_hwcm": (
        "pppppr r", "(n, oh, ow, c, m, kh, kw)", "(n, oh * {sh} + kh * {dh}, ow * {sw} + kw * {dw}, c)",
        "(kh, kw, c, m)", "(n, oh, ow, c, m)"),
    "linalg.conv_2d_nhwgc_gfhwc": (
        "pppppr r r", "(n, oh, ow, g, f, kh, kw, c)", "(n, oh * {sh} + kh * {dh}, ow * {sw} + kw * {dw}, g, c)",
        "(g, f, kh, kw, c)", "(n, oh, ow, g, f)"),
}


def _named_grouped_maps(op):
    iters, dims, x, f, o = _NAMED_GROUPED[op.name]
    st = [int(v) for v in op.attributes["strides"]]
    dl = [int(v) for v in op.attributes["dilations"]]
    x = x.format(sh=st[0], sw=st[1], dh=dl[0], dw=dl[1])
    maps = [ir.AffineMap(ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{dims} -> {r}>")).value)
            for r in (x, f, o)]
    return ["r" if c == "r" else "p" for c in iters.replace(" ", "")], maps


def _conv_geometry(op) -> _Geometry:
    """Reads a named or generic nhwc_fhwc conv; Decline otherwise."""
    if op.name == "linalg.conv_2d_nhwc_fhwc":
        st = [int(x) for x in op.attributes["strides"]]
        dl = [int(x) for x in op.attributes["dilations"]]
        return _Geometry((st[0], st[1]), (dl[0], dl[1]), dict(n=0, h=1, w=2, c=3),
                         dict(f=0, r=1, s=2, c=3))
    if op.name in _NAMED_GROUPED:
        iters, maps = _named_grouped_maps(op)
    else:
        iters = ["r" if "reduction" in str(a) else "p" for a in op.attributes["iterator_types"]]
        maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if len(maps) != 3:
        raise Decline("convolution is not a two-operand linalg op")
    inp = [_terms(e) for e in maps[0].results]
    fil = [_terms(e) for e in maps[1].results]
    out = [_terms(e) for e in maps[2].results]
    shared = set.intersection(*[{d for t in ts for d in t if d >= 0} for ts in (inp, fil, out)])
    if any(iters[d] == "p" for d in shared):
        return _grouped_geometry(iters, inp, fil, out, [d for d in shared if iters[d] == "p"])
    single = lambda t: len(t) == 1 and list(t.values())[0] == 1 and -1 not in t
    if not all(single(t) for t in out + fil):
        raise Decline("filter or output is not indexed by plain loop dimensions")
    out_d = [next(iter(t)) for t in out]
    fil_d = [next(iter(t)) for t in fil]
    if any(iters[d] != "p" for d in out_d) or len(out_d) < 2:
        raise Decline("output is not indexed by parallel loops")
    f_dim, c_dim = fil_d[0], fil_d[-1]
    # F = 1: IREE folded the output channel away (filter [R, S, C], output [N, Ho, Wo])
    one_f = iters[f_dim] == "r" and f_dim not in out_d and c_dim != f_dim
    if (iters[f_dim] != "p" and not one_f) or iters[c_dim] != "r":
        raise Decline("filter layout is not FHWC (only linalg.conv_2d_nhwc_fhwc is taken)")
    if not one_f and out_d[-1] != f_dim:
        raise Decline("output layout is not NHWF (channels last)")
    if inp[-1] != {c_dim: 1} or iters[c_dim] != "r":
        raise Decline("input layout is not NHWC, or filter layout is not FHWC "
                      "(only linalg.conv_2d_nhwc_fhwc is taken)")
    window = fil_d[:-1] if one_f else fil_d[1:-1]
    if any(iters[d] != "r" for d in window) or len(window) > 2:
        raise Decline("filter layout is not FHWC (only linalg.conv_2d_nhwc_fhwc is taken)")
    names, h, w = _window_roles(inp[:-1], iters, out_d if one_f else out_d[:-1], window)
    x_pos = {k: i for i, k in enumerate(names)}
    x_pos["c"] = len(names)
    x_pos.setdefault("n", None)
    f_pos = {"f": None if one_f else 0, "c": len(fil_d) - 1, "r": None, "s": None}
    for key, role in (("r", h), ("s", w)):
        if role[2] is not None:
            f_pos[key] = fil_d.index(role[2])
    return _Geometry((h[1], w[1]), (h[3], w[3]), x_pos, f_pos, out_channel_dims=0 if one_f else 1)


def _window_roles(inp, iters, spatial_out, window):
    """The input's pixel dims (all but its channel dims): a batch dim (a plain output dim with
    no window) and two spatial windows stride*p + dilation*w. Returns (names, h, w) with
    h, w = (output dim, stride, window dim or None, dilation)."""
    roles = []
    for t in inp:
        if -1 in t:
            raise Decline("input window has a constant offset")
        ps = [d for d in t if iters[d] == "p"]
        ws = [d for d in t if iters[d] == "r"]
        if len(ps) != 1 or len(ws) > 1 or ps[0] not in spatial_out:
            raise Decline("input window is not a plain strided/dilated 2-D window")
        roles.append((ps[0], t[ps[0]], ws[0] if ws else None, t[ws[0]] if ws else 1))
    if [r[0] for r in roles] != list(spatial_out):
        raise Decline("input and output pixel dimensions differ in order")
    if len(roles) == 3:
        (nb, nst, nw, _), h, w = roles
        if nst != 1 or nw is not None:
            raise Decline("batch dimension is strided or windowed")
        names = ["n", "h", "w"]
    elif len(roles) == 2:
        h, w = roles
        names = ["h", "w"]
    else:
        raise Decline("convolution is not 2-D")
    used_windows = [r[2] for r in (h, w) if r[2] is not None]
    if sorted(used_windows) != sorted(window):
        raise Decline("filter window dimensions do not match the input window")
    return names, h, w


def _grouped_geometry(iters, inp, fil, out, groups) -> _Geometry:
    """A grouped or depthwise conv: one parallel loop g indexes input, filter and output.
    Channels are group-major and last: input [.., G, C/G] (or [.., C] for depthwise, C = G),
    output [.., G, F/G] (or [.., G] when F = G); filter [G, F/G, R, S, C/G], [R, S, C/G, G, F/G]
    or, depthwise, [R, S, G, F/G]. Unit dimensions IREE folded away are simply absent."""
    if len(groups) != 1:
        raise Decline("convolution has several group dimensions")
    g = groups[0]
    single = lambda t: len(t) == 1 and list(t.values())[0] == 1 and -1 not in t
    if not all(single(t) for t in out + fil):
        raise Decline("grouped conv: filter or output is not indexed by plain loop dimensions")
    out_d = [next(iter(t)) for t in out]
    fil_d = [next(iter(t)) for t in fil]
    in_dims = {d for t in inp for d in t}
    if out_d[-1] == g:
        f, pix_out = None, out_d[:-1]
    elif len(out_d) >= 2 and out_d[-2] == g and iters[out_d[-1]] == "p" and out_d[-1] not in in_dims:
        f, pix_out = out_d[-1], out_d[:-2]
    else:
        raise Decline("grouped conv: output channels are not group-major and last")
    if inp[-1] == {g: 1}:
        c, x_pix = None, inp[:-1]
    elif (len(inp) >= 2 and inp[-2] == {g: 1} and single(inp[-1])
          and iters[next(iter(inp[-1]))] == "r" and next(iter(inp[-1])) in fil_d):
        c, x_pix = next(iter(inp[-1])), inp[:-2]
    else:
        raise Decline("grouped conv: input channels are not group-major and last")
    window = [d for d in fil_d if iters[d] == "r" and d != c]
    chans = [f] if f is not None else []
    if c is None:
        kind, layout, want = "depthwise", "hwf", [window + [g] + chans]
    else:
        kind, layout, want = "grouped", None, [[g] + chans + window + [c], window + [c, g] + chans]
    if fil_d not in want:
        raise Decline("grouped conv: filter layout is not [G, F/G, R, S, C/G], [R, S, C/G, G, F/G] or, "
                      "depthwise, [R, S, C, M]")
    layout = layout or ("fhwc" if fil_d == want[0] else "hwcf")
    names, h, w = _window_roles(x_pix, iters, pix_out, window)
    x_pos = {k: i for i, k in enumerate(names)}
    x_pos.setdefault("n", None)
    x_pos["g"] = len(names)
    x_pos["c"] = len(names) + 1 if c is not None else None
    f_pos = {"g": fil_d.index(g), "f": fil_d.index(f) if f is not None else None,
             "c": fil_d.index(c) if c is not None else None, "r": None, "s": None}
    for key, role in (("r", h), ("s", w)):
        if role[2] is not None:
            f_pos[key] = fil_d.index(role[2])
    return _Geometry((h[1], w[1]), (h[3], w[3]), x_pos, f_pos, kind, 1 if f is None else 2, layout)


def _check_conv_body(op) -> None:
    if op.name != "linalg.generic":
        return
    names = [o.operation.name for o in op.regions[0].blocks[0].operations]
    if "arith.muli" in names:
        dtype = ir.ShapedType(op.operands[0].type).element_type
        raise Decline(f"{dtype} convolution: the input type is not supported (f16, bf16 or f32 convs only)")
    allowed = {"arith.extf", "arith.mulf", "arith.addf", "linalg.yield"}
    bad = [n for n in names if n not in allowed]
    if bad or names.count("arith.mulf") != 1 or names.count("arith.addf") != 1:
        raise Decline(f"convolution body is not a multiply-accumulate ({', '.join(bad) or 'shape'})")


def _is_conv(op) -> bool:
    if op.name.startswith("linalg.conv") or op.name.startswith("linalg.depthwise_conv"):
        return True
    if op.name != "linalg.generic":
        return False
    iters = [str(a) for a in op.attributes["iterator_types"]]
    if not any("reduction" in s for s in iters):
        return False
    body = [o.operation.name for o in op.regions[0].blocks[0].operations]
    if "arith.mulf" not in body and "arith.muli" not in body:   # pooling windows multiply nothing
        return False
    for a in op.attributes["indexing_maps"]:
        for e in ir.AffineMapAttr(a).value.results:
            try:
                t = {k: c for k, c in _terms(e).items() if k >= 0}
            except Decline:
                continue
            if len(t) >= 2 or any(c > 1 for c in t.values()):   # a window, or a strided 1x1 grid
                return True
    return False


def _contraction(op):
    """(P, terms of each operand map) of a generic with P parallel loops and one reduction
    loop, the last, over two inputs and one output; (P, None) for anything else."""
    kinds = ["r" if "reduction" in str(a) else "p" for a in op.attributes["iterator_types"]]
    P = len(kinds) - 1
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if kinds.count("r") != 1 or kinds[-1] != "r" or len(maps) != 3:
        return P, None
    try:
        return P, [[_terms(e) for e in m.results] for m in maps]
    except Decline:
        return P, None


def _is_gemm_1x1(op) -> bool:
    """A contraction out[m..., f] += in[m..., c] * filter[f, c]: IREE's form of a 1x1 conv."""
    if op.name not in ("linalg.generic", "linalg.matmul", "linalg.matmul_transpose_b"):
        return False
    if op.name != "linalg.generic":
        return op.name == "linalg.matmul_transpose_b"
    P, res = _contraction(op)
    if res is None or P + 1 not in (3, 4, 5):
        return False
    r = P
    return (res[2] == [{i: 1} for i in range(P)] and res[1] == [{P - 1: 1}, {r: 1}]
            and res[0] == [{i: 1} for i in range(P - 1)] + [{r: 1}])


def _is_grouped_gemm_1x1(op) -> bool:
    """out[m..., g, f] += in[m..., g, c] * filter[g, f, c]: IREE's form of a grouped 1x1 conv
    (the same form as a batched matmul with a transposed B; signatures tell them apart)."""
    if op.name != "linalg.generic":
        return False
    P, res = _contraction(op)
    if res is None or P < 3:
        return False
    g, f, c = P - 2, P - 1, P
    return (res[2] == [{i: 1} for i in range(P)] and res[1] in ([{g: 1}, {f: 1}, {c: 1}], [{c: 1}, {g: 1}, {f: 1}])
            and res[0] == [{i: 1} for i in range(P - 2)] + [{g: 1}, {c: 1}])


def _grouped_gemm_hwcf(op) -> bool:
    """Whether a grouped 1x1 contraction's filter is [C/G, G, F/G] (else [G, F/G, C/G])."""
    return _terms(ir.AffineMapAttr(op.attributes["indexing_maps"][1]).value.results[0]) != {len(
        op.attributes["iterator_types"]) - 3: 1}


def grouped_1x1_signature(op) -> tuple | None:
    """("grouped", M, G, C/G, F/G) of a static grouped 1x1 conv of the input model (a named
    conv_2d_nhwgc_gfhwc or a grouped generic), matched against IREE's contraction form of it;
    None for anything else."""
    if op.name not in ("linalg.generic", "linalg.conv_2d_nhwgc_gfhwc") or not _is_conv(op):
        return None
    try:
        g = _conv_geometry(op)
    except Decline:
        return None
    xs, fs, out = (ir.ShapedType(v.type) for v in list(op.operands)[:3])
    if g.kind != "grouped" or not (xs.has_static_shape and fs.has_static_shape and out.has_static_shape):
        return None
    size = lambda shape, k: shape[g.f_pos[k]] if g.f_pos[k] is not None else 1
    if size(fs.shape, "r") != 1 or size(fs.shape, "s") != 1:
        return None
    m = 1
    for v in out.shape[:len(out.shape) - 2]:
        m *= v
    return ("grouped", m, size(fs.shape, "g"), size(fs.shape, "c"), size(fs.shape, "f"))


def _grouped_gemm_signature(op) -> tuple:
    xs = _static_shape(op.operands[0].type)
    fs = _static_shape(op.operands[1].type)
    m = 1
    for v in xs[:-2]:
        m *= v
    return ("grouped", m, xs[-2], xs[-1], fs[2] if _grouped_gemm_hwcf(op) else fs[1])


def _match_gemm_1x1(d: "_Dispatch", op):
    """(N, H, W, C, F, stride, input operand, filter operand) of a GEMM-form 1x1 conv."""
    operand, full, strides = d.operand_of(op.operands[0], allow_strides=True)
    f_op = d.operand_of(op.operands[1])
    xs = d.shape(op.operands[0].type)
    fs = d.shape(op.operands[1].type)
    F, C = fs
    if len(xs) == 2:
        if strides != [1, 1] or full != xs:
            raise Decline("strided GEMM operand")
        return (1, xs[0], 1, C, F, (1, 1), operand, f_op)
    if len(xs) == 3:                  # (N, H*W, C): IREE collapsed the pixels of each image
        if strides != [1, 1, 1] or full != xs:
            raise Decline("strided GEMM operand")
        return (xs[0], xs[1], 1, C, F, (1, 1), operand, f_op)
    if strides[0] != 1 or strides[3] != 1:
        raise Decline("strided batch or channel access")
    N, H, W, _ = full
    sh, sw = strides[1], strides[2]
    if xs != [N, (H - 1) // sh + 1, (W - 1) // sw + 1, C]:
        raise Decline("1x1 conv reads a window that is not a plain strided grid")
    return (N, H, W, C, F, (sh, sw), operand, f_op)


def _trace_input(d: _Dispatch, v: ir.Value, g: _Geometry):
    """Returns (operand, pad, shape, stride) for the conv input, looking through a zero
    tensor.pad: shape is the (padded) input the conv reads, stride its strides. Where IREE
    reads a view of the operand (a one-tap axis strided by the load, or rows past the last
    window cut off), the conv is taken on the whole operand: such an axis takes the load's
    stride, and the cut rows are ones no window reaches."""
    op = _owner_op(v)
    pad = (0, 0, 0, 0)
    if op is not None and op.name == "tensor.pad":
        low = [int(x) for x in op.attributes["static_low"]]
        high = [int(x) for x in op.attributes["static_high"]]
        if any(x < 0 for x in low + high):
            raise Decline("padding amounts are not static")
        spatial = {g.x_pos["h"], g.x_pos["w"]}
        if any((low[i] or high[i]) for i in range(len(low)) if i not in spatial):
            raise Decline("padding of the batch or channel dimension")
        body = [o.operation for o in op.regions[0].blocks[0].operations]
        yv = body[-1].operands[0]
        if _float_const(yv) != 0.0:
            raise Decline("padding value is not zero")
        hp, wp = g.x_pos["h"], g.x_pos["w"]
        pad = (low[hp], low[wp], high[hp], high[wp])
        return d.operand_of(op.operands[0]), pad, d.shape(v.type), g.stride
    loaded = d.shape(v.type)
    operand, full, strides = d.operand_of(v, allow_strides=True)
    stride = list(g.stride)
    spatial = {}
    for axis, key, tap in ((0, "h", "r"), (1, "w", "s")):
        if g.x_pos[key] is not None:
            spatial[g.x_pos[key]] = (axis, g.f_pos[tap] is None)
    for pos, (st, size, whole) in enumerate(zip(strides, loaded, full)):
        if pos not in spatial:
            if st != 1 or size != whole:
                raise Decline("dispatch reads a slice of the input's batch or channels")
            continue
        axis, one_tap = spatial[pos]
        if st != 1:
            if not one_tap or g.stride[axis] != 1:
                raise Decline("dispatch reads a strided view of the input along a windowed axis")
            stride[axis] = st
    return operand, pad, full, tuple(stride)


# IREE's multi-use fusion puts a conv's epilogue and a value computed from it into one dispatch
# (LRN squares the relu it also divides): the driver then builds the flow phase without it
SEVERAL_RESULTS = "dispatch has several results"


def _init_steps(v: ir.Value, conv_t: str) -> list[EpilogueStep]:
    """The conv accumulates into a fill. A zero fill is the kernel's own accumulator; a
    nonzero constant (IREE folds a constant bias into the fill) becomes a first epilogue step
    that adds it, in the conv's result type."""
    op = _owner_op(v)
    c = _float_const(op.operands[0]) if op is not None and op.name == "linalg.fill" else None
    if c is None:
        raise Decline("convolution does not accumulate into a constant fill (it reads an earlier result)")
    if c == 0.0:
        return []
    attr = _owner_op(op.operands[0]).attributes["value"]
    return [EpilogueStep("program", conv_t, program=(
        EpilogueOp("arith.constant", conv_t, (), (("value", str(attr)),)),
        EpilogueOp("arith.addf", conv_t, (0, 1), ())))]


# ---------------------------------------------------------------------------------------
# epilogue chain

def _interpret_elementwise(d: _Dispatch, gen, chain_args: list[int], cur_type: str):
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
    if [_terms(e) for e in maps[-1].results] != ident:
        raise Decline("epilogue output is not written elementwise")
    sources = []
    for i, v in enumerate(ins):
        res = [_terms(e) for e in maps[i].results]
        if i in chain_args:
            if res != ident:
                raise Decline("epilogue reads the conv result transposed or broadcast")
            sources.append("chain")
            continue
        k = getattr(d, "out_channel_dims", 1)
        bcast = "full" if res == ident else "channel" if res == [{rank - k + i: 1} for i in range(k)] else None
        src = d.epilogue_source(v)
        if isinstance(src, ir.Attribute):          # a splat: the same scalar at every element
            sources.append(src)
        elif bcast is None:
            raise Decline("epilogue operand has an unsupported broadcast")
        else:
            sources.append(OperandLoad(src.index, bcast, src.dtype))
    block = gen.regions[0].blocks[0]
    out_t = _dtype(ir.ShapedType(gen.results[0].type).element_type)
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
            vals[o.results[0]] = ("const", _float_const(o.results[0]))
            continue
        args = [vals.get(x) for x in o.operands]
        args = [a if a is not None or _float_const(x) is None else ("const", _float_const(x))
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
            raise Decline(f"epilogue op {n} computes on {t}: only f16/bf16/f32 values "
                          "(and comparison results) are fused")


def _op_attrs(o) -> tuple:
    """(name, MLIR text) of an op's attributes; the default fastmath flags are left out."""
    attrs = o.attributes
    return tuple(sorted((attrs[i].name, str(attrs[i].attr)) for i in range(len(attrs))
                        if str(attrs[i].attr) != "#arith.fastmath<none>"))


def _program_steps(block, sources, out_t: str) -> list[EpilogueStep]:
    """The body as one program step: its ops in order, over the conv value, the loaded
    operands and float constants (from splat tensors, the body or the dispatch function)."""
    nodes: list = [None]                  # 0: the conv value; then OperandLoads and EpilogueOps
    refs: dict = {}

    def add(node) -> int:
        nodes.append(node)
        return len(nodes) - 1

    def const(attr) -> int:
        return add(EpilogueOp("arith.constant", _dtype(attr.type), (), (("value", str(attr)),)))

    for arg, src in zip(block.arguments, sources):
        refs[arg] = 0 if isinstance(src, str) else add(src) if isinstance(src, OperandLoad) else const(src)
    out_arg = block.arguments[len(sources)]
    for o in block.operations:
        o = o.operation
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
    op = _owner_op(v)
    if op is None or op.name != "arith.constant" or not isinstance(op.attributes["value"], ir.FloatAttr):
        raise Decline(f"epilogue op {user} uses a value from outside its body that is not a float constant")
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


def _chain_user(v: ir.Value):
    """The op using v and at which operands (an epilogue generic may read the conv twice)."""
    uses = [(u.owner.operation if hasattr(u.owner, "operation") else u.owner, u.operand_number) for u in v.uses]
    if not uses or any(op != uses[0][0] for op, _ in uses):
        raise Decline("an intermediate result has several users")
    return uses[0][0], [i for _, i in uses]


# ---------------------------------------------------------------------------------------

def _gemm_signature(op) -> tuple[int, int, int]:
    """(M, K, F) of a GEMM-form 1x1 conv; matched against the 1x1 convs of the input model."""
    xs = list(ir.ShapedType(op.operands[0].type).shape)
    fs = _static_shape(op.operands[1].type)
    if ir.ShapedType(op.operands[0].type).is_dynamic_dim(0):
        return (None, xs[-1], fs[0])            # a dynamic batch (1x1 convs of any batch match)
    m = 1
    for d in xs[:-1]:
        m *= d
    return (m, xs[-1], fs[0])


def match_function(func, allowed_gemms=None) -> tuple[ConvProblem, list] | None:
    """Returns (the ConvProblem of a dispatch function, the elements attributes of the
    constants hoisted into kernel operands), None if it has no conv; raises Decline.

    IREE rewrites 1x1 convs into GEMM-form contractions before dispatch formation. Those are
    taken as 1x1 convs; `allowed_gemms`, if given, restricts them to the (M, K, F) signatures
    of 1x1 convs present in the input model, so that genuine matmuls stay with IREE."""
    convs = [op for op in walk_ops(func) if _is_conv(op)]
    gemms = [op for op in walk_ops(func) if _is_gemm_1x1(op)] if not convs else []
    if allowed_gemms is not None:
        gemms = [g for g in gemms if _gemm_signature(g) in allowed_gemms]
    grouped_gemms = [op for op in walk_ops(func) if _is_grouped_gemm_1x1(op)] if not convs else []
    if allowed_gemms is not None:
        grouped_gemms = [g for g in grouped_gemms if _grouped_gemm_signature(g) in allowed_gemms]
    if grouped_gemms and not gemms:
        convs = grouped_gemms
    if not convs and not gemms:
        return None
    if len(convs) + len(gemms) > 1:
        raise Decline("dispatch holds several convolutions")
    conv = (convs or gemms)[0]
    if conv.name not in ("linalg.conv_2d_nhwc_fhwc", "linalg.generic", "linalg.matmul_transpose_b", *_NAMED_GROUPED):
        raise Decline(f"{conv.name} is not linalg.conv_2d_nhwc_fhwc (or a grouped/depthwise NHWC form)")
    d = _Dispatch(func)
    if len(d.outputs) != 1:
        raise Decline(SEVERAL_RESULTS)
    _check_conv_body(conv)
    if convs and conv in grouped_gemms:
        operand, full, _ = d.operand_of(conv.operands[0], allow_strides=True)
        if full != d.shape(conv.operands[0].type):
            raise Decline("grouped 1x1 conv reads a strided window of its input")
        _, rows, groups, C, F = _grouped_gemm_signature(conv)
        N, H, W, R, S = 1, rows, 1, 1, 1
        C, F = groups * C, groups * F
        x_op, f_op = operand, d.operand_of(conv.operands[1])
        stride, dilation, pad = (1, 1), (1, 1), (0, 0, 0, 0)
        g = _Geometry((1, 1), (1, 1), {}, {}, "grouped", 2, "hwcf" if _grouped_gemm_hwcf(conv) else "fhwc")
    elif convs:
        g = _conv_geometry(conv)
        stride, dilation = g.stride, g.dilation
        x, filt = conv.operands[0], conv.operands[1]
        x_op, pad, xs, stride = _trace_input(d, x, g)      # xs: padded shape when padded
        f_op = d.operand_of(filt)
        fs = d.shape(filt.type)
        size = lambda shape, pos, k: shape[pos[k]] if pos[k] is not None else 1
        N, C = size(xs, g.x_pos, "n"), size(xs, g.x_pos, "c")
        H = size(xs, g.x_pos, "h") - pad[0] - pad[2]
        W = size(xs, g.x_pos, "w") - pad[1] - pad[3]
        F, R, S = size(fs, g.f_pos, "f"), size(fs, g.f_pos, "r"), size(fs, g.f_pos, "s")
        if size(fs, g.f_pos, "c") != C:
            raise Decline("filter and input channel counts differ")
        groups = 1
        if g.kind != "dense":
            groups = size(xs, g.x_pos, "g")
            if size(fs, g.f_pos, "g") != groups:
                raise Decline("filter and input group counts differ")
            C, F = groups * C, groups * F
    else:
        N, H, W, C, F, stride, x_op, f_op = _match_gemm_1x1(d, conv)
        R = S = 1
        groups = 1
        g = None
        dilation, pad = (1, 1), (0, 0, 0, 0)
        if d.batch == ROWS_HINT:
            N, H = H, 1                       # dynamic rows: the batch is the row count
    if x_op.dtype not in INPUT_DTYPES or f_op.dtype != x_op.dtype:
        raise Decline(f"input/filter types {x_op.dtype}/{f_op.dtype} not supported (f16, bf16 or f32, both the same)")
    conv_t = _dtype(ir.ShapedType(conv.results[0].type).element_type)
    # A 16-bit conv result (a model demoted to f16 by --precision f16 accumulates in f16) is
    # computed with f32 accumulation and rounded to its type before the epilogue: the same
    # values, with a more accurate sum.
    if conv_t != "f32" and conv_t != x_op.dtype:
        raise Decline(f"accumulation in {conv_t} for {x_op.dtype} inputs (f32, or the input type, required)")
    acc_t = "f32"

    # walk the elementwise chain to the store
    steps: list[EpilogueStep] = [] if conv_t == acc_t else [EpilogueStep("cast", conv_t)]
    steps += _init_steps(conv.operands[2], conv_t)
    cur_t = conv_t
    d.out_channel_dims = g.out_channel_dims if g is not None else 1
    v = conv.results[0]
    while True:
        user, idxs = _chain_user(v)
        if user.name == "iree_tensor_ext.dispatch.tensor.store":
            break
        if user.name != "linalg.generic":
            raise Decline(f"conv result feeds {user.name}, not an elementwise epilogue")
        if max(idxs) >= len(user.operands) - len(user.results):
            raise Decline("conv result is used as an epilogue's output buffer")
        more, cur_t = _interpret_elementwise(d, user, idxs, cur_t)
        steps += more
        v = user.results[0]
    out_shape = d.shape(v.type)
    try:
        prob = ConvProblem(N=N, H=H, W=W, C=C, F=F, R=R, S=S, stride=stride, dilation=dilation,
                           pad=pad, dtype=x_op.dtype, acc_dtype=acc_t, out_dtype=cur_t,
                           epilogue=tuple(steps), input=x_op.index, filter=f_op.index,
                           num_operands=d.num_operands + len(d.hoisted),
                           gemm_form=(not convs or conv in grouped_gemms) and W == 1 and (N == 1 or d.batch == ROWS_HINT),
                           batch_constant=-1 if d.batch is None else d.batch_word,
                           num_constants=d.num_constants, groups=groups,
                           filter_layout=g.filter_layout if g is not None else "fhwc")
    except ValueError as e:
        raise Decline(str(e)) from None
    n_out = 1
    for x in out_shape:
        n_out *= x
    channels = 1
    for x in out_shape[len(out_shape) - d.out_channel_dims:] if d.out_channel_dims else []:
        channels *= x
    if channels != prob.F or n_out != prob.gemm_m * prob.F:
        raise Decline(f"output shape {out_shape} does not match the conv")
    return prob, [a for _, a in d.hoisted]


def executable_function(exe):
    """The func.func inside a flow.executable's inner module."""
    for op in walk_ops(exe, "func.func"):
        return op
    return None


def match_conv(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-match-conv: annotate flow.executables with convc.problem / convc.decline."""
    with module.context:
        _match_all(module, getattr(options, "gemm_signatures", None))
    return module


def _match_all(module: ir.Module, allowed_gemms) -> None:
    for exe in walk_ops(module.operation, "flow.executable"):
        func = executable_function(exe)
        if func is None:
            continue
        try:
            matched = match_function(func, allowed_gemms)
        except Decline as e:
            exe.attributes[DECLINE_ATTR] = ir.StringAttr.get(str(e))
            continue
        if matched is not None:
            prob, constants = matched
            exe.attributes[PROBLEM_ATTR] = dict_attr(prob.to_dict())
            if constants:
                exe.attributes[CONSTANTS_ATTR] = ir.ArrayAttr.get(constants)
