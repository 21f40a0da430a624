"""Experiment (GPU, CuPy + PyTorch): depthwise convs on small grids with the filter rows split
over threads. The direct kernel's item (P pixels x V channels, all R filter rows) is a serial
chain of R rows of loads and FMAs; at batch 1 its grid gives each SM scheduler about one warp, so
that chain is the kernel's time. Here RG threads share an item, thread g taking filter rows g,
g + RG, ...: each sums its rows (packed-f16 per row, f32 across rows) into P x V f32 partials,
parks them in shared memory, and after one barrier the RG threads add the partials of
their pixels, apply bias + relu and store. RG = 1 is the direct kernel's shape (no shared memory).

    python3 bench/experiments/depthwise_split_rows.py N H W C R S STRIDE

Prints each variant's time (CUPTI kernel durations as convc-bench; TIMING=graphs: CUDA graphs),
relative L2 error against PyTorch fp32 (poisoned output), registers, and the share of a same-size
copy's time (reads + writes of in + out bytes, as the bench's floor). The problem's sizes are
compile-time constants, as in convc's kernels (runtime divisions made it ~1.7x slower).
"""
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SRC = r'''
template<int R, int S, int SD, int P, int V, int RG, int ITEMS, int MINB>
__global__ void __launch_bounds__(RG * ITEMS, MINB) dw(const half* __restrict__ x, const half* __restrict__ f,
    const half* __restrict__ bias, half* __restrict__ out, int, int, int, int, int, int, int, int)
{
  // the problem's sizes as compile-time constants (as convc's kernels have them)
  constexpr int N = DIM_N, H = DIM_H, W = DIM_W, C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, pt = DIM_PAD, pl = DIM_PAD;
  extern __shared__ float4 part[];            // [RG][P][V/4][ITEMS]
  constexpr int NCOL = (P - 1) * SD + S;
  const int i = threadIdx.x % ITEMS, g = threadIdx.x / ITEMS;
  const int nv = C / V, segs = (Wo + P - 1) / P;
  const int total = N * Ho * segs * nv;
  const int item = blockIdx.x * ITEMS + i;
  const bool valid = item < total;
  const int it = valid ? item : 0;
  const int cv = it % nv, seg = it / nv;
  const int wo0 = (seg % segs) * P, band = seg / segs;
  const int ho = band % Ho, n = band / Ho;
  const int c0 = cv * V;
  const int h0 = ho * SD - pt, w0 = wo0 * SD - pl;
  float acc[P][V];
  #pragma unroll
  for (int p = 0; p < P; p++)
    #pragma unroll
    for (int k = 0; k < V; k++) acc[p][k] = 0.f;
  #pragma unroll
  for (int rr = 0; rr < (R + RG - 1) / RG; rr++) {
    const int r = g + rr * RG;
    const int hh = h0 + r;
    if (r < R && hh >= 0 && hh < H) {
      Vec<V> taps[S], xs[NCOL];
      #pragma unroll
      for (int s = 0; s < S; s++) taps[s] = ld<V>(f + (r * S + s) * C + c0);
      #pragma unroll
      for (int q = 0; q < NCOL; q++) {
        const int w = w0 + q;
        const bool ok = w >= 0 && w < W;
        Vec<V> v = ld<V>(x + ((n * H + hh) * W + (ok ? w : 0)) * C + c0);
        #pragma unroll
        for (int k = 0; k < V / 2; k++) xs[q].h[k] = ok ? v.h[k] : __float2half2_rn(0.f);
      }
      #pragma unroll
      for (int p = 0; p < P; p++) {
        #pragma unroll
        for (int k = 0; k < V / 2; k++) {
          __half2 s2 = __float2half2_rn(0.f);
          #pragma unroll
          for (int s = 0; s < S; s++) s2 = __hfma2(xs[p * SD + s].h[k], taps[s].h[k], s2);
          float2 f2 = __half22float2(s2);
          acc[p][2 * k] += f2.x; acc[p][2 * k + 1] += f2.y;
        }
      }
    }
  }
  if constexpr (RG > 1) {
    #pragma unroll
    for (int p = 0; p < P; p++)
      #pragma unroll
      for (int k = 0; k < V / 4; k++)
        part[((g * P + p) * (V / 4) + k) * ITEMS + i] =
            make_float4(acc[p][4 * k], acc[p][4 * k + 1], acc[p][4 * k + 2], acc[p][4 * k + 3]);
    __syncthreads();
  }
  #pragma unroll
  for (int p0 = 0; p0 < P; p0 += RG) {
    const int p = p0 + g;
    if (p >= P || !valid || wo0 + p >= Wo) continue;
    float o[V];
    #pragma unroll
    for (int k = 0; k < V; k++) o[k] = __half2float(bias[c0 + k]);
    if constexpr (RG > 1) {
      #pragma unroll
      for (int gg = 0; gg < RG; gg++)
        #pragma unroll
        for (int k = 0; k < V / 4; k++) {
          float4 t = part[((gg * P + p) * (V / 4) + k) * ITEMS + i];
          o[4 * k] += t.x; o[4 * k + 1] += t.y; o[4 * k + 2] += t.z; o[4 * k + 3] += t.w;
        }
    } else {
      #pragma unroll
      for (int pp = 0; pp < P; pp++)
        if (pp == p)
          #pragma unroll
          for (int k = 0; k < V; k++) o[k] += acc[pp][k];
    }
    Vec<V> r;
    #pragma unroll
    for (int k = 0; k < V / 2; k++) r.h[k] = __floats2half2_rn(fmaxf(o[2 * k], 0.f), fmaxf(o[2 * k + 1], 0.f));
    half* dst = out + ((n * Ho + ho) * Wo + wo0 + p) * C + c0;
    st<V>(dst, r);
  }
}
'''

