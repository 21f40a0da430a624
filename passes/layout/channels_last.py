"""convc-channels-last: rewrite every conv and pool of a model into channels-last form.

Runs on the model at IREE's `input` phase (linalg on tensors, after the ONNX/PyTorch import).
PyTorch and ONNX convs are NCHW x FCHW (`linalg.conv_2d_nchw_fchw`), TensorFlow/JAX ones
NHWC x HWCF; convc's kernels read NHWC x FHWC. Each such op becomes

    transpose(NCHW -> NHWC) -> [zero pad in NHWC] -> linalg.conv_2d_nhwc_fhwc -> transpose back

with the filter transposed once (a constant expression IREE evaluates at compile time) and a
non-zero accumulator (the import's bias broadcast) added after the conv as an elementwise op,
so the conv itself accumulates into a zero fill, as the matcher requires. Pools get the same
treatment (`linalg.pooling_nchw_{max,sum}` -> `_nhwc_`), so that activations can stay
channels-last through them. Between two such ops the back-and-forth transposes meet; IREE's
global optimization propagates them through elementwise ops and cancels the pairs, leaving
transposes only at the model's boundaries and around ops that need NCHW.

The transposed filter is put behind a `util.optimization_barrier`: otherwise IREE fuses the
transpose of a runtime filter into the conv's dispatch, or folds a splat filter (test models)
into the conv's body, and neither is a conv a kernel can read.
"""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d, linalg as linalg_d, tensor as tensor_d

from ..ir import ir, walk_ops
from .channel_shuffle import assemble_shuffles
from .builders import (barrier, erase_dead, ints, is_transpose, owner, truncf_tensor, users,
                               value_of)
from .op_rewrites import (CONV_OPS, GROUPED_OPS, NHWC_CONVS, POOL_OPS, grouped_generic, is_nhwc_conv, rewrite_conv,
                                  rewrite_grouped, rewrite_pool, rewritable)
from .transpose_sinking import SHUFFLE_NHWC, TO_LAST, sink_transposes, to_first, whole_extent_slice_sizes


def _demote_conv_inputs(module: ir.Module, et: ir.Type) -> None:
    """--precision f16/bf16: every f32 conv (dense, depthwise, grouped) reads f16/bf16
    activations and filters (f32 accumulation and output). A zero pad is re-created on the
    demoted activation."""
    for conv in [c for c in walk_ops(module.operation) if is_nhwc_conv(c)]:
        x, w = conv.operands[0], conv.operands[1]
        if str(ir.RankedTensorType(x.type).element_type) != "f32":
            continue
        with ir.InsertionPoint(conv), conv.location:
            pad = owner(x)
            if pad is not None and pad.name == "tensor.pad" and len(pad.operands) == 1:
                src = truncf_tensor(pad.operands[0], et)
                t = ir.RankedTensorType(x.type)
                low = [int(v) for v in pad.attributes["static_low"]]
                high = [int(v) for v in pad.attributes["static_high"]]
                new = tensor_d.PadOp(ir.RankedTensorType.get(list(t.shape), et), src, [], [], low, high)
                block = new.regions[0].blocks.append(*([ir.IndexType.get()] * t.rank))
                with ir.InsertionPoint(block):
                    tensor_d.YieldOp(arith_d.constant(et, 0.0))
                xd = new.result
            else:
                xd = truncf_tensor(x, et)
            wd = truncf_tensor(w, et)
            acc = conv.operands[2]
            if conv.name == "linalg.generic":
                y = grouped_generic(xd, wd, acc, conv.attributes["indexing_maps"], conv.attributes["iterator_types"])
            else:
                y = value_of(DEMOTABLE[conv.name](xd, wd, outs=[acc], strides=ints(conv.attributes["strides"]),
                                                  dilations=ints(conv.attributes["dilations"])))
        conv.results[0].replace_all_uses_with(y)
        conv.erase()


# the named convs --precision demotes (their inputs cast to the f32 accumulator in the op's body)
DEMOTABLE = {"linalg.conv_2d_nhwc_fhwc": linalg_d.conv_2d_nhwc_fhwc,
             "linalg.depthwise_conv_2d_nhwc_hwc": linalg_d.depthwise_conv_2d_nhwc_hwc,
             "linalg.depthwise_conv_2d_nhwc_hwcm": linalg_d.depthwise_conv_2d_nhwc_hwcm,
             "linalg.conv_2d_nhwgc_gfhwc": linalg_d.conv_2d_nhwgc_gfhwc}


