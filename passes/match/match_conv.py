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

from ..attrs import CONSTANTS_ATTR, DECLINE_ATTR, PROBLEM_ATTR  # noqa: F401 (re-exported)
from ..ir import ir, dict_attr, walk_ops
from .contractions import grouped_1x1_signature  # noqa: F401 (re-exported: the driver's signatures)
from .contractions import (gemm_signature, grouped_gemm_hwcf, grouped_gemm_signature, is_gemm_1x1,
                                    is_grouped_gemm_1x1, match_gemm_1x1)
from .conv_forms import NAMED_GROUPED, Geometry, check_conv_body, conv_geometry, is_conv
from .dispatch import Dispatch, trace_input
from .epilogue import chain_user, init_steps, interpret_elementwise, pool_prologue, row_program
from .ir_reading import ROWS_HINT, Decline, element_dtype, float_const, owner_op, static_shape
from .map_forms import map_root, row_reduction
from .pad_dispatch import symbol_name
from .pool_forms import global_reduction_dims, identity_value, is_pool, plain_combine, pool_geometry
from ..problem import ConvProblem, EpilogueStep, FP8_INPUT_DTYPES, INPUT_DTYPES, INT_INPUT_DTYPES, OperandLoad


# the start of a pooling window's and an elementwise map's decline reasons (reports tell them
# from a conv's)
POOL_DECLINE = "pooling window: "
MAP_DECLINE = "elementwise map: "

# IREE's multi-use fusion puts a conv's epilogue and a value computed from it into one dispatch
# (LRN squares the relu it also divides): the driver then builds the flow phase without it
SEVERAL_RESULTS = "dispatch has several results"


def match_function(func, allowed_gemms=None, at_load: bool = False) -> tuple[ConvProblem, list] | None:
    """Returns (the ConvProblem of a dispatch function, the elements attributes of the
    constants hoisted into kernel operands), None if it has no conv; raises Decline.
    at_load: the dispatch runs only in the module's initializers (a weight's conversion, once
    per load): its flat elementwise maps stay IREE's (nothing to gain per inference).

    IREE rewrites 1x1 convs into GEMM-form contractions before dispatch formation. Those are
    taken as 1x1 convs; `allowed_gemms`, if given, restricts them to the (M, K, F) signatures
    of 1x1 convs present in the input model, so that genuine matmuls stay with IREE."""
    convs = [op for op in walk_ops(func) if is_conv(op)]
    gemms = [op for op in walk_ops(func) if is_gemm_1x1(op)] if not convs else []
    if allowed_gemms is not None:
        gemms = [g for g in gemms if gemm_signature(g) in allowed_gemms]
    grouped_gemms = [op for op in walk_ops(func) if is_grouped_gemm_1x1(op)] if not convs else []
    if allowed_gemms is not None:
        grouped_gemms = [g for g in grouped_gemms if grouped_gemm_signature(g) in allowed_gemms]
    if grouped_gemms and not gemms:
        convs = grouped_gemms
    if not convs and not gemms:
        pools = [op for op in walk_ops(func) if is_pool(op) or global_reduction_dims(op)]
        if len(pools) > 1:
            raise Decline(f"{POOL_DECLINE}dispatch holds several pooling windows")
        if not pools:
            root = map_root(func)
            if root is None or (at_load and ir.ShapedType(root[0].results[0].type).rank == 1):
                return None
            try:
                return _match_map(func, *root)
            except Decline as e:
                raise Decline(f"{MAP_DECLINE}{e}") from None
        try:
            return (_match_global_pool if global_reduction_dims(pools[0]) else _match_pool)(func, pools[0])
        except Decline as e:
            raise Decline(f"{POOL_DECLINE}{e}") from None
    if len(convs) + len(gemms) > 1:
        raise Decline("dispatch holds several convolutions")
    conv = (convs or gemms)[0]
    if conv.name not in ("linalg.conv_2d_nhwc_fhwc", "linalg.generic", "linalg.matmul_transpose_b", *NAMED_GROUPED):
        raise Decline(f"{conv.name} is not linalg.conv_2d_nhwc_fhwc (or a grouped/depthwise NHWC form)")
    d = Dispatch(func)
    if len(d.outputs) != 1:
        raise Decline(SEVERAL_RESULTS)
    check_conv_body(conv)
    if convs and conv in grouped_gemms:
        operand, full, _ = d.operand_of(conv.operands[0], allow_strides=True)
        if full != d.shape(conv.operands[0].type):
            raise Decline("grouped 1x1 conv reads a strided window of its input")
        _, rows, groups, C, F = grouped_gemm_signature(conv)
        N, H, W, R, S = 1, rows, 1, 1, 1
        C, F = groups * C, groups * F
        x_op, f_op = operand, d.operand_of(conv.operands[1])
        stride, dilation, pad = (1, 1), (1, 1), (0, 0, 0, 0)
        g = Geometry((1, 1), (1, 1), {}, {}, "grouped", 2, "hwcf" if grouped_gemm_hwcf(conv) else "fhwc")
    elif convs:
        g = conv_geometry(conv)
        stride, dilation = g.stride, g.dilation
        x, filt = conv.operands[0], conv.operands[1]
        x_op, pad, xs, stride = trace_input(d, x, g)      # xs: padded shape when padded
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
        N, H, W, C, F, stride, x_op, f_op = match_gemm_1x1(d, conv)
        R = S = 1
        groups = 1
        g = None
        dilation, pad = (1, 1), (0, 0, 0, 0)
        if d.batch == ROWS_HINT:
            N, H = H, 1                       # dynamic rows: the batch is the row count
    h_word = w_word = -1
    if d.batch is not None and convs and g.x_pos["n"] is None and g.kind == "dense":
        raise Decline("a runtime size of the dispatch is not the conv's batch")
    if d.spatial is not None:
        if not convs or conv in grouped_gemms:
            raise Decline("runtime image sizes: convs with a window only")
        h_word, w_word = _spatial_words(d, x_op, g)
    if x_op.dtype not in INPUT_DTYPES + INT_INPUT_DTYPES + FP8_INPUT_DTYPES or f_op.dtype != x_op.dtype:
        raise Decline(f"input/filter types {x_op.dtype}/{f_op.dtype} not supported (f16, bf16, f32 or i8, both the same)")
    if x_op.dtype in FP8_INPUT_DTYPES and groups > 1:
        raise Decline(f"grouped {x_op.dtype} conv: fp8 convs take the dense kernels only")
    if x_op.dtype in INT_INPUT_DTYPES and groups > 1:
        raise Decline(f"grouped {x_op.dtype} conv: integer convs take the dense kernels only")
    return _problem(d, conv, conv.operands[2], dict(
        N=N, H=H, W=W, C=C, F=F, R=R, S=S, stride=stride, dilation=dilation, pad=pad, dtype=x_op.dtype,
        input=x_op.index, filter=f_op.index, groups=groups,
        gemm_form=(not convs or conv in grouped_gemms) and W == 1 and (N == 1 or d.batch == ROWS_HINT),
        filter_layout=g.filter_layout if g is not None else "fhwc", h_constant=h_word, w_constant=w_word,
        **_slice_fields(d, convs and g.kind == "dense")),
        g.out_channel_dims if g is not None else 1)


