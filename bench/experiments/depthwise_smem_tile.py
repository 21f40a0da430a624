"""Experiment (GPU, CuPy + PyTorch): a depthwise conv from a double-buffered shared-memory
input tile. A persistent CTA walks tiles of TH output rows x TW output columns x CB channels; all
threads stage the next tile's input window ((TH + R - 1) x (TW + S - 1) pixels x CB channels) by
16-byte cp.async with zero fill for the padding while they compute the current one, so the items
read their input columns from shared memory at constant offsets (no address arithmetic or
edge selects per column, unlike the direct kernel) and each input pixel crosses L2 once per
tile. Items: PX pixels x V channels of one output row; lanes channel-fastest, then rows; the
row pitch padded so that two rows' vectors of a wavefront fall in different banks. ACC 0: packed
f16 per filter row, f32 across rows (convc's f16_rows); ACC 1: packed f16 per 2 filter rows; ACC 2:
all rows in packed f16.

    python3 bench/experiments/depthwise_smem_tile.py N H W C R S STRIDE

Prints each variant's time (CUPTI kernel durations as convc-bench, 4 rotating inputs), relative
L2 error against PyTorch fp32 (poisoned output), registers, and the share of a same-size copy.
Not a convc kernel: it measures how far a staged-tile SIMT design gets on the 7x7 layers.
"""
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SRC = r'''
template<int R, int S, int SD, int TH, int TW, int CB, int PX, int V, int ACC, int MINB, int STAGE = 1>
__global__ void __launch_bounds__(TH * (TW / PX) * (CB / V), MINB) dw(const half* __restrict__ x,
    const half* __restrict__ f, const half* __restrict__ bias, half* __restrict__ out, int, int, int, int, int, int, int, int)
{
  constexpr int N = DIM_N, H = DIM_H, W = DIM_W, C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, pad = DIM_PAD;
  constexpr int ROWS = (TH - 1) * SD + R, COLS = (TW - 1) * SD + S, CH = CB / 8;           // 16-byte chunks per pixel
  constexpr int NAT = COLS * CB * 2;
  constexpr int PITCH = NAT + (((CB * 2) % 128 - NAT % 128) + 128) % 128;    // row pitch in bytes
  constexpr int SLOT = ROWS * PITCH;
  constexpr int CV = CB / V, STRIPS = TW / PX, THREADS = TH * STRIPS * CV;
  constexpr int CHUNKS = ROWS * COLS * CH;
  constexpr int TC = C / CB, TWN = Wo / TW, THN = Ho / TH, TILES = N * THN * TWN * TC;
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
  const int tid = threadIdx.x;
  const int cv = tid % CV, t = (tid / CV) % TH, strip = tid / (CV * TH);

  auto issue = [&](int tile, int slot) {
    const int ct = tile % TC, wt = (tile / TC) % TWN, ht = (tile / (TC * TWN)) % THN, n = tile / (TC * TWN * THN);
    const int h0 = ht * TH * SD - pad, w0 = wt * TW * SD - pad, c0 = ct * CB;
    for (int k = tid; k < CHUNKS; k += THREADS) {
      const int cc = k % CH, col = (k / CH) % COLS, row = k / (CH * COLS);
      const int hh = h0 + row, ww = w0 + col;
      const bool ok = hh >= 0 && hh < H && ww >= 0 && ww < W;
      const half* src = ok ? x + ((size_t)(n * H + hh) * W + ww) * C + c0 + cc * 8 : x;
      cp16(sbase + slot * SLOT + row * PITCH + (col * CB + cc * 8) * 2, src, ok);
    }
    commit();
  };

  int tile = blockIdx.x;
  if (STAGE && tile < TILES) issue(tile, 0);
  for (int i = 0; tile < TILES; i++, tile += gridDim.x) {
    const int slot = i & 1;
    const int next = tile + gridDim.x;
    if (STAGE) {
      if (next < TILES) { issue(next, slot ^ 1); wait<1>(); } else { wait<0>(); }
      __syncthreads();
    }
    const int ct = tile % TC, wt = (tile / TC) % TWN, ht = (tile / (TC * TWN)) % THN, n = tile / (TC * TWN * THN);
    const int c0 = ct * CB + cv * V;
    const unsigned char* base = smem + slot * SLOT + t * SD * PITCH + (strip * PX * SD * CB + cv * V) * 2;
    float acc[PX][V];
    #pragma unroll
    for (int p = 0; p < PX; p++)
      #pragma unroll
      for (int k = 0; k < V; k++) acc[p][k] = 0.f;
    __half2 part[PX][V / 2];
    #pragma unroll
    for (int r = 0; r < R; r++) {
      Vec<V> taps[S], xs[(PX - 1) * SD + S];
      #pragma unroll
      for (int s = 0; s < S; s++) taps[s] = ld<V>(f + (r * S + s) * C + c0);
      #pragma unroll
      for (int q = 0; q < (PX - 1) * SD + S; q++) {
        const unsigned char* a = base + r * PITCH + q * CB * 2;
        if constexpr (V == 4) *reinterpret_cast<uint2*>(&xs[q]) = *reinterpret_cast<const uint2*>(a);
        else *reinterpret_cast<uint4*>(&xs[q]) = *reinterpret_cast<const uint4*>(a);
      }
      const bool fresh = ACC == 0 || (ACC == 1 && r % 2 == 0) || r == 0;
      const bool flush = ACC == 0 || (ACC == 1 && r % 2 == 1) || r == R - 1;
      #pragma unroll
      for (int p = 0; p < PX; p++)
        #pragma unroll
        for (int k = 0; k < V / 2; k++) {
          __half2 s2 = fresh ? __float2half2_rn(0.f) : part[p][k];
          #pragma unroll
          for (int s = 0; s < S; s++) s2 = __hfma2(xs[p * SD + s].h[k], taps[s].h[k], s2);
          if (flush) { float2 f2 = __half22float2(s2); acc[p][2 * k] += f2.x; acc[p][2 * k + 1] += f2.y; }
          else part[p][k] = s2;
        }
    }
    const int ho = ht * TH + t, wo0 = wt * TW + strip * PX;
    Vec<V> b = ld<V>(bias + c0);
    #pragma unroll
    for (int p = 0; p < PX; p++) {
      Vec<V> o;
      #pragma unroll
      for (int k = 0; k < V / 2; k++) {
        float2 bb = __half22float2(b.h[k]);
        o.h[k] = __floats2half2_rn(fmaxf(acc[p][2 * k] + bb.x, 0.f), fmaxf(acc[p][2 * k + 1] + bb.y, 0.f));
      }
      st<V>(out + ((size_t)(n * Ho + ho) * Wo + wo0 + p) * C + c0, o);
    }
    if (STAGE) __syncthreads();
  }
}
'''

