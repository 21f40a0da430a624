"""convc-nearest-upsample: a nearest-neighbour upsample by integer factors as strided copies.

PyTorch's `interpolate(mode="nearest")` and ONNX's nearest `Resize` import as a gather: a
linalg.generic without inputs whose body computes, from the output indices, the source pixel
in floating point (scale, offset, floor or rounding, clamp) and reads it with `tensor.extract`.
IREE runs it as an elementwise dispatch of its own codegen (the VAE decoder's 2x upsamples: 41
and 21 us at b1 on an H200, ~1 TB/s, results/e2e/h200_latest.json). Where every output pixel
(y, x) reads source pixel (y // sh, x // sw) of the same image and channel, the upsample is
sh * sw copies of the whole source, each inserted with strides (sh, sw) at its phase (a, b) of
a channels-last output: one launch of convc's copy kernel (convc-copy-chains), in 16-byte
vectors along the channels.

Which source pixel each output pixel reads is not pattern-matched from the body's formula (the
importers differ: PyTorch floors y / s, ONNX rounds (y + 0.5) / s - 0.5 half down and clamps):
the body's index computation is evaluated (_Scalars) at every output row and column, a few
channels and images, and a few random points, and must equal the nearest rule exactly.

Runs on the input-phase IR before convc-channels-last: the copies work on the NHWC source
(a transpose of the NCHW one) and the result goes back to NCHW; convc-channels-last cancels
both transposes against its own where the upsample sits between convs (a decoder). Static
shapes only; anything else stays as imported.
"""

from __future__ import annotations

import math
import random

import numpy as np
from iree.compiler.dialects import tensor as tensor_d

from ..ir import ir, walk_ops
from .builders import NCHW_TO_NHWC, NHWC_TO_NCHW, erase_dead, insert, owner, transpose

_FLOAT = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64}


class _Unknown(Exception):
    pass


class _Scalars:
    """Evaluates a generic body's index arithmetic for given loop indices (integers, and floats
    in their own precision); any op outside the small set it knows raises _Unknown."""

    def __init__(self, block):
        self.ops = [o.operation for o in block.operations]

    @staticmethod
    def _const(v: ir.Value):
        op = owner(v)
        if op is None or op.name != "arith.constant":
            raise _Unknown()
        a = op.attributes["value"]
        if isinstance(a, ir.FloatAttr):
            return _FLOAT.get(str(a.type), np.float64)(a.value)
        if isinstance(a, ir.IntegerAttr):
            return int(a.value)
        raise _Unknown()

    def run(self, indices: list[int]) -> list[int]:
        """The indices of the body's tensor.extract for loop indices `indices`."""
        env = {}

        def val(v):
            return env[v] if v in env else self._const(v)

        for op in self.ops:
            n = op.name
            if n == "tensor.extract":
                return [int(val(v)) for v in list(op.operands)[1:]]
            a = [val(v) for v in op.operands] if n != "linalg.index" else []
            rt = str(op.results[0].type) if op.results else ""
            if n == "linalg.index":
                r = indices[ir.IntegerAttr(op.attributes["dim"]).value]
            elif n == "arith.constant":
                r = self._const(op.results[0])
            elif n in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"):
                r = int(a[0])
            elif n in ("arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf"):
                r = _FLOAT.get(rt, np.float64)(a[0])
            elif n in ("arith.fptosi", "arith.fptoui"):
                r = int(math.trunc(float(a[0])))
            elif n in ("arith.addf", "arith.addi"):
                r = a[0] + a[1]
            elif n in ("arith.subf", "arith.subi"):
                r = a[0] - a[1]
            elif n in ("arith.mulf", "arith.muli"):
                r = a[0] * a[1]
            elif n == "arith.divf":
                r = a[0] / a[1]
            elif n in ("arith.floordivsi",):
                r = a[0] // a[1]
            elif n in ("arith.divsi", "arith.divui"):
                r = int(a[0] / a[1])
            elif n in ("arith.remsi", "arith.remui"):
                r = int(math.fmod(a[0], a[1]))
            elif n in ("arith.maximumf", "arith.maxnumf", "arith.maxsi", "arith.maxui"):
                r = max(a[0], a[1])
            elif n in ("arith.minimumf", "arith.minnumf", "arith.minsi", "arith.minui"):
                r = min(a[0], a[1])
            elif n == "math.floor":
                r = type(a[0])(math.floor(float(a[0])))
            elif n == "math.ceil":
                r = type(a[0])(math.ceil(float(a[0])))
            elif n == "math.trunc":
                r = type(a[0])(math.trunc(float(a[0])))
            elif n == "math.roundeven":
                r = type(a[0])(round(float(a[0])))
            elif n == "math.round":
                x = float(a[0])
                r = type(a[0])(math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1))
            elif n == "arith.cmpf":
                p = ir.IntegerAttr(op.attributes["predicate"]).value
                x, y = float(a[0]), float(a[1])
                r = {0: False, 1: x == y, 2: x > y, 3: x >= y, 4: x < y, 5: x <= y, 6: x != y, 7: True,
                     8: x == y, 9: x > y, 10: x >= y, 11: x < y, 12: x <= y, 13: x != y, 14: False, 15: True}[p]
            elif n == "arith.cmpi":
                p = ir.IntegerAttr(op.attributes["predicate"]).value
                x, y = a
                r = {0: x == y, 1: x != y, 2: x < y, 3: x <= y, 4: x > y, 5: x >= y, 6: x < y, 7: x <= y,
                     8: x > y, 9: x >= y}[p]
            elif n == "arith.select":
                r = a[1] if a[0] else a[2]
            else:
                raise _Unknown()
            env[op.results[0]] = r
        raise _Unknown()


