"""Experiment (GPU, CuPy + PyTorch): a depthwise conv (default: EfficientNet's 5x5 stride 2,
32 x 56 x 56 x 144, f16, bias + relu) with each thread walking down a band of BAND output rows
of one column strip (P pixels x V channels): the R input rows of its window stay in registers
and each step loads only the STRIDE new rows, issued one step ahead of the FMAs that use them
(a software pipeline across output rows; the direct kernel's items start cold each time).
Packed-f16 filter rows, f32 across rows; taps in registers or re-read from L1 per step.

    python3 bench/experiments/depthwise_column_walk.py N H W C R S STRIDE

Prints each variant's CUPTI time (ROTATE input copies used in turn, 4 as convc-bench), relative
L2 error against PyTorch fp32 (poisoned output), registers, and the share of a same-size copy's
time. Not a convc kernel.
"""
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SRC = r'''
template<int R, int S, int SD, int P, int V, int BAND, int TAPREG, int NT, int MINB>
__global__ void __launch_bounds__(NT, MINB) walk(const half* __restrict__ x, const half* __restrict__ f,
    const half* __restrict__ bias, half* __restrict__ out, int, int, int, int, int, int, int, int)
{
  constexpr int N = DIM_N, H = DIM_H, W = DIM_W, C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, pt = DIM_PAD, pl = DIM_PAD;
  constexpr int NCOL = (P - 1) * SD + S, NV = C / V, STRIPS = (Wo + P - 1) / P, BANDS = (Ho + BAND - 1) / BAND;
  const int idx = blockIdx.x * NT + threadIdx.x;
  if (idx >= N * BANDS * STRIPS * NV) return;
  const int cv = idx % NV, strip = (idx / NV) % STRIPS, band = (idx / NV / STRIPS) % BANDS, n = idx / NV / STRIPS / BANDS;
  const int c0 = cv * V, wo0 = strip * P, ho0 = band * BAND;
  const int w0 = wo0 * SD - pl;
  bool cok[NCOL];
  int coff[NCOL];
  #pragma unroll
  for (int q = 0; q < NCOL; q++) {
    const int w = w0 + q;
    cok[q] = w >= 0 && w < W;
    coff[q] = (cok[q] ? w : 0) * C + c0;
  }
  auto load_row = [&](int hi, Vec<V>* dst) {
    const bool hok = hi >= 0 && hi < H;
    const half* row = x + (n * H + (hok ? hi : 0)) * W * C;
    #pragma unroll
    for (int q = 0; q < NCOL; q++) dst[q] = (hok && cok[q]) ? ld<V>(row + coff[q]) : zero<V>();
  };
  Vec<V> taps[TAPREG ? R * S : 1];
  if constexpr (TAPREG) {
    #pragma unroll
    for (int t = 0; t < R * S; t++) taps[t] = ld<V>(f + t * C + c0);
  }
  float b[V];
  #pragma unroll
  for (int k = 0; k < V; k++) b[k] = __half2float(bias[c0 + k]);
  Vec<V> win[R][NCOL], nxt[SD][NCOL];
  // the window of output row ho0 (its last SD rows come in as the first step's "next" rows)
  #pragma unroll
  for (int r = 0; r < R - SD; r++) load_row(ho0 * SD - pt + r, win[r + SD]);
  #pragma unroll
  for (int r = 0; r < SD; r++) load_row(ho0 * SD - pt + R - SD + r, nxt[r]);
  #pragma unroll 1
  for (int step = 0; step < BAND; step++) {      // a loop: unrolled, the compiler hoists every step's loads
    const int ho = ho0 + step;
    #pragma unroll
    for (int r = 0; r < R - SD; r++)
      #pragma unroll
      for (int q = 0; q < NCOL; q++) win[r][q] = win[r + SD][q];
    #pragma unroll
    for (int r = 0; r < SD; r++)
      #pragma unroll
      for (int q = 0; q < NCOL; q++) win[R - SD + r][q] = nxt[r][q];
    if (step + 1 < BAND) {       // the next step's new rows, ahead of this step's FMAs
      #pragma unroll
      for (int r = 0; r < SD; r++) load_row((ho + 1) * SD - pt + R - SD + r, nxt[r]);
    }
    if (ho >= Ho) break;
    float acc[P][V];
    #pragma unroll
    for (int p = 0; p < P; p++)
      #pragma unroll
      for (int k = 0; k < V; k++) acc[p][k] = b[k];
    #pragma unroll
    for (int r = 0; r < R; r++) {
      Vec<V> tr[S];
      #pragma unroll
      for (int s = 0; s < S; s++) tr[s] = TAPREG ? taps[TAPREG ? r * S + s : 0] : ld<V>(f + (r * S + s) * C + c0);
      #pragma unroll
      for (int p = 0; p < P; p++)
        #pragma unroll
        for (int k = 0; k < V / 2; k++) {
          __half2 s2 = __float2half2_rn(0.f);
          #pragma unroll
          for (int s = 0; s < S; s++) s2 = __hfma2(win[r][p * SD + s].h[k], tr[s].h[k], s2);
          float2 f2 = __half22float2(s2);
          acc[p][2 * k] += f2.x; acc[p][2 * k + 1] += f2.y;
        }
    }
    #pragma unroll
    for (int p = 0; p < P; p++) {
      if (wo0 + p >= Wo) continue;
      Vec<V> o;
      #pragma unroll
      for (int k = 0; k < V / 2; k++) o.h[k] = __floats2half2_rn(fmaxf(acc[p][2 * k], 0.f), fmaxf(acc[p][2 * k + 1], 0.f));
      half* dst = out + ((n * Ho + ho) * Wo + wo0 + p) * C + c0;
      st<V>(dst, o);
    }
  }
}
'''

