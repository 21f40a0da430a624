"""The skinny GEMM kernel: dot products of few rows (plan: passes/plan/kernels/skinny_gemm.py).

Subgroup g of the grid computes rows m0 .. m0 + rows - 1 and channels f0 .. f0 + channels - 1
(row blocks fastest). Lane l loads K-vectors l, l + lanes, ... of its rows and of those
channels' filter rows ([F, C]: a channel's weights are contiguous), widens them to f32 and
keeps one vector accumulator per output; at the end each accumulator is summed over its lanes
(the vector's elements, then a butterfly of shuffles) and output i is stored by lane
i % lanes through the shared epilogue. Rows and channels past the GEMM read its last row or
channel and are not stored.
"""

from __future__ import annotations

from ...ir import ir, hal_d, math_d, vector_d
from ...kernel_configs import SkinnyGemmConfig
from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Schedule
from .emit import cdiv, convert, vec_type, zeros, Emitter
from .epilogue import store_row_masked


def emit_skinny_gemm(p: ConvProblem, s: Schedule, machine, memrefs: list) -> None:
    e = Emitter()
    config = s.config_as(SkinnyGemmConfig)
    rows, channels, V = config.rows, config.channels, s.block_k
    lanes = min(s.threads, s.subgroup_size)
    M, K, F = p.gemm_m, p.C, p.F
    mblocks = cdiv(M, rows)
    pid = hal_d.InterfaceWorkgroupIDOp(0).result
    tid = machine.thread_id(e)
    group = e.add(e.mul(pid, s.threads // lanes), e.div(tid, lanes))
    lane = e.rem(tid, lanes)
    f32v = vec_type(V, "f32")
    with e.if_(e.cmp("slt", group, mblocks * cdiv(F, channels))):
        m0, f0 = e.mul(e.rem(group, mblocks), rows), e.mul(e.div(group, mblocks), channels)
        clamp = lambda i, n: e.select(e.cmp("slt", i, n), i, n - 1)
        xs = [e.mul(clamp(e.add(m0, i), M), K) for i in range(rows)]
        ws = [e.mul(clamp(e.add(f0, j), F), K) for j in range(channels)]
        load = lambda memref, base, k: convert(
            vector_d.load(vec_type(V, p.dtype), memref, [e.add(base, k)], alignment=V * DTYPE_BYTES[p.dtype]), f32v)
        loop = e.for_(lane, K // V, lanes, [zeros(f32v)] * (rows * channels))
        with loop as (kv, accs, done):
            k = e.mul(kv, V)
            a = [load(memrefs[p.input], x, k) for x in xs]
            b = [load(memrefs[p.filter], w, k) for w in ws]
            done([math_d.fma(a[i], b[j], accs[i * channels + j]) for i in range(rows) for j in range(channels)])
        sums = [vector_d.reduction(ir.F32Type.get(), vector_d.CombiningKind.ADD, acc) for acc in loop.results]
        sums = [machine.subgroup_reduce(x, lanes, s.subgroup_size) for x in sums]
        one = vec_type(1, "f32")
        for i in range(rows):
            for j in range(channels):
                idx = i * channels + j
                with e.if_(e.cmp("eq", lane, idx % lanes)):
                    store_row_masked(e, p, memrefs, vector_d.broadcast(one, sums[idx]), 1,
                                     e.add(m0, i), e.add(f0, j))
