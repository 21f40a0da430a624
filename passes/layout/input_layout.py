"""convc-input-layout: the model's 4-D inputs taken channels-last (NHWC memory) when the user
asks for it (`convc --input-layout nhwc`; PassOptions.input_layout).

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
"""

from __future__ import annotations

from ..ir import ir, walk_ops
from .builders import transpose
from .transpose_sinking import TO_FIRST, TO_LAST

LAYOUTS = ("nchw", "nhwc")


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
    nhwc = ir.RankedTensorType.get([rt.get_dim_size(i) for i in TO_LAST[rt.rank]], rt.element_type, rt.encoding)
    op.results[0].set_type(nhwc)
    if "target_encoding" in op.attributes:        # the buffer's type, as the import declares it
        op.attributes["target_encoding"] = ir.TypeAttr.get(nhwc)
    with ir.InsertionPoint.after(op), op.location:
        back = transpose(op.results[0], TO_FIRST[rt.rank])
    for use in uses:
        use.owner.operands[use.operand_number] = back
    return True


def input_layout(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-input-layout (input-phase IR, first)."""
    layout = getattr(options, "input_layout", "nchw") or "nchw"
    if layout not in LAYOUTS:
        raise ValueError(f"unknown input layout {layout!r} (one of {', '.join(LAYOUTS)})")
    if layout == "nchw":
        return module
    with module.context, ir.Location.unknown():
        for op in list(walk_ops(module.operation, "hal.tensor.import")):
            _nhwc_import(op)
    return module
