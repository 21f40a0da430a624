"""Thin builders for index arithmetic and structured control flow.

They keep kernel emitters readable (`e.add(a, e.mul(b, 4))`). Every helper builds at the
current insertion point; integers are turned into index constants.
"""

from __future__ import annotations

from contextlib import contextmanager

from ...ir import ir, arith_d, scf_d, vector_d

_CMP = {"slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "eq": 0, "ne": 1}


class Emitter:
    def __init__(self):
        self.index = ir.IndexType.get()

    # values ---------------------------------------------------------------------------
    def c(self, v: int) -> ir.Value:
        return arith_d.constant(self.index, v)

    def _v(self, x) -> ir.Value:
        return self.c(x) if isinstance(x, int) else x

    def add(self, a, b):
        if isinstance(b, int) and b == 0:
            return self._v(a)
        return arith_d.addi(self._v(a), self._v(b))

    def sub(self, a, b):
        return arith_d.subi(self._v(a), self._v(b))

    def mul(self, a, b):
        if isinstance(b, int) and b == 1:
            return self._v(a)
        return arith_d.muli(self._v(a), self._v(b))

    def div(self, a, b):
        """Unsigned division of non-negative indices."""
        if isinstance(b, int) and b == 1:
            return self._v(a)
        return arith_d.divui(self._v(a), self._v(b))

    def ceil_div(self, a, b: int):
        """(a + b - 1) // b of a non-negative index; Python ints fold (static sizes)."""
        if isinstance(a, int):
            return -(-a // b)
        return self.div(self.add(a, b - 1), b)

    def rem(self, a, b):
        if isinstance(b, int) and b == 1:
            return self.c(0)
        return arith_d.remui(self._v(a), self._v(b))

    def xor(self, a, b):
        return arith_d.xori(self._v(a), self._v(b))

    def cmp(self, pred: str, a, b):
        return arith_d.cmpi(_CMP[pred], self._v(a), self._v(b))

    def all_of(self, *conds):
        out = conds[0]
        for x in conds[1:]:
            out = arith_d.andi(out, x)
        return out

    def select(self, cond, a, b):
        return arith_d.select(cond, self._v(a), self._v(b))

    # control flow ----------------------------------------------------------------------
    @contextmanager
    def if_(self, cond):
        op = scf_d.IfOp(cond)
        with ir.InsertionPoint(op.then_block):
            yield
            scf_d.YieldOp([])

    def if_else(self, cond):
        """Two-branch scf.if: `with e.if_else(c) as (then, other): with then: ...; with other: ...`."""
        return _IfElse(cond)

    def if_values(self, cond, types: list, then_fn, else_fn) -> list:
        """scf.if yielding values of `types`: then_fn()'s where cond holds, else_fn()'s
        otherwise (each builds its branch and returns the values); only the taken branch runs."""
        op = scf_d.IfOp(cond, list(types), has_else=True)
        for block, fn in ((op.then_block, then_fn), (op.else_block, else_fn)):
            with ir.InsertionPoint(block):
                scf_d.YieldOp(list(fn()))
        return list(op.results)

    def for_(self, lb, ub, step=1, iter_args=()):
        """Context manager over an scf.for: yields (iv, iter_args, set_results)."""
        return _ForCtx(self, lb, ub, step, iter_args)


class _IfElse:
    def __init__(self, cond):
        self.op = scf_d.IfOp(cond, [], has_else=True)

    def __enter__(self):
        return _Branch(self.op.then_block), _Branch(self.op.else_block)

    def __exit__(self, *exc):
        return False


class _Branch:
    def __init__(self, block):
        self._ip = ir.InsertionPoint(block)

    def __enter__(self):
        self._ip.__enter__()

    def __exit__(self, *exc):
        if exc[0] is None:
            scf_d.YieldOp([])
        self._ip.__exit__(*exc)
        return False


class _ForCtx:
    def __init__(self, e: Emitter, lb, ub, step, iter_args):
        self.op = scf_d.ForOp(e._v(lb), e._v(ub), e._v(step), list(iter_args))
        self._ip = ir.InsertionPoint(self.op.body)
        self._yielded = None

    def __enter__(self):
        self._ip.__enter__()
        return self.op.induction_variable, list(self.op.inner_iter_args), self._yield

    def _yield(self, values):
        self._yielded = list(values)

    def __exit__(self, *exc):
        if exc[0] is None:
            scf_d.YieldOp(self._yielded or [])
        self._ip.__exit__(*exc)
        return False

    @property
    def results(self):
        return list(self.op.results)


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative Python ints (sizes and counts known at compile time)."""
    return -(-a // b)


def float_type(dtype: str) -> ir.Type:
    """The MLIR element type of a dtype name (integers signless: i8 convs, i32 accumulators)."""
    if dtype in ("i8", "i16", "i32"):
        return ir.IntegerType.get_signless(int(dtype[1:]))
    return {"f16": ir.F16Type.get, "bf16": ir.BF16Type.get, "f32": ir.F32Type.get,
            "f8E4M3FN": ir.Float8E4M3FNType.get, "f8E5M2": ir.Float8E5M2Type.get}[dtype]()


def vec_type(n: int, dtype: str) -> ir.VectorType:
    return ir.VectorType.get([n], float_type(dtype))


def load_elements(mem, vt: ir.VectorType, index, alignment: int) -> ir.Value:
    """vector.load of vt from a 1-D memref; where the memref holds the bytes of vt's 1-byte
    float type (fp8 bindings are i8), the bytes are loaded and reinterpreted."""
    et = ir.MemRefType(mem.type).element_type
    if str(et) == str(vt.element_type):
        return vector_d.load(vt, mem, [index], alignment=alignment)
    raw = vector_d.load(ir.VectorType.get(vt.shape, et), mem, [index], alignment=alignment)
    return arith_d.bitcast(vt, raw)


def zeros(t: ir.Type) -> ir.Value:
    et = ir.VectorType(t).element_type
    if isinstance(et, ir.IntegerType):
        return arith_d.constant(t, ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(et, 0)))
    return splat(t, 0.0)


def splat(t: ir.Type, value: float) -> ir.Value:
    """A float vector constant of type t with every lane `value`."""
    return arith_d.constant(t, ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(ir.VectorType(t).element_type, value)))


def convert(v: ir.Value, to: ir.Type) -> ir.Value:
    """extf/truncf between float (vector) types, extsi/trunci/sitofp/fptosi where integers are
    involved; identity when equal."""
    src = ir.VectorType(v.type).element_type if _is_vector(v.type) else v.type
    dst = ir.VectorType(to).element_type if _is_vector(to) else to
    if str(src) == str(dst):
        return v
    if isinstance(src, ir.IntegerType) or isinstance(dst, ir.IntegerType):
        # integer convs: signed widening of the i8 operands, the i32 accumulator to float
        if not isinstance(dst, ir.IntegerType):
            return arith_d.sitofp(to, v)
        if not isinstance(src, ir.IntegerType):
            return arith_d.fptosi(to, v)
        wider = ir.IntegerType(dst).width > ir.IntegerType(src).width
        return arith_d.extsi(to, v) if wider else arith_d.trunci(to, v)
    width = {"f8E4M3FN": 8, "f8E5M2": 8, "f16": 16, "bf16": 16, "f32": 32}
    if width[str(src)] == 8 and str(dst) != "f32":
        # fp8 widens through f32 (what the CPU's arith lowering takes; exact)
        mid_t = ir.VectorType.get(ir.VectorType(to).shape, ir.F32Type.get()) if _is_vector(to) else ir.F32Type.get()
        return convert(arith_d.extf(mid_t, v), to)
    if width[str(src)] < width[str(dst)]:
        return arith_d.extf(to, v)
    if width[str(src)] > width[str(dst)]:
        return arith_d.truncf(to, v)
    # f16 <-> bf16 through f32
    mid_t = ir.VectorType.get(ir.VectorType(to).shape, ir.F32Type.get()) if _is_vector(to) else ir.F32Type.get()
    return arith_d.truncf(to, arith_d.extf(mid_t, v))


def _is_vector(t: ir.Type) -> bool:
    return str(t).startswith("vector<")
