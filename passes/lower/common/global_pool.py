"""The global pooling kernel: per workgroup one image and a chunk of channel vectors, reduced
over all pixels (plan: passes/plan/kernels/global_pool.py).

Thread t takes channel vector t % vectors of the chunk and pixel lane t // vectors, so the
lanes of a pixel read its chunk's channels as neighbouring 16-byte vectors. A lane sums pixels
lane, lane + lanes, ... in f32 (`unroll` loads issued before their adds; pixels past the image
and channels past C load nothing and add the combine's identity; a prologue, the BatchNorm and
activation of the conv before the pool, runs on each loaded vector first, its per-channel
operands loaded once per thread, whose channels never change, and input-shaped ones beside
the input). The lanes' partial vectors
then meet in workgroup memory, halving the live lanes per barrier, and lane 0's threads store
the chunk through the shared epilogue (the mean's division is an epilogue step).
"""

from __future__ import annotations

from ...ir import arith_d, hal_d, vector_d
from ...kernel_configs import GlobalPoolConfig
from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Schedule
from .emit import cdiv, convert, splat, vec_type, zeros, Emitter
from .epilogue import run_program, store_row_masked


class GlobalPool:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.e = Emitter()
        config = s.config_as(GlobalPoolConfig)
        self.V = s.block_n                       # channels per vector
        self.vectors = config.vectors            # channel vectors per workgroup
        self.lanes = s.threads // config.vectors
        self.unroll = config.unroll
        self.chunks = cdiv(cdiv(p.C, self.V), self.vectors)

    def _combine(self, acc, x):
        return arith_d.maximumf(acc, x) if self.p.pool == "max" else arith_d.addf(acc, x)

    def _identity(self, t):
        return splat(t, float("-inf")) if self.p.pool == "max" else zeros(t)

    def emit(self, memrefs: list) -> None:
        p, e, V = self.p, self.e, self.V
        pixels = p.H * p.W
        f32v = vec_type(V, "f32")
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        tid = self.m.thread_id(e)
        n, chunk = e.div(pid, self.chunks), e.rem(pid, self.chunks)
        lane, vec = e.div(tid, self.vectors), e.rem(tid, self.vectors)
        f0 = e.mul(e.add(e.mul(chunk, self.vectors), vec), V)
        c_ok = e.cmp("slt", f0, p.C)
        image = e.mul(e.mul(n, pixels), p.C)
        x = memrefs[p.input]
        load = lambda ld, at: vector_d.load(vec_type(V, ld.dtype), memrefs[ld.operand], [at],
                                            alignment=V * DTYPE_BYTES[ld.dtype])
        channel = {i: load(ld, e.select(c_ok, f0, 0)) for st in p.prologue
                   for i, ld in enumerate(st.loads) if ld.broadcast == "channel"}
        step = self.lanes * self.unroll
        loop = e.for_(0, cdiv(pixels, step), 1, [self._identity(f32v)])
        with loop as (k, (acc,), done):
            loaded = []
            for u in range(self.unroll):
                pix = e.add(e.mul(k, step), e.add(e.mul(u, self.lanes), lane))
                ok = e.all_of(c_ok, e.cmp("slt", pix, pixels))
                addr = e.select(ok, e.add(image, e.add(e.mul(pix, p.C), f0)), 0)
                v = vector_d.load(vec_type(V, p.dtype), x, [addr], alignment=V * DTYPE_BYTES[p.dtype])
                for st in p.prologue:
                    v = run_program(st, v, [channel[i] if ld.broadcast == "channel" else load(ld, addr)
                                            for i, ld in enumerate(st.loads)], V)
                loaded.append(arith_d.select(ok, convert(v, f32v), self._identity(f32v)))
            for v in loaded:
                acc = self._combine(acc, v)
            done([acc])
        acc = loop.results[0]
        if self.lanes > 1:
            acc = self._meet(acc, lane, vec)
        with e.if_(e.cmp("eq", lane, 0)):
            store_row_masked(e, p, memrefs, acc, V, n, f0)

    def _meet(self, acc, lane, vec):
        """The lanes' partial vectors summed in workgroup memory: lanes below h add lane + h's,
        h halving from lanes / 2 to 1, one barrier each; lane 0 then holds the chunk's total."""
        e, V = self.e, self.V
        f32v = vec_type(V, "f32")
        part = self.m.alloc_workgroup([self.lanes * self.vectors * V], "f32")
        slot = lambda ln: e.mul(e.add(e.mul(ln, self.vectors), vec), V)
        vector_d.store(acc, part, [slot(lane)], alignment=16)
        h = self.lanes // 2
        while h >= 1:
            self.m.barrier()
            with e.if_(e.cmp("slt", lane, h)):
                a = vector_d.load(f32v, part, [slot(lane)], alignment=16)
                b = vector_d.load(f32v, part, [slot(e.add(lane, h))], alignment=16)
                vector_d.store(self._combine(a, b), part, [slot(lane)], alignment=16)
            h //= 2
        self.m.barrier()
        return vector_d.load(f32v, part, [slot(lane)], alignment=16)


def emit_global_pool(p: ConvProblem, s: Schedule, machine, memrefs: list) -> None:
    GlobalPool(p, s, machine).emit(memrefs)


def global_pool_batch_grid(p: ConvProblem, s: Schedule):
    """The grid for a runtime batch: one workgroup per image and channel chunk."""
    def grid(x):
        e = Emitter()
        return [e.mul(x.N, GlobalPool(p, s, None).chunks), e.c(1), e.c(1)]
    return grid