def _spatial_words(d: Dispatch, x_op, g) -> tuple[int, int]:
    """The push-constant words of a conv's (or pooling window's) runtime input H and W (-1:
    static); a runtime size the kernels cannot place is declined."""
    h_word, w_word = d.input_dim_word(x_op.index, g.x_pos["h"]), d.input_dim_word(x_op.index, g.x_pos["w"])
    if h_word < 0 and w_word < 0:
        raise Decline("runtime image sizes on an operand other than the conv input")
    read = ir.ShapedType(d.input_load.results[0].type) if d.input_load is not None else None
    if read is None or any(read.is_dynamic_dim(g.x_pos[k]) != (word >= 0)
                           for k, word in (("h", h_word), ("w", w_word))):
        raise Decline("a runtime image size of the conv input is not one of the dispatch's words")
    return h_word, w_word


def _match_pool(func, op) -> tuple[ConvProblem, list]:
    """The ConvProblem of a pooling dispatch: a depthwise window without a filter."""
    d = Dispatch(func)
    if len(d.outputs) != 1:
        raise Decline(SEVERAL_RESULTS)
    kind, g = pool_geometry(op)
    dtype = element_dtype(ir.ShapedType(op.operands[0].type).element_type)
    x_op, pad, xs, stride = trace_input(d, op.operands[0], g, lambda v: identity_value(kind, v, dtype))
    if x_op.dtype not in INPUT_DTYPES:
        raise Decline(f"pooling input type {x_op.dtype} not supported (f16, bf16 or f32)")
    size = lambda pos: xs[g.x_pos[pos]] if g.x_pos[pos] is not None else 1
    ws = static_shape(op.operands[1].type)
    R = ws[g.f_pos["r"]] if g.f_pos["r"] is not None else 1
    S = ws[g.f_pos["s"]] if g.f_pos["s"] is not None else 1
    C = size("g")
    _starts_at_identity(op, kind)
    h_word, w_word = _spatial_words(d, x_op, g) if d.spatial is not None else (-1, -1)
    return _problem(d, op, None, dict(
        N=size("n"), H=size("h") - pad[0] - pad[2], W=size("w") - pad[1] - pad[3], C=C, F=C, R=R, S=S,
        stride=stride, dilation=g.dilation, pad=pad, dtype=x_op.dtype, input=x_op.index, filter=-1, groups=C,
        filter_layout="hwf", pool=kind, h_constant=h_word, w_constant=w_word), 1)