def nearest_factors(gen) -> tuple[ir.Value, int, int] | None:
    """(source, sh, sw) where `gen` is a nearest-neighbour upsample of a static NCHW source by
    integer factors (output [N, C, sh*H, sw*W]), else None."""
    if gen.name != "linalg.generic" or len(gen.operands) != 1 or len(gen.results) != 1:
        return None
    out = ir.RankedTensorType(gen.results[0].type)
    if out.rank != 4 or not out.has_static_shape or any("parallel" not in str(a) for a in gen.attributes["iterator_types"]):
        return None
    block = gen.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    if len(ops) < 2 or ops[-1].name != "linalg.yield" or ops[-2].name != "tensor.extract" \
            or ops[-1].operands[0] != ops[-2].results[0] or list(block.arguments[0].uses):
        return None
    src = ops[-2].operands[0]
    st = ir.RankedTensorType(src.type)
    if isinstance(src.owner, ir.Block) and src.owner == block or not st.has_static_shape or st.rank != 4 \
            or st.element_type != out.element_type:
        return None
    N, C, H, W = st.shape
    if list(out.shape[:2]) != [N, C] or out.shape[2] % H or out.shape[3] % W:
        return None
    sh, sw = out.shape[2] // H, out.shape[3] // W
    if (sh, sw) == (1, 1):
        return None
    ev = _Scalars(block)
    points = ([[n, 0, 0, 0] for n in range(N)] + [[0, c, 0, 0] for c in {0, C // 2, C - 1}]
              + [[0, 0, y, 0] for y in range(out.shape[2])] + [[0, 0, 0, x] for x in range(out.shape[3])])
    rng = random.Random(0)
    points += [[rng.randrange(d) for d in out.shape] for _ in range(16)]
    try:
        for n, c, y, x in points:
            if ev.run([n, c, y, x]) != [n, c, y // sh, x // sw]:
                return None
    except (_Unknown, KeyError, ZeroDivisionError, ValueError, OverflowError):
        return None
    return src, sh, sw


def rewrite_upsample(gen, src: ir.Value, sh: int, sw: int) -> None:
    N, C, H, W = ir.RankedTensorType(src.type).shape
    et = ir.RankedTensorType(src.type).element_type
    x = transpose(src, NCHW_TO_NHWC)
    dest = tensor_d.EmptyOp([N, H * sh, W * sw, C], et).result
    for a in range(sh):
        for b in range(sw):
            dest = insert(x, dest, [0, a, b, 0], [N, H, W, C], [1, sh, sw, 1])
    gen.results[0].replace_all_uses_with(transpose(dest, NHWC_TO_NCHW))
    gen.erase()


def nearest_upsamples(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-nearest-upsample (input-phase IR, before convc-channels-last)."""
    with module.context, ir.Location.unknown():
        for gen in list(walk_ops(module.operation, "linalg.generic")):
            found = nearest_factors(gen)
            if found is not None:
                with ir.InsertionPoint(gen), gen.location:
                    rewrite_upsample(gen, *found)
        erase_dead(module, ("tensor.empty",))
    return module