def channels_last(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-channels-last (with options.precision f16/bf16, also the conv input demotion)."""
    with module.context, ir.Location.unknown():
        for func in walk_ops(module.operation):
            if func.name in ("func.func", "util.func"):
                whole_extent_slice_sizes(func)
        for op in [o for o in walk_ops(module.operation) if rewritable(o)]:
            with ir.InsertionPoint(op), op.location:
                (rewrite_pool if op.name in POOL_OPS else
                 rewrite_grouped if op.name in GROUPED_OPS else rewrite_conv)(op)
        _fold_reshape_pairs(module)
        for func in walk_ops(module.operation):
            if func.name in ("func.func", "util.func"):
                sink_transposes(func)
        for func in walk_ops(module.operation):
            if func.name in ("func.func", "util.func"):
                assemble_shuffles(func)
        _isolate_transposes(module)
        demote = {"bf16": ir.BF16Type.get, "f16": ir.F16Type.get}.get(getattr(options, "precision", None))
        if demote is not None:
            _demote_conv_inputs(module, demote())
        erase_dead(module, DEAD_KINDS)
    return module


def _fold_reshape_pairs(module: ir.Module) -> None:
    """collapse_shape(expand_shape(x)) over the same dimension groups is x. The PyTorch import
    collapses a grouped conv's [N, G, F/G, H, W] result straight back to NCHW; left in place,
    the pair stands between the conv's back-transpose and the elementwise ops it must sink
    through, and every grouped conv keeps a transpose dispatch after it (ResNeXt-50: 17 per
    inference)."""
    for c in list(walk_ops(module.operation, "tensor.collapse_shape")):
        e = owner(c.operands[0])
        if (e is not None and e.name == "tensor.expand_shape" and e.operands[0].type == c.results[0].type
                and str(e.attributes["reassociation"]) == str(c.attributes["reassociation"])):
            c.results[0].replace_all_uses_with(e.operands[0])
            c.erase()
            if not list(e.results[0].uses):     # else the transpose feeding it stays, and gets a barrier
                e.erase()


def _after_conv(v: ir.Value, depth: int = 16) -> bool:
    """v is a conv's result, possibly through elementwise generics (its fused epilogue: PyTorch's
    BatchNorm alone is three, and a grouped conv's result view one more) and reshapes."""
    seen, frontier = set(), [v]
    for _ in range(depth):
        ops = []
        for x in frontier:
            op = owner(x)
            if op is None or op in seen:
                continue
            if is_nhwc_conv(op):
                return True
            seen.add(op)
            if op.name in ("tensor.collapse_shape", "tensor.expand_shape"):     # a grouped conv's view
                ops.append(op.operands[0])
            elif op.name == "linalg.generic":
                ops += list(op.operands)[:-1]
        frontier = ops
    return False


def _reaches_output(t, depth: int = 8) -> bool:
    """Transpose t's NCHW result reaches an op outside linalg (the model's output), possibly
    through reshapes and other transposes (a channel shuffle: view, transpose, view), rather
    than a linalg consumer or a channels-last input transpose, where IREE fuses or cancels it."""
    frontier = users(t)
    for _ in range(depth):
        nxt = []
        for u in frontier:
            if u.name in ("tensor.expand_shape", "tensor.collapse_shape") or (
                    u.name == "linalg.transpose" and not any(is_transpose(u, p) for p in TO_LAST.values())):
                nxt += users(u)
            elif not u.name.startswith("linalg."):
                return True
        frontier = nxt
    return False


def _isolate_transposes(module: ir.Module) -> None:
    """Transposes left next to a conv get a barrier in between: IREE would fuse one feeding a
    conv (the model's NCHW input) into the conv's dispatch, which would then read NCHW, and
    one producing the model's NCHW output into the conv's epilogue, which would write it (one
    that feeds another op, e.g. a pool, fuses into that op instead)."""
    for t in list(walk_ops(module.operation, "linalg.transpose")):
        if to_first(t) is not None and _reaches_output(t) and _after_conv(t.operands[0]):
            with ir.InsertionPoint(t), t.location:
                x = t.operands[0]
                t.operands[0] = barrier(x)
    for t in list(walk_ops(module.operation, "linalg.transpose")):
        if not is_transpose(t, SHUFFLE_NHWC):
            continue
        # a channel shuffle after a conv: IREE would fuse it into the conv's epilogue, which then
        # writes permuted channels (declined); it becomes a transpose of its own
        holder, x = t, t.operands[0]
        while owner(x) is not None and owner(x).name in ("tensor.expand_shape", "tensor.collapse_shape"):
            holder = owner(x)
            x = holder.operands[0]
        if _after_conv(x):
            with ir.InsertionPoint(holder), holder.location:
                holder.operands[0] = barrier(x)
    for conv in [c for c in walk_ops(module.operation) if is_nhwc_conv(c)]:
        # through the pad and (a grouped conv's input) the [N, H, W, G, C/G] view; a 3-D conv's
        # (convc-conv3d) through its 2-D view, depth pad, and im2col frames and concatenation
        edges, seen = [(conv, 0)], set()
        while edges:
            holder, index = edges.pop()
            x = holder.operands[index]
            op = owner(x)
            if op is not None and any(is_transpose(op, p) for p in TO_LAST.values()):
                with ir.InsertionPoint(holder), holder.location:
                    holder.operands[index] = barrier(x)
            if op is None or op in seen:
                continue
            seen.add(op)
            if op.name in ("tensor.pad", "tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice"):
                edges.append((op, 0))
            elif op.name == "tensor.concat":
                edges += [(op, i) for i in range(len(op.operands))]


# what the rewrites leave without users: transposes, empties, pads and their constants, views
# an optimization barrier nothing reads is a rewrite's leftover too (the NCHW zero-point pad of
# a quantized input, re-created channels-last: its barrier kept a transpose dispatch alive, 16
# per inference in a uint8 QDQ ResNet-50)
DEAD_KINDS = ("linalg.transpose", "tensor.empty", "tensor.pad", "linalg.fill", "arith.constant", "tensor.dim",
              "tensor.expand_shape", "tensor.collapse_shape", "tensor.concat", "util.optimization_barrier")


def layout_counts(module: ir.Module) -> dict[str, int]:
    """How many ops of each layout-relevant kind a module holds (for tests and --report)."""
    out: dict[str, int] = {}
    for op in walk_ops(module.operation):
        if op.name in CONV_OPS or op.name in POOL_OPS or op.name in GROUPED_OPS or op.name in NHWC_CONVS + (
                "linalg.transpose",):
            out[op.name] = out.get(op.name, 0) + 1
    return out
