"""Tracing a conv's operands back to the dispatch's arguments: which block argument is which
dispatch operand, the dynamic batch, and the conv input seen through a zero pad or a strided
view."""

from __future__ import annotations

from ..ir import LOAD_SEGMENTS, ir, operand_segments, walk_ops
from .conv_forms import Geometry
from .ir_reading import BATCH_HINT, ROWS_HINT, SPATIAL_HINT, Decline, Operand, element_dtype, float_const, int_const, owner_op, static_shape, tensor_text


class Dispatch:
    """The executable function: which block argument is which dispatch operand/result.

    Tensor operands are numbered in order, skipping the index arguments (push constants). The
    index arguments are the workload: a dynamic batch, the leading size of every dynamic tensor
    (`batch` is then the planning hint, `batch_word` its push-constant word), and runtime image
    heights and widths (`spatial`: their planning hint; dim_word finds an operand's word): dims 1
    and 2 of an NHWC tensor, or 0 and 1 of the [H, W, C] image of a unit batch IREE dropped."""

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
        self.spatial = None            # the planning size of runtime image dims (SPATIAL_HINT), or None
        self.arg_dims: list = []       # (dispatch tensor argument, {dim: push-constant word}) per tie_shape
        self.input_slice = None        # (first channel, operand channels): the conv reads a channel window
        self.residual_slice = None     # ... and its output-shaped epilogue operands do
        self.input_load = None         # the load the conv input comes from (trace_input)
        if index_args:
            self._find_sizes(index_args)
        self.hoisted: list = []        # (value, elements attribute) of constants made kernel operands
        self.out_channel_dims = 1      # trailing output dims that index channels (grouped GEMMs: 2)
        self.flat_map = False          # a map over one collapsed axis, taken as pixels x channels
        self.image_operands = False    # epilogue operands may be [N, C] (elementwise maps)
        self.row_values: list = []     # (value, OperandLoad): a map's row reduction, read per row

    def _find_sizes(self, index_args) -> None:
        """The runtime sizes: index operand k must be workload ordinal k (the splice passes it as
        push-constant word k and the count region receives the workload in that order). Each
        dynamic tensor ties its dynamic sizes to them: the leading one is the batch (one word
        for every tensor), dims 1 and 2 of a rank-4 (NHWC) tensor its image's H and W."""
        words = []
        for j, a in enumerate(index_args):
            users = [u.owner for u in a.uses]
            if len(users) != 1 or users[0].name != "iree_tensor_ext.dispatch.workload.ordinal":
                raise Decline("dispatch takes a runtime value that is not its workload")
            if ir.IntegerAttr(users[0].attributes["ordinal"]).value != j:
                raise Decline("dispatch's runtime sizes are not in workload order")
            words.append(users[0].results[0])

        def word_of(v):
            for j, w in enumerate(words):
                if w == v:
                    return j
            raise Decline("a dynamic size of the dispatch is not one of its workload values")

        for op in walk_ops(self.func, "flow.dispatch.tie_shape"):
            t = ir.ShapedType(ir.Type.parse(tensor_text(op.operands[0].type)))
            dyn = [i for i in range(t.rank) if t.is_dynamic_dim(i)]
            dims = dict(zip(dyn, (word_of(v) for v in list(op.operands)[1:])))
            self.arg_dims.append((op.operands[0], dims))
            # an image of a unit batch IREE dropped: [H, W, C]
            hwc = t.rank == 3 and set(dyn) == {0, 1}
            for i, w in dims.items():
                if hwc:
                    self.spatial = SPATIAL_HINT
                elif i == 0:
                    if self.batch_word is not None and w != self.batch_word:
                        raise Decline("a dynamic size of the dispatch is not its batch")
                    self.batch_word, self.batch_value = w, words[w]
                    if self.batch != ROWS_HINT:          # a GEMM-form 1x1 conv: the rows are dynamic
                        self.batch = ROWS_HINT if t.rank == 2 else BATCH_HINT
                elif t.rank == 4 and i in (1, 2):
                    self.spatial = SPATIAL_HINT
                else:
                    raise Decline("a dynamic size of the dispatch is not a leading (batch) dimension "
                                  "or an image's height or width")

    def input_dim_word(self, operand: int, dim: int) -> int:
        """dim_word of the conv input's dim `dim` as the conv reads it: a rank-reducing load (a
        unit batch IREE dropped) maps it to the operand's own dim first."""
        load = self.input_load
        if load is not None:
            sizes = [int(x) for x in load.attributes["static_sizes"]]
            drop = len(sizes) - ir.ShapedType(load.results[0].type).rank
            k = -1
            for j, size in enumerate(sizes):
                if drop > 0 and size == 1:
                    drop -= 1
                    continue
                k += 1
                if k == dim:
                    dim = j
                    break
        return self.dim_word(operand, dim)

    def dim_word(self, operand: int, dim: int) -> int:
        """The push-constant word holding dispatch input `operand`'s size `dim` (-1: static)."""
        arg = self.inputs[operand]
        for a, dims in self.arg_dims:
            if a == arg:
                return dims.get(dim, -1)
        return -1

    def shape(self, t) -> list[int]:
        return static_shape(t, self.batch, self.spatial, hwc=self.batch is None)

    def epilogue_source(self, v: ir.Value):
        """An epilogue input: an Operand (a dispatch operand, or a constant tensor the dispatch
        inlines, dense or dense_resource, hoisted into a kernel operand), or the FloatAttr of a
        splat constant."""
        op = owner_op(v)
        if op is None or op.name != "arith.constant":
            return self.operand_of(v)
        a = op.attributes["value"]
        dtype = element_dtype(ir.ShapedType(a.type).element_type)
        if isinstance(a, ir.DenseElementsAttr) and a.is_splat:
            return a.get_splat_value()
        for i, (val, _) in enumerate(self.hoisted):
            if val == v:
                return Operand(self.num_operands + i, dtype)
        self.hoisted.append((v, a))
        return Operand(self.num_operands + len(self.hoisted) - 1, dtype)

    def _load(self, v: ir.Value):
        """(dispatch input index, operand, full shape, offsets, sizes, strides) of the
        dispatch.tensor.load v comes from, its runtime sizes that are the operand's own dims read
        as the whole extent (its planning size), other runtime sizes left dynamic; a message
        (str) when v is not such a load of a dispatch input."""
        op = owner_op(v)
        if op is None or op.name != "iree_tensor_ext.dispatch.tensor.load":
            return f"operand is produced by {op.name if op else 'a block argument'}, not loaded"
        src = op.operands[0]
        tie = owner_op(src)
        tied = []
        if tie is not None and tie.name == "flow.dispatch.tie_shape":
            src, tied = tie.operands[0], list(tie.operands)[1:]
        idx = next((i for i, a in self.inputs.items() if a == src), None)
        if idx is None:
            return "operand is not a dispatch input"
        src_t = ir.ShapedType(ir.Type.parse(tensor_text(src.type)))
        full = self.shape(src_t)
        offsets = [int(x) for x in op.attributes["static_offsets"]]
        sizes = [int(x) for x in op.attributes["static_sizes"]]
        strides = [int(x) for x in op.attributes["static_strides"]]
        seg = operand_segments(op, LOAD_SEGMENTS)
        if not seg["offsets"] and not seg["strides"]:
            src_dims = dict(zip([i for i in range(src_t.rank) if src_t.is_dynamic_dim(i)], tied))
            dyn = iter(seg["sizes"])
            for i, x in enumerate(sizes):
                if x != ir.ShapedType.get_dynamic_size():
                    continue
                tied_dim, size = src_dims.get(i), next(dyn, None)
                if tied_dim is not None and size is not None and tied_dim == size:
                    sizes[i] = full[i]          # the whole runtime extent of that dim
        operand = Operand(idx, element_dtype(ir.ShapedType(op.results[0].type).element_type))
        return op, operand, full, offsets, sizes, strides

    def channel_slice_of(self, v: ir.Value):
        """(operand, first channel, operand channels) when v is a load of a window of the last
        (channel) dim of a dispatch input, whole along every other dim (runtime sizes as the
        operand's own); else None."""
        load = self._load(v)
        if isinstance(load, str):
            return None
        _, operand, full, offsets, sizes, strides = load
        if (len(offsets) != len(full) or strides != [1] * len(full) or any(offsets[:-1])
                or ir.ShapedType.get_dynamic_size() in offsets or sizes[:-1] != full[:-1] or sizes[-1] == full[-1]):
            return None
        return operand, offsets[-1], full[-1]

    def operand_of(self, v: ir.Value, allow_strides: bool = False):
        """The dispatch operand a tensor is loaded from; with allow_strides, returns
        (operand, full shape, load strides) for a strided load of the whole operand."""
        load = self._load(v)
        if isinstance(load, str):
            raise Decline(load)
        op, operand, full, offsets, sizes, strides = load
        loaded = self.shape(op.results[0].type)
        if offsets != [0] * len(full) or len(sizes) != len(full):
            raise Decline("dispatch reads a slice of an operand")
        if allow_strides:
            return operand, full, strides
        if sizes != full or strides != [1] * len(full) or loaded != full:
            raise Decline("dispatch reads a slice of an operand")
        return operand


