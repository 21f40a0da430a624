"""convc-input-layout: the model's 4-D inputs (and, asked separately, its outputs) taken
channels-last (NHWC memory) when the user asks for it (`convc --input-layout nhwc`,
`--output-layout nhwc`; PassOptions.input_layout, output_layout).

A CNN exported from PyTorch or ONNX takes NCHW images, and convc-channels-last turns the first
conv's input into NHWC with a transpose IREE runs on every call: a dispatch of its own that
moves the whole input twice (ResNet-50 at batch 32 on an H100: 56 us in IREE's codegen, for a
tensor of 9.6 MB). Image decoders write HWC pixels and PyTorch's channels_last tensors are NHWC
in memory, so a user who has the input that way gains nothing from the round trip. With
input_layout "nhwc" each rank-4 tensor a public function imports is declared [N, H, W, C] and
transposed back to the model's [N, C, H, W] right after the import; convc-channels-last's
transpose to NHWC then meets it and IREE folds the pair away, so no dispatch touches the input
before the first conv. Rank-5 tensors (video clips and volumes for 3-D convs, convc-conv3d) are
likewise declared [N, D, H, W, C]. Other ranks and "nchw" (the default) are left as they are.

Outputs likewise: a detection or segmentation head's consumer often wants channels-last maps
(PyTorch's channels_last results are NHWC in memory), and the model's NCHW result costs a
transpose dispatch after the last conv (a dynamic-H/W YOLO-style neck at 4 x 640 x 640: 50 us in
IREE's codegen, H200). With output_layout "nhwc" each rank-4 (rank-5) tensor a public function
exports is transposed to [N, H, W, C] ([N, D, H, W, C]) right before the export (before the
coarse-fences barrier or the alias into caller storage that carries it there), where it meets
convc-channels-last's transpose back to NCHW and IREE folds the pair away.
"""

from __future__ import annotations

from iree.compiler.dialects import arith as arith_d

from ..ir import int_const, ir, owner_op, walk_ops
from .builders import transpose
from .transpose_sinking import TO_FIRST, TO_LAST

LAYOUTS = ("nchw", "nhwc")


def _channels_last(rt: ir.RankedTensorType) -> ir.RankedTensorType:
    """The [N, (D,) H, W, C] type of an [N, C, (D,) H, W] tensor type."""
    return ir.RankedTensorType.get([rt.get_dim_size(i) for i in TO_LAST[rt.rank]], rt.element_type, rt.encoding)


def _nhwc_import(op) -> bool:
    t = op.results[0].type
    if not isinstance(t, ir.RankedTensorType) or ir.RankedTensorType(t).rank not in TO_LAST:
        return False
    rt = ir.RankedTensorType(t)
    if rt.is_dynamic_dim(1):
        return False            # dynamic channels stay where they are (the batch and image sizes move)
    uses = list(op.results[0].uses)
    # runtime sizes read from the buffer view (its batch, H, W) are read at their NHWC positions;
    # their order among the dynamic dims is the same in both layouts (only C, static, moves)
    view = op.operands[0]
    for dim_op in [u.owner for u in view.uses if u.owner.name == "hal.buffer_view.dim"]:
        k = ir.IntegerAttr(dim_op.attributes["index"]).value
        dim_op.attributes["index"] = ir.IntegerAttr.get(ir.IndexType.get(), TO_LAST[rt.rank].index(k))
    nhwc = _channels_last(rt)
    op.results[0].set_type(nhwc)
    if "target_encoding" in op.attributes:        # the buffer's type, as the import declares it
        op.attributes["target_encoding"] = ir.TypeAttr.get(nhwc)
    with ir.InsertionPoint.after(op), op.location:
        back = transpose(op.results[0], TO_FIRST[rt.rank])
    for use in uses:
        use.owner.operands[use.operand_number] = back
    return True


# ops that carry an exported tensor to its export: result i is operand i (the coarse-fences
# barrier; the alias into caller-provided output storage)
_CARRIERS = ("hal.tensor.barrier", "hal.tensor.alias")


def _nhwc_export(op) -> bool:
    src = op.operands[0]
    if not isinstance(src.type, ir.RankedTensorType) or ir.RankedTensorType(src.type).rank not in TO_LAST:
        return False
    rt = ir.RankedTensorType(src.type)
    if rt.is_dynamic_dim(1):
        return False
    nhwc = _channels_last(rt)
    holder = owner_op(src)
    if holder is not None and holder.name in _CARRIERS:
        k = src.result_number
        with ir.InsertionPoint(holder), holder.location:
            holder.operands[k] = transpose(holder.operands[k], TO_LAST[rt.rank])
        holder.results[k].set_type(nhwc)
        # the sizes read off the carried tensor (the export's dims) move to their NHWC positions
        for use in list(holder.results[k].uses):
            dim = use.owner
            if dim.name != "tensor.dim":
                continue
            index = int_const(dim.operands[1])
            if index is None:
                raise ValueError("a runtime dim of an exported tensor at an index not known at compile time")
            with ir.InsertionPoint(dim), dim.location:
                dim.operands[1] = arith_d.constant(ir.IndexType.get(), TO_LAST[rt.rank].index(index))
    else:
        with ir.InsertionPoint(op), op.location:
            op.operands[0] = transpose(src, TO_LAST[rt.rank])
    if "source_encoding" in op.attributes:        # the tensor's type, as the export declares it
        op.attributes["source_encoding"] = ir.TypeAttr.get(nhwc)
    return True


def input_layout(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-input-layout (input-phase IR, first)."""
    layout = getattr(options, "input_layout", "nchw") or "nchw"
    out_layout = getattr(options, "output_layout", "nchw") or "nchw"
    for what, v in (("input", layout), ("output", out_layout)):
        if v not in LAYOUTS:
            raise ValueError(f"unknown {what} layout {v!r} (one of {', '.join(LAYOUTS)})")
    if layout == "nchw" and out_layout == "nchw":
        return module
    with module.context, ir.Location.unknown():
        if layout == "nhwc":
            for op in list(walk_ops(module.operation, "hal.tensor.import")):
                _nhwc_import(op)
        if out_layout == "nhwc":
            for op in list(walk_ops(module.operation, "hal.tensor.export")):
                _nhwc_export(op)
    return module
