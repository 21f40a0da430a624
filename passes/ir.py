"""The one place that imports MLIR dialect bindings (from IREE's bundled MLIR).

Every other module writes ``from convc.passes.ir import ir, arith_d, ...`` so that
the set of dialects convc emits is visible in one file.
"""

from iree.compiler import ir
from iree.compiler.dialects import (
    amdgpu as amdgpu_d,
    arith as arith_d,
    flow as flow_d,
    func as func_d,
    gpu as gpu_d,
    hal as hal_d,
    llvm as llvm_d,
    math as math_d,
    memref as memref_d,
    nvvm as nvvm_d,
    rocdl as rocdl_d,
    scf as scf_d,
    util as util_d,
    vector as vector_d,
)

__all__ = [
    "ir", "amdgpu_d", "arith_d", "flow_d", "func_d", "gpu_d", "hal_d", "llvm_d",
    "math_d", "memref_d", "nvvm_d", "rocdl_d", "scf_d", "util_d", "vector_d",
    "parse_attr", "dict_attr", "attr_to_py", "walk_ops", "owner_op", "int_const", "float_const",
]


def parse_attr(text: str) -> ir.Attribute:
    """Parses attributes that have no Python builder (hal/iree_codegen ones).

    Kept in one helper so textual attribute construction stays in one place.
    """
    return ir.Attribute.parse(text)


def dict_attr(values: dict) -> ir.DictAttr:
    """Builds a DictAttr from plain Python data (int, str, bool, list, dict)."""
    return ir.DictAttr.get({k: _py_to_attr(v) for k, v in values.items()})


def _py_to_attr(v) -> ir.Attribute:
    if isinstance(v, bool):
        return ir.BoolAttr.get(v)
    if isinstance(v, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
    if isinstance(v, str):
        return ir.StringAttr.get(v)
    if isinstance(v, (list, tuple)):
        return ir.ArrayAttr.get([_py_to_attr(x) for x in v])
    if isinstance(v, dict):
        return dict_attr(v)
    if v is None:
        return ir.UnitAttr.get()
    raise TypeError(f"cannot store {type(v).__name__} in an attribute")


def attr_to_py(a: ir.Attribute):
    """Inverse of dict_attr for the attribute kinds it produces."""
    if isinstance(a, ir.BoolAttr):
        return bool(a.value)
    if isinstance(a, ir.IntegerAttr):
        return int(a.value)
    if isinstance(a, ir.StringAttr):
        return a.value
    if isinstance(a, ir.ArrayAttr):
        return [attr_to_py(x) for x in a]
    if isinstance(a, ir.DictAttr):
        return {a[i].name: attr_to_py(a[i].attr) for i in range(len(a))}
    if isinstance(a, ir.UnitAttr):
        return None
    raise TypeError(f"unexpected attribute {a}")


def owner_op(v: ir.Value):
    """The operation that defines v, or None for a block argument."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


# the operand groups of the multi-group ops convc reads and rebuilds, in their order
DISPATCH_SEGMENTS = ("workload", "arguments", "argument_dims", "result_dims")     # flow.dispatch
LOAD_SEGMENTS = ("source", "source_dims", "offsets", "sizes", "strides")         # dispatch.tensor.load
STORE_SEGMENTS = ("value", "target", "target_dims", "offsets", "sizes", "strides")  # dispatch.tensor.store


def operand_segments(op, names: tuple[str, ...]) -> dict[str, list]:
    """op's operands by group (its operandSegmentSizes), named `names` in order."""
    seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    ops, out, at = list(op.operands), {}, 0
    for name, n in zip(names, seg):
        out[name] = ops[at: at + n]
        at += n
    return out


def int_const(v: ir.Value) -> int | None:
    """The value of an integer arith.constant, else None."""
    op = owner_op(v)
    if op is None or op.name != "arith.constant":
        return None
    a = op.attributes["value"]
    return a.value if isinstance(a, ir.IntegerAttr) else None


def float_const(v: ir.Value) -> float | None:
    """The value of a scalar float arith.constant, else None."""
    op = owner_op(v)
    if op is None or op.name != "arith.constant":
        return None
    a = op.attributes["value"]
    return a.value if isinstance(a, ir.FloatAttr) else None


def walk_ops(op, name: str | None = None):
    """Yields nested operations (pre-order), optionally only those named `name`."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                if name is None or child.name == name:
                    yield child
                yield from walk_ops(child, name)
