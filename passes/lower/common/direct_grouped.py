"""The direct grouped/depthwise conv: one work item per (output pixel, V output channels).

Grouped and depthwise convs reduce over few channels per output (C/G: 1 for depthwise, often
4-32 for grouped), so an implicit GEMM would leave most of a GEMM tile idle; they are bound by
memory traffic. Depthwise items (and narrow groups, C/G < 8) are channel-fastest, so
neighbouring lanes read neighbouring channel vectors of one input pixel and of the filter
(coalesced); wider groups' items are pixel-fastest, so the V filter rows (R*S*C/G long) an item
reads are the same for a whole warp (one broadcast each) rather than V rows per lane. The reuse of an input pixel by the R x S outputs
around it comes from the caches. Accumulation is f32 (fused multiply-adds); the epilogue is the
shared one, so every fused chain works here too. Out-of-image taps read nothing (a select), so
the zero padding costs no buffer.

- depthwise, multiplier 1 (filter [R, S, C]): per tap one input vector and one filter vector;
- depthwise, multiplier M = F/C: output channel f reads input channel f // M (per-lane loads);
- grouped (filter [F, R, S, C/G]): the V channels of an item lie in one group; per tap and per
  vector of Vc input channels, one input vector and V filter vectors (contiguous in C/G), and
  the V dot products are reduced at the end.
"""

from __future__ import annotations

from ...ir import ir, arith_d, hal_d, math_d, vector_d
from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Schedule
from .emit import Emitter, vec_type, zeros, convert
from .epilogue import store_row_masked


def _cdiv(a, b):
    return -(-a // b)


def channel_fastest(p: ConvProblem) -> bool:
    """Item order (measured on an H100, bench/NOTES.md): channel-fastest for depthwise and
    narrow groups, pixel-fastest from 8 channels per group."""
    return p.depthwise or p.C // p.groups < 8


class DirectGrouped:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.e = Emitter()
        self.V = s.block_n            # output channels per item
        self.Vc = s.block_k           # input channels per load (grouped)

    def emit(self, memrefs: list) -> None:
        p, s, e = self.p, self.s, self.e
        nv = p.F // self.V
        total = p.gemm_m * nv
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        tid = self.m.thread_id(e)
        base = e.mul(pid, s.block_m)
        with e.for_(0, s.thread_m) as (i, _, _y):
            idx = e.add(base, e.add(e.mul(i, s.threads), tid))
            with e.if_(e.cmp("slt", idx, total)):
                if channel_fastest(p):   # lanes read neighbouring channel vectors
                    m, j = e.div(idx, nv), e.rem(idx, nv)
                else:                    # pixel-fastest: a warp's filter loads are one broadcast row
                    m, j = e.rem(idx, p.gemm_m), e.div(idx, p.gemm_m)
                f0 = e.mul(j, self.V)
                acc = self._accumulate(memrefs, m, f0)
                store_row_masked(e, p, memrefs, acc, self.V, m, f0)

    def _load(self, memref, index, width: int, aligned: bool = True):
        dt = self.p.dtype
        return vector_d.load(vec_type(width, dt), memref, [index],
                             alignment=width * DTYPE_BYTES[dt] if aligned else DTYPE_BYTES[dt])

    def _accumulate(self, memrefs, m, f0) -> ir.Value:
        """vector<V x f32>: the conv of output row m, channels f0 .. f0+V-1."""
        p, e = self.p, self.e
        x, wgt = memrefs[p.input], memrefs[p.filter]
        howo = p.Ho * p.Wo
        n = e.div(m, howo)
        rem = e.rem(m, howo)
        h0 = e.sub(e.mul(e.div(rem, p.Wo), p.stride[0]), p.pad[0])
        w0 = e.sub(e.mul(e.rem(rem, p.Wo), p.stride[1]), p.pad[1])
        V = self.V
        f32v = vec_type(V, "f32")
        grouped = not p.depthwise
        if grouped:
            accs = [zeros(vec_type(self.Vc, "f32")) for _ in range(V)]
        else:
            accs = [zeros(f32v)]
        outer = e.for_(0, p.R, 1, accs)
        with outer as (r, acc_r, set_r):
            h = e.add(h0, e.mul(r, p.dilation[0]))
            h_ok = e.all_of(e.cmp("sge", h, 0), e.cmp("slt", h, p.H))
            inner = e.for_(0, p.S, 1, acc_r)
            with inner as (sx, acc_s, set_s):
                w = e.add(w0, e.mul(sx, p.dilation[1]))
                ok = e.all_of(h_ok, e.cmp("sge", w, 0), e.cmp("slt", w, p.W))
                pix = e.select(ok, e.add(e.mul(e.add(e.mul(n, p.H), h), p.W), w), 0)
                tap = e.add(e.mul(r, p.S), sx)
                if grouped:
                    set_s(self._grouped_tap(x, wgt, pix, ok, tap, f0, acc_s))
                else:
                    set_s([self._depthwise_tap(x, wgt, pix, ok, tap, f0, acc_s[0])])
            set_r(inner.results)
        loop_results = outer.results
        if not grouped:
            return loop_results[0]
        sums = [vector_d.reduction(ir.F32Type.get(), vector_d.CombiningKind.ADD, a) for a in loop_results]
        return vector_d.from_elements(f32v, sums)

    def _depthwise_tap(self, x, wgt, pix, ok, tap, f0, acc):
        p, e, V = self.p, self.e, self.V
        mult = p.F // p.C
        wv = self._load(wgt, e.add(e.mul(tap, p.F), f0), V)
        if mult == 1:
            xv = self._load(x, e.add(e.mul(pix, p.C), f0), V)
        else:
            base = e.mul(pix, p.C)
            lanes = [vector_d.load(vec_type(1, p.dtype), x, [e.add(base, e.div(e.add(f0, i), mult))])
                     for i in range(V)]
            xv = lanes[0] if V == 1 else vector_d.from_elements(
                vec_type(V, p.dtype), [vector_d.extract(l, [], [0]) for l in lanes])
        xv = arith_d.select(ok, xv, zeros(vec_type(V, p.dtype)))
        f32v = vec_type(V, "f32")
        return math_d.fma(convert(xv, f32v), convert(wv, f32v), acc)

    def _grouped_tap(self, x, wgt, pix, ok, tap, f0, accs):
        p, e, V, Vc = self.p, self.e, self.V, self.Vc
        cg = p.C // p.groups
        fg = p.F // p.groups
        rs = p.R * p.S
        cbase = e.add(e.mul(pix, p.C), e.mul(e.div(f0, fg), cg))
        f32c = vec_type(Vc, "f32")
        zero = zeros(vec_type(Vc, p.dtype))
        loop = e.for_(0, cg, Vc, accs)
        with loop as (cc, acc_c, set_c):
            xv = convert(arith_d.select(ok, self._load(x, e.add(cbase, cc), Vc), zero), f32c)
            out = []
            for i in range(V):
                wi = self._load(wgt, e.add(e.mul(e.add(e.mul(e.add(f0, i), rs), tap), cg), cc), Vc)
                out.append(math_d.fma(xv, convert(wi, f32c), acc_c[i]))
            set_c(out)
        return loop.results


def emit_direct_grouped(p: ConvProblem, s: Schedule, machine, memrefs: list) -> None:
    DirectGrouped(p, s, machine).emit(memrefs)
