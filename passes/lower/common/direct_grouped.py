"""The direct grouped/depthwise conv: one work item per (P output pixels along W, V channels).

Grouped and depthwise convs reduce over few channels per output (C/G: 1 for depthwise, often
4-32 for grouped), so an implicit GEMM would leave most of a GEMM tile idle; they are bound by
memory traffic and load instructions. Taps read the NHWC input directly (out-of-image taps
select zero, so the padding costs no buffer); the reuse of an input pixel by the R x S outputs
around it comes from the caches and, along W, from registers: per filter row an item loads
each input column its P outputs' taps touch once. Accumulation is f32 (fused multiply-adds);
the epilogue is the shared one, so every fused chain works here too.

- depthwise, multiplier 1 (filter [R, S, C]): per filter row, the input columns and S filter
  vectors, then P x S vector FMAs; a row whose input row lies in the padding is skipped by a
  branch. Unrolled rows may serve T output rows per item, each input row loaded once for all
  of them. Items channel-fastest: neighbouring lanes read neighbouring 16-byte channel vectors
  of the input and the filter (coalesced). On small grids an item's filter rows may be split
  over G threads, their partial sums meeting in workgroup memory after one barrier.
- depthwise, multiplier M = F/C: one pixel per item; output channel f reads input channel f // M
  (per-lane loads).
- pooling windows (max or sum; ConvProblem.pool): the depthwise item with its rows unrolled,
  no filter: per tap the window's combine (max in the input type, exact; sums in f32) instead of
  the FMA; taps in the padding, and the accumulators, start at the combine's identity (-inf for
  max, zero for sum).
- grouped with an [R, S, C/G, F] filter (convc-channels-last's form): like depthwise, per filter
  row and input channel the input columns (one value each, broadcast over the V lanes) and S
  filter vectors; channel-fastest items read neighbouring filter vectors.
- grouped with an [F, R, S, C/G] filter: the V channels of an item lie in one group. With a window
  and at least 8 channels per group, P pixels per item: per filter row and slice of Vc input
  channels, the input columns and S x V filter vectors, then P x V scalar accumulators take
  outer products. Otherwise one pixel: V vectors of Vc partial sums (one input vector and V
  filter vectors per tap and slice), reduced at the end. Items pixel-fastest (a warp shares its
  filter rows: one broadcast per load) except one-pixel items of narrow groups (C/G < 8),
  whose lanes then read neighbouring input vectors.
"""

from __future__ import annotations

from ...ir import ir, arith_d, hal_d, llvm_d, math_d, vector_d
from ...problem import ConvProblem, DTYPE_BYTES
from ...kernel_configs import DirectGroupedConfig
from ...schedule import Schedule
from .emit import cdiv, convert, splat, vec_type, zeros, Emitter
from .epilogue import store_row_masked


def segments_per_image(p: ConvProblem, c: DirectGroupedConfig) -> int:
    """Items per image and channel vector: output rows by c.rows, columns by c.pixels."""
    return cdiv(p.Ho, c.rows) * cdiv(p.Wo, c.pixels)


def runtime_segments(e: Emitter, x, c: DirectGroupedConfig):
    """segments_per_image of runtime extents x (lower/common/extents.py): ints fold."""
    a, b = e.ceil_div(x.Ho, c.rows), e.ceil_div(x.Wo, c.pixels)
    return a * b if isinstance(a, int) and isinstance(b, int) else e.mul(a, b)