def _whole_or_channel_slice(d: Dispatch, v: ir.Value, g: Geometry):
    """The operand a conv's (padded) input is loaded from; a window of its channels is recorded
    in d.input_slice (first channel, operand channels)."""
    if g.x_pos["c"] == ir.ShapedType(v.type).rank - 1:
        sl = d.channel_slice_of(v)
        if sl is not None:
            d.input_slice = sl[1:]
            return sl[0]
    return d.operand_of(v)


def trace_input(d: Dispatch, v: ir.Value, g: Geometry, pad_ok=lambda value: value == 0.0):
    """Returns (operand, pad, shape, stride) for the conv input, looking through a zero
    tensor.pad (a pool's: its combine's identity, `pad_ok`): shape is the (padded) input the conv reads, stride its strides. Where IREE
    reads a view of the operand (a one-tap axis strided by the load, or rows past the last
    window cut off), the conv is taken on the whole operand: such an axis takes the load's
    stride, and the cut rows are ones no window reaches."""
    op = owner_op(v)
    pad = (0, 0, 0, 0)
    src = op.operands[0] if op is not None and op.name == "tensor.pad" else v
    load = owner_op(src)
    d.input_load = load if load is not None and load.name == "iree_tensor_ext.dispatch.tensor.load" else None
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
        value = float_const(yv)
        if value is None and int_const(yv) is not None:     # an i8 conv's padding
            value = float(int_const(yv))
        if not pad_ok(value):
            raise Decline("padding value is not zero" if pad_ok(0.0) else "padding value is not the pool's identity")
        hp, wp = g.x_pos["h"], g.x_pos["w"]
        pad = (low[hp], low[wp], high[hp], high[wp])
        # the padded shape from the source's: a runtime H or W reads as its planning size there
        padded = [x + lo + hi for x, lo, hi in zip(d.shape(op.operands[0].type), low, high)]
        return _whole_or_channel_slice(d, op.operands[0], g), pad, padded, g.stride
    if g.x_pos["c"] == ir.ShapedType(v.type).rank - 1 and (sl := d.channel_slice_of(v)) is not None:
        d.input_slice = sl[1:]
        return sl[0], pad, d.shape(v.type), g.stride
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