# per (R, stride): (TH, TW, CB, PX, V, ACC, MINB)
VARIANTS = {
    (7, 1): [
        (8, 56, 16, 8, 4, 0, 2), (4, 56, 32, 8, 4, 0, 2), (4, 56, 16, 8, 4, 0, 4), (8, 28, 32, 7, 4, 0, 2),
        (8, 14, 96, 7, 4, 0, 1), (8, 28, 16, 7, 4, 0, 3), (8, 28, 32, 7, 8, 0, 2), (8, 28, 16, 7, 8, 0, 3),
        (8, 56, 16, 14, 4, 0, 2), (8, 28, 32, 7, 4, 1, 2), (8, 28, 32, 7, 8, 1, 2), (8, 28, 16, 7, 8, 1, 3),
        (8, 28, 32, 7, 4, 2, 2), (8, 28, 32, 7, 8, 2, 2),
    ],
    (5, 2): [
        (4, 14, 48, 2, 4, 0, 2), (2, 14, 48, 2, 4, 0, 4), (4, 28, 16, 4, 4, 0, 5), (7, 28, 16, 4, 4, 0, 3),
        (4, 28, 16, 2, 4, 0, 4), (2, 28, 48, 4, 4, 0, 2), (2, 28, 48, 2, 8, 0, 3), (4, 14, 48, 2, 8, 0, 3),
        (4, 14, 16, 2, 4, 0, 8), (7, 14, 48, 2, 4, 0, 1), (4, 14, 48, 1, 4, 0, 1), (4, 14, 144, 2, 8, 0, 1),
    ],
}

TIMING = os.environ.get("TIMING", "cupti")
ONLY = os.environ.get("ONLY")
# COMPUTE_ONLY=1: no staging, waits or barriers (the items read whatever the slot holds): the
# time of the items' own instructions, a ceiling for the design (outputs wrong by construction)
COMPUTE_ONLY = os.environ.get("COMPUTE_ONLY") == "1"


def smem_bytes(R, S, SD, TH, TW, CB):
    nat = ((TW - 1) * SD + S) * CB * 2
    pitch = nat + (((CB * 2) % 128 - nat % 128) + 128) % 128
    return 2 * ((TH - 1) * SD + R) * pitch


def main():
    N, H, W, C, R, S, SD = h.shape_args("32 56 56 96 7 7 1")
    p = h.depthwise_problem(N, H, W, C, R, S, SD, relu=True)
    copy = h.copy_us(N * (H * W + p.Ho * p.Wo) * C // 2, graphs=TIMING, rotate=4)
    print("shape", [N, H, W, C, R, S, SD], "copy", round(copy, 2), "cudnn", round(h.cudnn_us(p, graphs=TIMING), 2),
          flush=True)
    names = []
    for TH, TW, CB, PX, V, ACC, MINB in VARIANTS[(R, SD)]:
        if p.Ho % TH or p.Wo % TW or C % CB or TW % PX or CB % V:
            continue
        name = f"dw<{R},{S},{SD},{TH},{TW},{CB},{PX},{V},{ACC},{MINB},{0 if COMPUTE_ONLY else 1}>"
        if ONLY and name not in ONLY.split(";"):
            continue
        names.append((name, TH, TW, CB, PX, V))
    mod = cp.RawModule(code=h.sized_source(p, SRC), options=("-std=c++17", "--use_fast_math"),
                       name_expressions=[n for n, *_ in names])
    args = (p.xin.data_ptr(), p.filt.data_ptr(), p.bias.data_ptr()) + h.dims(p)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    for name, TH, TW, CB, PX, V in names:
        k = mod.get_function(name)
        smem = smem_bytes(R, S, SD, TH, TW, CB)
        threads = TH * (TW // PX) * (CB // V)
        k.max_dynamic_shared_size_bytes = smem
        per_sm = h.ctas_per_sm(k.num_regs, threads, smem)
        tiles = N * (p.Ho // TH) * (p.Wo // TW) * (C // CB)
        grid = min(tiles, sms * max(per_sm, 1))
        h.run_variant(p, f"{name} threads={threads} ctas/sm={per_sm}", k, (grid,), threads, args, smem, copy,
                      graphs=TIMING, rotate=4)


if __name__ == "__main__":
    main()