def _starts_at_identity(op, kind: str) -> None:
    """Declines a pool whose accumulator is not its combine's identity."""
    init = owner_op(op.operands[-1])
    fill = float_const(init.operands[0]) if init is not None and init.name == "linalg.fill" else None
    if not identity_value(kind, fill, element_dtype(ir.ShapedType(op.results[0].type).element_type)):
        raise Decline(f"{kind}-pool does not start from its identity (it reads an earlier result)")


def _match_global_pool(func, op) -> tuple[ConvProblem, list]:
    """The ConvProblem of a global pool (pool_forms.global_reduction_dims): the window is the
    whole [H, W] image (IREE's collapsed [N, H*W, C]: H*W rows of one pixel)."""
    d = Dispatch(func)
    if len(d.outputs) != 1:
        raise Decline(SEVERAL_RESULTS)
    kind, rank, batch = global_reduction_dims(op)
    x_op = d.operand_of(op.operands[0])
    prologue = () if plain_combine(op) else pool_prologue(d, op)
    # i8: a quantized model's last activation, its dequantize fused in as the prologue
    if x_op.dtype not in INPUT_DTYPES + INT_INPUT_DTYPES:
        raise Decline(f"pooling input type {x_op.dtype} not supported (f16, bf16, f32 or i8)")
    _starts_at_identity(op, kind)
    shape = d.shape(op.operands[0].type)
    if not batch:
        shape = [1, *shape]
    H, W = shape[1], shape[2] if len(shape) == 4 else 1
    C = shape[-1]
    return _problem(d, op, None, dict(
        N=shape[0], H=H, W=W, C=C, F=C, R=H, S=W, dtype=x_op.dtype, input=x_op.index, filter=-1, groups=C,
        filter_layout="hwf", pool=kind, prologue=prologue), 1)


