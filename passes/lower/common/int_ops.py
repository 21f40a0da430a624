"""Integer backends for address math written once and evaluated two ways.

Loader address logic (the AMD LDS-direct loader, the sm_90a direct prologue loads) is written
against these few methods: `NumpyOps` evaluates it on numpy lanes in the model tests, `IrOps`
builds `arith` IR through the Emitter for the kernel, so the kernel's arithmetic is the tested
code by construction. Python ints fold in both.
"""

from __future__ import annotations

import numpy as np

from ...ir import arith_d


class NumpyOps:
    """Lanes as numpy int64 arrays (or Python ints)."""

    def __init__(self):
        self.np = np

    def add(self, a, b): return a + b
    def sub(self, a, b): return a - b
    def mul(self, a, b): return a * b
    def div(self, a, b): return a // b          # only ever applied to non-negative values
    def rem(self, a, b): return a % b
    def xor(self, a, b): return a ^ b
    def lt(self, a, b): return a < b
    def ge(self, a, b): return a >= b

    def all_of(self, *conds):
        out = True
        for c in conds:
            out = out & c
        return out

    def select(self, cond, a, b):
        if cond is True:
            return a
        return self.np.where(cond, a, b)


class IrOps:
    """Builds `arith` ops (index type) through the shared Emitter; folds Python ints."""

    def __init__(self, emitter):
        self.e = emitter

    @staticmethod
    def _static(*xs):
        return all(isinstance(x, int) for x in xs)

    def add(self, a, b):
        if self._static(a, b):
            return a + b
        if isinstance(a, int) and a == 0:
            return b
        return self.e.add(a, b)

    def sub(self, a, b):
        if self._static(a, b):
            return a - b
        if isinstance(b, int) and b == 0:
            return a
        return self.e.sub(a, b)

    def mul(self, a, b):
        if self._static(a, b):
            return a * b
        if isinstance(a, int) and a == 1:
            return b
        if (isinstance(a, int) and a == 0) or (isinstance(b, int) and b == 0):
            return 0
        return self.e.mul(a, b)

    def div(self, a, b):
        if self._static(a, b):
            return a // b
        return self.e.div(a, b)

    def rem(self, a, b):
        if self._static(a, b):
            return a % b
        return self.e.rem(a, b)

    def xor(self, a, b):
        if self._static(a, b):
            return a ^ b
        if isinstance(b, int) and b == 0:
            return a
        return arith_d.xori(self.e._v(a), self.e._v(b))

    def lt(self, a, b):
        if self._static(a, b):
            return a < b
        return self.e.cmp("slt", a, b)

    def ge(self, a, b):
        if self._static(a, b):
            return a >= b
        return self.e.cmp("sge", a, b)

    def all_of(self, *conds):
        dyn = []
        for c in conds:
            if c is False:
                return False
            if c is not True:
                dyn.append(c)
        return self.e.all_of(*dyn) if dyn else True

    def select(self, cond, a, b):
        if cond is True:
            return a
        if cond is False:
            return b
        return self.e.select(cond, a, b)