# (pixels, channels per thread, row groups, items per CTA, min CTAs per SM)
VARIANTS = [(4, 4, 1, 128, 2), (2, 4, 1, 128, 1),
            (4, 4, 7, 32, 1), (4, 4, 7, 64, 1), (2, 4, 7, 32, 1), (2, 4, 7, 64, 1), (1, 4, 7, 64, 1),
            (4, 8, 7, 32, 1), (2, 8, 7, 32, 1), (8, 4, 7, 32, 1), (4, 4, 4, 32, 1), (4, 4, 4, 64, 1),
            (2, 4, 4, 64, 1), (4, 4, 2, 64, 1), (2, 4, 2, 64, 1), (4, 4, 3, 64, 1), (2, 4, 3, 64, 1),
            (1, 4, 3, 64, 1), (2, 8, 4, 32, 1), (4, 8, 3, 32, 1), (4, 4, 7, 16, 1), (2, 8, 7, 16, 1),
            (4, 8, 7, 16, 1), (4, 8, 4, 32, 1), (8, 8, 7, 16, 1)]


TIMING = os.environ.get("TIMING", "cupti")       # or "graphs" (harness.timeit)


def main():
    N, H, W, C, R, S, SD = h.shape_args("1 56 56 96 7 7 1")
    p = h.depthwise_problem(N, H, W, C, R, S, SD, relu=True)
    copy = h.copy_us(N * (H * W + p.Ho * p.Wo) * C // 2, graphs=TIMING)
    print("shape", [N, H, W, C, R, S, SD], "copy", round(copy, 2), "cudnn", round(h.cudnn_us(p, graphs=TIMING), 2),
          flush=True)
    names = []
    for P, V, RG, ITEMS, MINB in VARIANTS:
        if RG > R or C % V:
            continue
        names.append((f"dw<{R},{S},{SD},{P},{V},{RG},{ITEMS},{MINB}>", P, V, RG, ITEMS))
    mod = cp.RawModule(code=h.sized_source(p, SRC), options=("-std=c++17", "--use_fast_math"),
                       name_expressions=[n for n, *_ in names])
    args = (p.xin.data_ptr(), p.filt.data_ptr(), p.bias.data_ptr()) + h.dims(p)
    for name, P, V, RG, ITEMS in names:
        items = N * p.Ho * -(-p.Wo // P) * (C // V)
        smem = RG * P * V * 4 * ITEMS if RG > 1 else 0
        h.run_variant(p, f"P{P} V{V} RG{RG} items{ITEMS}", mod.get_function(name), (-(-items // ITEMS),),
                      RG * ITEMS, args, smem, copy, graphs=TIMING)


if __name__ == "__main__":
    main()