def _match_map(func, gen, x_index: int, row) -> tuple[ConvProblem, list]:
    """The ConvProblem of an elementwise map (map_forms.py): the identity window over the
    activation it reads at `x_index`, its body the epilogue; `row`: a reduction of each row's
    channels the body reads (a LayerNorm's), or None."""
    d = Dispatch(func)
    if len(d.outputs) != 1:
        raise Decline(SEVERAL_RESULTS)
    ins = list(gen.operands)[:-1]
    x = ins[x_index]
    x_op = d.operand_of(x)
    rows = {}
    if row is not None:
        combine = row_reduction(row)
        _starts_at_identity(row, combine)
        d.row_values = [(row.results[0], OperandLoad(x_op.index, "row",
                                                     element_dtype(ir.ShapedType(row.results[0].type).element_type)))]
        rows = dict(row_reduce=row_program(row), row_combine=combine)
    shape = d.shape(gen.results[0].type)
    if len(shape) == 1:                     # no broadcasts: any split into pixels x channels
        if d.batch is not None or row is not None:
            raise Decline("a map over one dynamic axis")
        C = next((c for c in (256, 128, 64, 32, 16, 8) if shape[0] % c == 0), None)
        if C is None:
            raise Decline(f"a flat map of {shape[0]} elements (not a multiple of 8)")
        shape, d.flat_map = [1, shape[0] // C, C], True
    if len(shape) == 2 and d.batch is None:
        shape = [1, *shape]                 # [pixels, C]: batch 1, whose unit axis IREE dropped
    pixels = 1
    for s in shape[1:-1]:
        pixels *= s
    d.image_operands = True
    steps = [] if x_op.dtype == "f32" else [EpilogueStep("cast", x_op.dtype)]
    more, cur_t = interpret_elementwise(d, gen, [i for i, v in enumerate(ins) if v == x], x_op.dtype)
    C = shape[-1]
    return _chain_problem(d, gen.results[0], dict(
        N=shape[0], H=1, W=pixels, C=C, F=C, R=1, S=1, dtype=x_op.dtype, input=x_op.index, filter=-1,
        groups=C, filter_layout="hwf", pool="sum", **rows), steps + more, cur_t, "f32")


def _problem(d: Dispatch, conv, init, fields: dict, out_channel_dims: int) -> tuple[ConvProblem, list]:
    """The problem of a conv (or pooling window) whose fields are read: its result type, the
    elementwise chain to the store as epilogue steps (after the accumulator's own, from
    `init`, None for a pool's identity), the output shape checked against the problem."""
    conv_t = element_dtype(ir.ShapedType(conv.results[0].type).element_type)
    # A 16-bit conv result (a model demoted to f16 by --precision f16 accumulates in f16) is
    # computed with f32 accumulation and rounded to its type before the epilogue: the same
    # values, with a more accurate sum.
    if fields["dtype"] in INT_INPUT_DTYPES and not fields.get("pool"):
        if conv_t != "i32":
            raise Decline(f"accumulation in {conv_t} for {fields['dtype']} inputs (i32 required)")
    elif conv_t != "f32" and conv_t != fields["dtype"]:
        raise Decline(f"accumulation in {conv_t} for {fields['dtype']} inputs (f32, or the input type, required)")
    acc_t = "i32" if conv_t == "i32" else "f32"

    steps: list[EpilogueStep] = [] if conv_t == acc_t else [EpilogueStep("cast", conv_t)]
    if init is not None:
        steps += init_steps(init, conv_t)
    d.out_channel_dims = out_channel_dims
    return _chain_problem(d, conv.results[0], fields, steps, conv_t, acc_t)


def _slice_fields(d: Dispatch, dense: bool) -> dict:
    """ConvProblem fields of an input channel window (Dispatch.input_slice)."""
    if d.input_slice is None:
        return {}
    if not dense:
        raise Decline("dispatch reads a slice of an operand (a channel window: dense convs only)")
    offset, channels = d.input_slice
    return {"input_channel_offset": offset, "input_channels": channels}


def _chain_problem(d: Dispatch, v: ir.Value, fields: dict, steps: list, cur_t: str,
                   acc_t: str) -> tuple[ConvProblem, list]:
    """The problem whose value `v` (of type cur_t, after `steps`) is followed by the
    elementwise chain to the store."""
    while True:
        user, idxs = chain_user(v)
        if user.name == "iree_tensor_ext.dispatch.tensor.store":
            break
        if user.name != "linalg.generic":
            raise Decline(f"conv result feeds {user.name}, not an elementwise epilogue")
        if max(idxs) >= len(user.operands) - len(user.results):
            raise Decline("conv result is used as an epilogue's output buffer")
        more, cur_t = interpret_elementwise(d, user, idxs, cur_t)
        steps += more
        v = user.results[0]
    out_shape = d.shape(v.type)
    try:
        prob = ConvProblem(**fields, acc_dtype=acc_t, out_dtype=cur_t, epilogue=tuple(steps),
                           num_operands=d.num_operands + len(d.hoisted),
                           batch_constant=-1 if d.batch is None else d.batch_word,
                           num_constants=d.num_constants)
    except ValueError as e:
        raise Decline(str(e)) from None
    if d.residual_slice is not None:
        if not any(st.op == "program" or st.broadcast == "full" for st in steps) or d.flat_map or prob.grouped:
            raise Decline("dispatch reads a slice of an operand (a channel window: dense convs' residuals only)")
        try:
            prob = dataclasses.replace(prob, residual_channel_offset=d.residual_slice[0],
                                       residual_channels=d.residual_slice[1])
        except ValueError as e:
            raise Decline(str(e)) from None
    if d.spatial is not None and not prob.dynamic_spatial:
        raise Decline("runtime image sizes: convc's kernels take them on convs and pooling windows only")
    n_out = 1
    for x in out_shape:
        n_out *= x
    channels = 1
    for x in out_shape[len(out_shape) - d.out_channel_dims:] if d.out_channel_dims else []:
        channels *= x
    # runtime image sizes read as their planning size on both sides: only the static dims compare
    same_size = prob.dynamic_spatial or n_out == prob.gemm_m * prob.F
    if (channels != prob.F and not d.flat_map) or not same_size:
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


def _load_only(module: ir.Module) -> set[str]:
    """Executables dispatched only from util.initializer ops (run once per module load)."""
    at_load, per_call = set(), set()
    for d in walk_ops(module.operation, "flow.dispatch"):
        exe = str(d.attributes["entry_points"][0]).split("::")[0].lstrip("@")
        parent = d.operation.parent if hasattr(d, "operation") else d.parent
        while parent is not None and parent.name not in ("util.initializer", "util.func", "func.func"):
            parent = parent.parent
        (at_load if parent is not None and parent.name == "util.initializer" else per_call).add(exe)
    return at_load - per_call


def _match_all(module: ir.Module, allowed_gemms) -> None:
    at_load = _load_only(module)
    for exe in walk_ops(module.operation, "flow.executable"):
        func = executable_function(exe)
        if func is None:
            continue
        try:
            matched = match_function(func, allowed_gemms, symbol_name(exe) in at_load)
        except Decline as e:
            exe.attributes[DECLINE_ATTR] = ir.StringAttr.get(str(e))
            continue
        if matched is not None:
            prob, constants = matched
            exe.attributes[PROBLEM_ATTR] = dict_attr(prob.to_dict())
            if constants:
                exe.attributes[CONSTANTS_ATTR] = ir.ArrayAttr.get(constants)