def channel_fastest(p: ConvProblem, s: Schedule) -> bool:
    """Item order (measured on an H100, bench/NOTES.md): channel-fastest for depthwise convs,
    [R, S, C/G, F] filters and one-pixel items of narrow groups (C/G < 8), else pixel-fastest."""
    one_pixel = s.config_as(DirectGroupedConfig).pixels == 1
    return p.depthwise or p.filter_layout == "hwcf" or (one_pixel and p.C // p.groups < 8)


def row_fmas(p: ConvProblem, pixels: int, V: int, accumulate: str, xs: dict, taps: list, accs: list) -> list:
    """One filter row's pixels x S vector FMAs of a depthwise conv from the input columns xs
    ({column from the item's first tap: vector}) and the row's S taps, in the input type.
    accumulate f32: widened, into the f32 accumulators; f16_rows: each output's S taps summed
    in packed f16 (fma.rn.f16x2), then added to its f32 accumulator, so at most S products
    meet an f16 rounding."""
    f32v = vec_type(V, "f32")
    out = list(accs)
    if accumulate == "f16_rows":
        for i in range(pixels):
            part = zeros(vec_type(V, p.dtype))
            for sx in range(p.S):
                # llvm.intr.fma: IREE's GPU lowering widens math.fma on f16 to f32
                part = llvm_d.intr_fma(xs[i * p.stride[1] + sx * p.dilation[1]], taps[sx], part)
            out[i] = arith_d.addf(out[i], convert(part, f32v))
        return out
    xs = {q: convert(v, f32v) for q, v in xs.items()}
    taps = [convert(t, f32v) for t in taps]
    for i in range(pixels):
        for sx in range(p.S):
            out[i] = math_d.fma(xs[i * p.stride[1] + sx * p.dilation[1]], taps[sx], out[i])
    return out


def row_pool(p: ConvProblem, pixels: int, xs: dict, accs: list) -> list:
    """One window row of a pool: each output's S taps combined into its accumulator, in the
    accumulator's type (DirectGrouped._acc_type)."""
    out = list(accs)
    for i in range(pixels):
        for sx in range(p.S):
            x = xs[i * p.stride[1] + sx * p.dilation[1]]
            x = convert(x, out[i].type)
            out[i] = arith_d.maximumf(out[i], x) if p.pool == "max" else arith_d.addf(out[i], x)
    return out


class DirectGrouped:
    def __init__(self, p: ConvProblem, s: Schedule, machine):
        self.p, self.s, self.m = p, s, machine
        self.e = Emitter()
        self.V = s.block_n            # output channels per item
        self.Vc = s.block_k           # input channels per load (grouped)
        self.config = s.config_as(DirectGroupedConfig)
        self.P = self.config.pixels   # output pixels along W per item
        self.T = self.config.rows     # output rows per item (depthwise, rows unrolled)
        self.smem = None              # the staged depthwise path's copy slots
        # the image's sizes: ints, or index values read at run time (emit)
        self.H, self.W, self.Ho, self.Wo, self.howo = p.H, p.W, p.Ho, p.Wo, p.Ho * p.Wo

    def emit(self, memrefs: list) -> None:
        p, s, e = self.p, self.s, self.e
        nv = p.F // self.V
        x = getattr(memrefs, "extents", None)       # runtime sizes (batch, H, W), else the problem's
        if x is not None:
            self.H, self.W, self.Ho, self.Wo, self.howo = x.H, x.W, x.Ho, x.Wo, x.howo
            segments = e.mul(x.N, runtime_segments(e, x, self.config))
        else:
            segments = e.mul(p.N, segments_per_image(p, self.config))
        total = e.mul(segments, nv)
        pid = hal_d.InterfaceWorkgroupIDOp(0).result
        tid = self.m.thread_id(e)
        if self.config.row_groups > 1:
            return self._split_rows(memrefs, pid, tid, total, nv)
        if s.smem_bytes:
            self.smem = self.m.alloc_workgroup([s.smem_bytes // DTYPE_BYTES[p.dtype]], p.dtype)
        base = e.mul(pid, s.block_m)
        with e.for_(0, s.block_m // s.threads) as (i, _, _y):
            idx = e.add(base, e.add(e.mul(i, s.threads), tid))
            with e.if_(e.cmp("slt", idx, total)):
                if channel_fastest(p, s):
                    seg, j = e.div(idx, nv), e.rem(idx, nv)
                else:
                    seg, j = e.rem(idx, segments), e.div(idx, segments)
                f0 = e.mul(j, self.V)
                if p.filter_layout == "hwcf":
                    self._grouped_hwcf(memrefs, seg, f0)
                elif not p.depthwise and self.P > 1:
                    self._grouped(memrefs, seg, f0)
                elif not p.depthwise:
                    store_row_masked(e, p, memrefs, self._grouped_dot(memrefs, seg, f0), self.V, seg, f0)
                elif p.F == p.C:
                    self._depthwise(memrefs, seg, f0)
                else:
                    store_row_masked(e, p, memrefs, self._multiplier(memrefs, seg, f0), self.V, seg, f0)

    # ------------------------------------------------------------------ helpers
    def _load(self, memref, index, width: int):
        dt = self.p.dtype
        return vector_d.load(vec_type(width, dt), memref, [index], alignment=width * DTYPE_BYTES[dt])

    def _segment(self, seg):
        """(row = n*Ho + ho, wo0, n, h0, w0) of segment `seg` (P outputs from wo0 along W, of
        output rows ho .. ho + T - 1)."""
        p, e = self.p, self.e
        nseg, nrows = e.ceil_div(self.Wo, self.P), e.ceil_div(self.Ho, self.T)
        band = e.div(seg, nseg)
        wo0 = e.mul(e.rem(seg, nseg), self.P)
        n, ho = e.div(band, nrows), e.mul(e.rem(band, nrows), self.T)
        return (e.add(e.mul(n, self.Ho), ho), wo0, n, e.sub(e.mul(ho, p.stride[0]), p.pad[0]),
                e.sub(e.mul(wo0, p.stride[1]), p.pad[1]))

    def _columns(self) -> list[int]:
        """Input columns (from w0) the taps of the P outputs touch."""
        p = self.p
        return sorted({i * p.stride[1] + sx * p.dilation[1] for i in range(self.P) for sx in range(p.S)})

    def _column(self, h_ok, rowbase, w0, q, channel):
        """(ok, index) of the input at column w0 + q of a row, channel `channel`: whether it
        lies in the image, and its element index (0 outside: a safe address); h_ok None: the
        row is known to be in the image."""
        p, e = self.p, self.e
        w = e.add(w0, q)
        ok = e.all_of(*([] if h_ok is None else [h_ok]), e.cmp("sge", w, 0), e.cmp("slt", w, self.W))
        return ok, e.select(ok, e.add(e.mul(e.add(rowbase, w), p.C), channel), 0)

    def _input(self, x, h_ok, rowbase, w0, q, channel, width, widen: bool = True):
        """Input vector (width channels from `channel`) at column w0 + q of the current row,
        zero outside the image, in f32 (widen) or the input type (h_ok as _column)."""
        p = self.p
        ok, addr = self._column(h_ok, rowbase, w0, q, channel)
        v = arith_d.select(ok, self._load(x, addr, width), self._identity(vec_type(width, p.dtype)))
        return convert(v, vec_type(width, "f32")) if widen else v

    def _row(self, r, n, h0):
        """(h_ok, rowbase) of filter row r (the input row h0 + r * dilation)."""
        return self._input_row(self.e.mul(r, self.p.dilation[0]), n, h0)

    def _input_row(self, off, n, h0):
        """(h_ok, rowbase) of input row h0 + off: whether it is in the image, and its first
        pixel's index."""
        e = self.e
        h = e.add(h0, off)
        return e.all_of(e.cmp("sge", h, 0), e.cmp("slt", h, self.H)), e.mul(e.add(e.mul(n, self.H), h), self.W)

    def _identity(self, t: ir.Type) -> ir.Value:
        """What a tap in the padding adds: zero, or -inf for a max-pool."""
        return splat(t, float("-inf")) if self.p.pool == "max" else zeros(t)

    def _acc_type(self) -> ir.Type:
        """An item's accumulator vector: f32, or the input type for a max-pool on GPUs (exact;
        packed 16-bit max instructions). On llvm-cpu a max-pool also takes f32: IREE 3.13's
        f16 expansion there breaks on vector maximumf (as in epilogue.py)."""
        native = self.p.pool == "max" and self.m.backend != "cpu"
        return vec_type(self.V, self.p.dtype if native else "f32")

    def _store(self, memrefs, row, wo0, f0, accs) -> None:
        p, e = self.p, self.e
        accs = [convert(a, vec_type(self.V, "f32")) for a in accs]
        for i, acc in enumerate(accs):
            with e.if_(e.cmp("slt", e.add(wo0, i), self.Wo)):
                store_row_masked(e, p, memrefs, acc, self.V, e.add(e.mul(row, self.Wo), e.add(wo0, i)), f0)

    # ------------------------------------------------------------------ the three forms
    def _depthwise(self, memrefs, seg, f0) -> None:
        """Per filter row: nothing where its input row lies outside the image (a branch: the
        padding adds nothing, so neither loads nor FMAs), else the item's input columns (zero
        outside the image at the left and right edges), the row's S taps and its FMAs. The
        rows are a loop, or unrolled (config.unrolled: the compiler may then schedule one
        row's loads among another's FMAs), then for T output rows per item: each input row's
        columns are loaded once for every output row whose window holds it; with padding
        "select" no branch: a row in the padding is loaded as zeros like the left and right
        edges' columns (its FMAs add nothing), so every row's loads may go out together."""
        if self.s.stages > 1:
            return self._depthwise_staged(memrefs, seg, f0)
        p, e, V, P, T = self.p, self.e, self.V, self.P, self.T
        if p.pool and not self.config.unrolled:
            raise ValueError("a pooling window takes the unrolled item (plan_pool)")
        x, wgt = memrefs[p.input], None if p.pool else memrefs[p.filter]
        row, wo0, n, h0, w0 = self._segment(seg)
        f32v = self._acc_type()

        def taps(r):
            return None if p.pool else self._taps(wgt, r, f0)

        def columns(rowbase, h_ok=None):
            return self._row_columns(x, h_ok, rowbase, w0, f0)

        if not self.config.unrolled:
            loop = e.for_(0, p.R, 1, [zeros(f32v)] * P)
            with loop as (r, accs, set_r):
                set_r(self._filter_row(x, wgt, r, n, h0, w0, f0, accs))
            return self._store(memrefs, row, wo0, f0, loop.results)

        accs = [[self._identity(f32v)] * P for _ in range(T)]
        sh, dh = p.stride[0], p.dilation[0]
        for i in range((T - 1) * sh + (p.R - 1) * dh + 1):      # input rows from h0
            users = [(t, (i - t * sh) // dh) for t in range(T)
                     if i >= t * sh and (i - t * sh) % dh == 0 and (i - t * sh) // dh < p.R]
            if not users:
                continue
            h_ok, rowbase = self._input_row(i, n, h0)

            def sums(users=users, rowbase=rowbase, h_ok=None):
                xs = columns(rowbase, h_ok)
                return [v for t, r in users for v in self._row_fmas(xs, taps(e.c(r)), accs[t])]

            if self.config.padding == "select":
                new = sums(h_ok=h_ok)
            else:
                new = e.if_values(h_ok, [f32v] * (P * len(users)), sums,
                                  lambda users=users: [v for t, _ in users for v in accs[t]])
            for k, (t, _) in enumerate(users):
                accs[t] = new[k * P:(k + 1) * P]
        if T == 1:
            return self._store(memrefs, row, wo0, f0, accs[0])
        # every row of a multi-row item behind its bound (measured: dropping the branch where
        # Ho is a multiple of T made MobileNetV2 56/112 px 12-14% slower on an H200)
        for t in range(T):
            with e.if_(e.cmp("slt", e.add(e.rem(row, self.Ho), t), self.Ho)):
                self._store(memrefs, e.add(row, t), wo0, f0, accs[t])

    def _row_fmas(self, xs: dict, taps: list, accs: list) -> list:
        if self.p.pool:
            return row_pool(self.p, self.P, xs, accs)
        return row_fmas(self.p, self.P, self.V, self.config.accumulate, xs, taps, accs)

    def _taps(self, wgt, r, f0) -> list:
        """Filter row r's S tap vectors (channels f0 ..)."""
        p, e = self.p, self.e
        return [self._load(wgt, e.add(e.mul(e.add(e.mul(r, p.S), sx), p.F), f0), self.V) for sx in range(p.S)]

    def _row_columns(self, x, h_ok, rowbase, w0, f0) -> dict:
        """The item's input columns of one input row, in the input type."""
        return {q: self._input(x, h_ok, rowbase, w0, q, f0, self.V, widen=False) for q in self._columns()}

    def _filter_row(self, x, wgt, r, n, h0, w0, f0, accs, valid=None) -> list:
        """accs after filter row r (a runtime index): unchanged where its input row lies in the
        padding (or `valid` is false), else plus the row's FMAs."""
        h_ok, rowbase = self._row(r, n, h0)
        ok = h_ok if valid is None else self.e.all_of(valid, h_ok)
        return self.e.if_values(ok, [vec_type(self.V, "f32")] * self.P,
                                lambda: self._row_fmas(self._row_columns(x, None, rowbase, w0, f0),
                                                       self._taps(wgt, r, f0), accs),
                                lambda: accs)

    def _split_rows(self, memrefs, pid, tid, total, nv) -> None:
        """Depthwise, multiplier 1, an item's filter rows split over G = row_groups threads:
        thread g of item slot i sums rows g, g + G, ... (each as _depthwise's loop does) into P
        f32 partial vectors in workgroup memory; after a barrier, thread g adds the G partials
        of pixels g, g + G, ... and stores them through the epilogue. On a small grid each
        thread's chain of loads and FMAs is G times shorter (batch 1: about one warp per SM
        scheduler otherwise, so that chain is the kernel's time). Where threads run one after
        another (llvm-cpu) each phase loops over the slots and groups."""
        p, s, e, V, P = self.p, self.s, self.e, self.V, self.P
        G, items = self.config.row_groups, s.block_m
        x, wgt = memrefs[p.input], memrefs[p.filter]
        part = self.m.alloc_workgroup([G * items * P * V], "f32")
        f32v = vec_type(V, "f32")

        def slot(g, i, k):       # partial k of item slot i, group g: neighbouring slots adjacent
            return e.mul(e.add(e.mul(e.add(e.mul(g, P), k), items), i), V)

        def item(i):             # (valid, segment, channel vector) of slot i; invalid: item 0
            idx = e.add(e.mul(pid, items), i)
            valid = e.cmp("slt", idx, total)
            idx = e.select(valid, idx, 0)
            return valid, e.div(idx, nv), e.rem(idx, nv)

        def each(body):
            if self.m.threads_are_parallel:
                body(e.rem(tid, items), e.div(tid, items))
                return
            with e.for_(0, items) as (i, _, _y):
                with e.for_(0, G) as (g, _, _y2):
                    body(i, g)

        def partial(i, g):
            _, seg, j = item(i)
            f0 = e.mul(j, V)
            _, _, n, h0, w0 = self._segment(seg)
            accs = [zeros(f32v)] * P
            for k in range(-(-p.R // G)):
                r = e.add(g, k * G)
                accs = self._filter_row(x, wgt, r, n, h0, w0, f0, accs,
                                        e.cmp("slt", r, p.R) if (k + 1) * G > p.R else None)
            for k, acc in enumerate(accs):
                vector_d.store(acc, part, [slot(g, i, k)])

        def finish(i, g):
            valid, seg, j = item(i)
            f0 = e.mul(j, V)
            row, wo0, *_ = self._segment(seg)
            for k0 in range(0, P, G):
                k = e.add(g, k0)
                wo = e.add(wo0, k)
                with e.if_(e.all_of(valid, e.cmp("slt", k, P), e.cmp("slt", wo, self.Wo))):
                    acc = vector_d.load(f32v, part, [slot(0, i, k)])
                    for gg in range(1, G):
                        acc = arith_d.addf(acc, vector_d.load(f32v, part, [slot(gg, i, k)]))
                    store_row_masked(e, p, memrefs, acc, V, e.add(e.mul(row, self.Wo), wo), f0)

        each(partial)
        self.m.barrier()
        each(finish)

    def _depthwise_staged(self, memrefs, seg, f0) -> None:
        """Depthwise, multiplier 1, with `stages` filter rows' input columns in flight: each
        thread copies them asynchronously into its own workgroup-memory slots (zero fill outside
        the image: the padding), row r + stages - 1 issued before row r is consumed. Plain loads
        written ahead would be sunk by ptxas to their first use (one memory latency per filter
        row); async copies have no register results to sink. A ring of stages + 1 rows: the row
        a copy overwrites was read two iterations earlier, with a wait between."""
        p, e, V, P = self.p, self.e, self.V, self.P
        x, wgt = memrefs[p.input], memrefs[p.filter]
        u = min(self.s.stages, p.R)
        cols = self._columns()
        row, wo0, n, h0, w0 = self._segment(seg)
        tid = self.m.thread_id(e)
        buf = self.smem

        def slot(r, q):          # element index of row r's column q: lanes of a slot adjacent
            return e.mul(e.add(e.mul(e.add(e.mul(e.rem(r, u + 1), len(cols)), q), self.s.threads), tid), V)

        def issue(r):
            h_ok, rowbase = self._row(r, n, h0)
            for k, q in enumerate(cols):
                ok, src = self._column(h_ok, rowbase, w0, q, f0)
                self.m.async_copy_16(buf, slot(r, k), x, src, ok)

        for r in range(u - 1):
            issue(r)
            self.m.async_commit()
        f32v = vec_type(V, "f32")
        loop = e.for_(0, p.R, 1, [zeros(f32v)] * P)
        with loop as (r, accs, set_r):
            ahead = e.add(r, u - 1)
            with e.if_(e.cmp("slt", ahead, p.R)):
                issue(ahead)
            self.m.async_commit()
            taps = [self._load(wgt, e.add(e.mul(e.add(e.mul(r, p.S), sx), p.F), f0), V) for sx in range(p.S)]
            self.m.async_wait(u - 1)
            xs = {q: vector_d.load(vec_type(V, p.dtype), buf, [slot(r, k)]) for k, q in enumerate(cols)}
            set_r(self._row_fmas(xs, taps, accs))
        self._store(memrefs, row, wo0, f0, loop.results)

    def _multiplier(self, memrefs, m, f0) -> ir.Value:
        """Depthwise with a channel multiplier M, one pixel m: output channel f reads input
        channel f // M."""
        p, e, V = self.p, self.e, self.V
        x, wgt = memrefs[p.input], memrefs[p.filter]
        mult = p.F // p.C
        n, rem = e.div(m, self.howo), e.rem(m, self.howo)
        h0 = e.sub(e.mul(e.div(rem, self.Wo), p.stride[0]), p.pad[0])
        w0 = e.sub(e.mul(e.rem(rem, self.Wo), p.stride[1]), p.pad[1])
        f32v = vec_type(V, "f32")
        outer = e.for_(0, p.R, 1, [zeros(f32v)])
        with outer as (r, acc_r, set_r):
            h_ok, rowbase = self._row(r, n, h0)
            inner = e.for_(0, p.S, 1, acc_r)
            with inner as (sx, acc_s, set_s):
                w = e.add(w0, e.mul(sx, p.dilation[1]))
                ok = e.all_of(h_ok, e.cmp("sge", w, 0), e.cmp("slt", w, self.W))
                base = e.mul(e.select(ok, e.add(rowbase, w), 0), p.C)
                lanes = [vector_d.extract(vector_d.load(vec_type(1, p.dtype), x, [e.add(base, e.div(e.add(f0, i), mult))]),
                                          [], [0]) for i in range(V)]
                xv = vector_d.from_elements(vec_type(V, p.dtype), lanes)
                xv = arith_d.select(ok, xv, zeros(vec_type(V, p.dtype)))
                wv = self._load(wgt, e.add(e.mul(e.add(e.mul(r, p.S), sx), p.F), f0), V)
                set_s([math_d.fma(convert(xv, f32v), convert(wv, f32v), acc_s[0])])
            set_r(inner.results)
        return outer.results[0]

    def _grouped_hwcf(self, memrefs, seg, f0) -> None:
        """Grouped with an [R, S, C/G, F] filter: per filter row and input channel c of the
        group, the P + S - 1 input values (one per column, broadcast over the V lanes) and S
        filter vectors of V output channels (neighbouring lanes: neighbouring vectors), then
        P x S vector FMAs, as for a depthwise conv."""
        p, e, V, P = self.p, self.e, self.V, self.P
        x, wgt = memrefs[p.input], memrefs[p.filter]
        cg, fg = p.C // p.groups, p.F // p.groups
        row, wo0, n, h0, w0 = self._segment(seg)
        cbase = e.mul(e.div(f0, fg), cg)
        f32v = vec_type(V, "f32")
        outer = e.for_(0, p.R, 1, [zeros(f32v)] * P)
        with outer as (r, accs_r, set_r):
            h_ok, rowbase = self._row(r, n, h0)
            chans = e.for_(0, cg, 1, accs_r)
            with chans as (c, accs, set_c):
                channel = e.add(cbase, c)
                xs = {q: vector_d.broadcast(f32v, vector_d.extract(self._input(x, h_ok, rowbase, w0, q, channel, 1),
                                                                   [], [0]))
                      for q in self._columns()}
                taps = [convert(self._load(wgt, e.add(e.mul(e.add(e.mul(e.add(e.mul(r, p.S), sx), cg), c), p.F), f0), V),
                                f32v) for sx in range(p.S)]
                out = list(accs)
                for i in range(P):
                    for sx in range(p.S):
                        out[i] = math_d.fma(xs[i * p.stride[1] + sx * p.dilation[1]], taps[sx], out[i])
                set_c(out)
            set_r(chans.results)
        self._store(memrefs, row, wo0, f0, outer.results)

    def _grouped_dot(self, memrefs, m, f0) -> ir.Value:
        """Grouped, one pixel m: V dot products over the group's input channels, as V vectors
        of Vc partial sums reduced at the end."""
        p, e, V, Vc = self.p, self.e, self.V, self.Vc
        x, wgt = memrefs[p.input], memrefs[p.filter]
        cg, fg = p.C // p.groups, p.F // p.groups
        n, rem = e.div(m, self.howo), e.rem(m, self.howo)
        h0 = e.sub(e.mul(e.div(rem, self.Wo), p.stride[0]), p.pad[0])
        w0 = e.sub(e.mul(e.rem(rem, self.Wo), p.stride[1]), p.pad[1])
        cbase = e.mul(e.div(f0, fg), cg)
        f32c = vec_type(Vc, "f32")
        outer = e.for_(0, p.R, 1, [zeros(f32c)] * V)
        with outer as (r, acc_r, set_r):
            h_ok, rowbase = self._row(r, n, h0)
            taps = e.for_(0, p.S, 1, acc_r)
            with taps as (sx, acc_s, set_s):
                tap = e.add(e.mul(r, p.S), sx)
                chunks = e.for_(0, cg, Vc, acc_s)
                with chunks as (cc, acc_c, set_c):
                    xv = self._input(x, h_ok, rowbase, w0, e.mul(sx, p.dilation[1]), e.add(cbase, cc), Vc)
                    out = []
                    for i in range(V):
                        wi = self._load(wgt, e.add(e.mul(e.add(e.mul(e.add(f0, i), p.R * p.S), tap), cg), cc), Vc)
                        out.append(math_d.fma(xv, convert(wi, f32c), acc_c[i]))
                    set_c(out)
                set_s(chunks.results)
            set_r(taps.results)
        sums = [vector_d.reduction(ir.F32Type.get(), vector_d.CombiningKind.ADD, a) for a in outer.results]
        return vector_d.from_elements(vec_type(V, "f32"), sums)

    def _grouped(self, memrefs, seg, f0) -> None:
        p, e, V, Vc, P = self.p, self.e, self.V, self.Vc, self.P
        x, wgt = memrefs[p.input], memrefs[p.filter]
        cg, fg = p.C // p.groups, p.F // p.groups
        row, wo0, n, h0, w0 = self._segment(seg)
        cbase = e.mul(e.div(f0, fg), cg)
        f32c = vec_type(Vc, "f32")
        acc0 = [arith_d.constant(ir.F32Type.get(), 0.0)] * (P * V)
        outer = e.for_(0, p.R, 1, acc0)
        with outer as (r, accs_r, set_r):
            h_ok, rowbase = self._row(r, n, h0)
            chunks = e.for_(0, cg, Vc, accs_r)
            with chunks as (cc, accs, set_c):
                channel = e.add(cbase, cc)
                xs = {}
                for q in self._columns():
                    xv = self._input(x, h_ok, rowbase, w0, q, channel, Vc)
                    xs[q] = [vector_d.extract(xv, [], [c]) for c in range(Vc)]
                out = list(accs)
                for sx in range(p.S):
                    tap = e.add(e.mul(r, p.S), sx)
                    for v in range(V):
                        addr = e.add(e.mul(e.add(e.mul(e.add(f0, v), p.R * p.S), tap), cg), cc)
                        wv = convert(self._load(wgt, addr, Vc), f32c)
                        ws = [vector_d.extract(wv, [], [c]) for c in range(Vc)]
                        for i in range(P):
                            xq = xs[i * p.stride[1] + sx * p.dilation[1]]
                            for c in range(Vc):
                                out[i * V + v] = math_d.fma(xq[c], ws[c], out[i * V + v])
                set_c(out)
            set_r(chunks.results)
        res = outer.results
        self._store(memrefs, row, wo0, f0,
                    [vector_d.from_elements(vec_type(V, "f32"), res[i * V:(i + 1) * V]) for i in range(P)])


def emit_direct_grouped(p: ConvProblem, s: Schedule, machine, memrefs: list) -> None:
    DirectGrouped(p, s, machine).emit(memrefs)


def direct_grouped_batch_grid(p: ConvProblem, s: Schedule):
    """The grid for runtime sizes: one workgroup per block_m items."""
    def grid(x):
        e = Emitter()
        items = e.mul(e.mul(x.N, runtime_segments(e, x, s.config_as(DirectGroupedConfig))), p.F // s.block_n)
        return [e.div(e.add(items, s.block_m - 1), s.block_m), e.c(1), e.c(1)]
    return grid