# (pixels, channels per thread, output rows per band, taps in registers, threads, min CTAs per SM)
VARIANTS = [(2, 4, 7, 0, 128, 1), (2, 4, 14, 0, 128, 1), (4, 4, 7, 0, 128, 1), (4, 4, 4, 0, 128, 1),
            (4, 4, 14, 0, 128, 1), (4, 4, 7, 0, 64, 1), (4, 4, 7, 1, 128, 1), (8, 4, 7, 0, 128, 1),
            (2, 8, 7, 0, 128, 1), (4, 4, 2, 0, 128, 1), (1, 4, 7, 0, 128, 1), (4, 4, 7, 0, 256, 1)]
TIMING = os.environ.get("TIMING", "cupti")
ROTATE = int(os.environ.get("ROTATE", "4"))      # input copies used in turn (convc-bench's default)


def main():
    N, H, W, C, R, S, SD = h.shape_args("32 56 56 144 5 5 2")
    p = h.depthwise_problem(N, H, W, C, R, S, SD, relu=True)
    copy = h.copy_us(N * (H * W + p.Ho * p.Wo) * C // 2, graphs=TIMING, rotate=ROTATE)
    print("shape", [N, H, W, C, R, S, SD], "copy", round(copy, 2), "cudnn", round(h.cudnn_us(p, graphs=TIMING), 2),
          flush=True)
    names = [(f"walk<{R},{S},{SD},{P},{V},{B},{T},{NT},{M}>", P, V, B, NT) for P, V, B, T, NT, M in VARIANTS
             if C % V == 0]
    mod = cp.RawModule(code=h.sized_source(p, SRC), options=("-std=c++17", "--use_fast_math"),
                       name_expressions=[n for n, *_ in names])
    args = (p.xin.data_ptr(), p.filt.data_ptr(), p.bias.data_ptr()) + h.dims(p)
    for name, P, V, B, NT in names:
        threads = N * -(-p.Ho // B) * -(-p.Wo // P) * (C // V)
        h.run_variant(p, name, mod.get_function(name), (-(-threads // NT),), NT, args, 0, copy, graphs=TIMING,
                      rotate=ROTATE)


if __name__ == "__main__":
    main()
