"""Experiment (GPU, CuPy + PyTorch): stride-1 depthwise convs at batch 1 (ConvNeXt 7x7 56 px) as
SIMT items that read a CTA's staged input window at compile-time offsets AND split their filter
rows over threads. convc's batch-1 kernel (direct_grouped split rows) reads its taps from
global memory with per-column bounds selects and repeats its index arithmetic in each of an
item's threads (~113 instructions per 16 outputs); the staged-tile experiment
(`depthwise_smem_tile.py`) removed that arithmetic but kept whole items per thread (a long
serial chain at batch 1). Here both: the grid is one round of small CTAs; every thread stages
part of the window by 16-byte async copies (zero fill = the padding) while loading its filter
row's taps, then sums ONE filter row of P pixels x 8 channels in packed f16 (taps in registers,
the P + S - 1 input columns read once), converts to f32 and parks it in shared memory; after one
barrier the item's threads add the G = R partials of one output chunk each, apply bias + relu
and store f16.

    tsplit<TH, TW, CB, P, EPI8>: a CTA owns TH x TW outputs x CB channels; an item is P pixels
    along W x 8 channels of one output row, R threads per item (one per filter row); EPI8 1:
    a thread of the epilogue finishes one pixel's 8 channels (16-byte store), 0: 4 channels.
    tfull<TH, TW, CB, P>: the same staging, one thread per item (all R rows, f32 across rows in
    registers): no partials, no second barrier, R times the chain.
    ABL (timing only, outputs wrong): 1 no staging, 2 no row sums, 4 no stores.
    empty / copy16: a kernel with the tsplit grid that does nothing / copies the output's bytes
    (16 bytes per thread): the launch and memory chain every kernel pays.

Question: can a batch-1 kernel whose per-SM chain is one L2 round trip, ~0.5 us of packed-f16
issue and two barriers reach 70% of a same-size copy (~2.0 us on an H100) where convc's split
rows take 3.1 us?

    python3 bench/experiments/depthwise_tile_split.py N H W C R

Prints each variant's time (CUPTI kernel durations, 4 rotating inputs), relative L2 error
against PyTorch fp32 (poisoned output), registers and the share of a same-size copy.
"""
import os
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SRC = r'''
#ifndef ABL
#define ABL 0
#endif
#define R_ 7
__device__ __forceinline__ uint4 lds128(unsigned a) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
  return v;
}
__device__ __forceinline__ void sts128(unsigned a, float4 v) {
  asm volatile("st.shared.v4.f32 [%0], {%1,%2,%3,%4};" :: "r"(a), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w));
}
__device__ __forceinline__ float4 lds128f(unsigned a) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a));
  return v;
}
__device__ __forceinline__ void stg128(void* p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
__device__ __forceinline__ void stg64(void* p, uint2 v) {
  asm volatile("st.global.v2.u32 [%0], {%1,%2};" :: "l"(p), "r"(v.x), "r"(v.y));
}
__device__ __forceinline__ unsigned pack(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<unsigned*>(&h);
}

// Window geometry: WR rows x WC columns x CB channels, pixel pitch CB * 2 bytes, rows padded so
// that neighbouring rows start in the other half of a 128-byte bank line.
template<int TH, int TW, int CB> struct Win {
  static constexpr int NV = CB / 8, WR = TH + R_ - 1, WC = TW + R_ - 1;
  static constexpr int PIX = CB * 2, ROW0 = WC * PIX;
  static constexpr int ROW = (ROW0 / 64) % 2 ? ROW0 : ROW0 + 64;
  static constexpr int BYTES = WR * ROW;
};

// Every thread stages 16-byte chunks of the window (zero fill outside the image) with async copies.
template<int TH, int TW, int CB, int THREADS>
__device__ __forceinline__ void stage(unsigned win, const half* x, int n, int h0, int w0, int c0) {
  using W = Win<TH, TW, CB>;
  #pragma unroll 4
  for (int i = threadIdx.x; i < W::WR * W::WC * W::NV; i += THREADS) {
    const int v = i % W::NV, col = (i / W::NV) % W::WC, row = i / (W::NV * W::WC);
    const int ih = h0 + row - DIM_PAD, iw = w0 + col - DIM_PAD;
    const bool ok = ih >= 0 && ih < DIM_H && iw >= 0 && iw < DIM_W;
    const half* src = x + (((size_t)n * DIM_H + (ok ? ih : 0)) * DIM_W + (ok ? iw : 0)) * DIM_C + c0 + v * 8;
    cp16(win + row * W::ROW + col * W::PIX + v * 16, src, ok);
  }
  commit();
}

// One filter row of P pixels x 8 channels from the window: packed f16 sums, returned in f32.
template<int TH, int TW, int CB, int P>
__device__ __forceinline__ void row_sum(float (&s)[P][8], unsigned base, const Vec<8> (&w)[R_]) {
  using W = Win<TH, TW, CB>;
  __half2 a[P][4];
  #pragma unroll
  for (int p = 0; p < P; p++)
    #pragma unroll
    for (int k = 0; k < 4; k++) a[p][k] = __float2half2_rn(0.f);
  #pragma unroll
  for (int j = 0; j < P + R_ - 1; j++) {
    const uint4 raw = lds128(base + j * W::PIX);
    const __half2* xv = reinterpret_cast<const __half2*>(&raw);
    #pragma unroll
    for (int p = 0; p < P; p++) {
      const int t = j - p;
      if (t < 0 || t >= R_) continue;
      #pragma unroll
      for (int k = 0; k < 4; k++) a[p][k] = __hfma2(xv[k], w[t].h[k], a[p][k]);
    }
  }
  #pragma unroll
  for (int p = 0; p < P; p++)
    #pragma unroll
    for (int k = 0; k < 4; k++) { const float2 f = __half22float2(a[p][k]); s[p][2 * k] = f.x; s[p][2 * k + 1] = f.y; }
}

template<int TH, int TW, int CB, int P, int EPI8>
__global__ void __launch_bounds__(TH * (TW / P) * (CB / 8) * R_)
tsplit(const half* __restrict__ x, const half* __restrict__ filt, const half* __restrict__ bias, half* __restrict__ out) {
  using W = Win<TH, TW, CB>;
  constexpr int NV = W::NV, QW = TW / P, ITEMS = TH * QW * NV, THREADS = ITEMS * R_;
  constexpr int CBLK = DIM_C / CB;
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned win = (unsigned)__cvta_generic_to_shared(smem);
  const unsigned part = win + W::BYTES;                 // f32 [item-row...][P][2 halves][R_][NV][4]
  const int tw = blockIdx.x, th = blockIdx.y, n = blockIdx.z / CBLK, cb = blockIdx.z % CBLK;
  const int h0 = th * TH, w0 = tw * TW, c0 = cb * CB;
  if (!(ABL & 1)) stage<TH, TW, CB, THREADS>(win, x, n, h0, w0, c0);
  const int t = threadIdx.x, v = t % NV, g = (t / NV) % R_, it = t / (NV * R_);
  const int r = it / QW, q = it % QW;
  Vec<8> w[R_];
  #pragma unroll
  for (int s = 0; s < R_; s++) w[s] = ld<8>(filt + (g * R_ + s) * DIM_C + c0 + v * 8);
  wait<0>();
  __syncthreads();
  float s[P][8];
  if (ABL & 2) {
    #pragma unroll
    for (int p = 0; p < P; p++)
      #pragma unroll
      for (int k = 0; k < 8; k++) s[p][k] = __half2float(w[k % R_].h[p % 4].x);
  } else {
    row_sum<TH, TW, CB, P>(s, win + (r + g) * W::ROW + q * P * W::PIX + v * 16, w);
  }
  // partials: chunk (p, half) of item (r, q), row g, vector v -> conflict-free 16-byte stores
  // layout: [(r, q)][p][half][g][v][4 floats]
  const unsigned item = part + (r * QW + q) * (P * 2 * R_ * NV * 16);
  #pragma unroll
  for (int p = 0; p < P; p++)
    #pragma unroll
    for (int hf = 0; hf < 2; hf++)
      sts128(item + ((p * 2 + hf) * R_ * NV + g * NV + v) * 16,
             make_float4(s[p][4 * hf], s[p][4 * hf + 1], s[p][4 * hf + 2], s[p][4 * hf + 3]));
  const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + c0 + v * 8));
  __syncthreads();
  const int oh = h0 + r;
  if (EPI8) {
    for (int p = g; p < P; p += R_) {
      const int ow = w0 + q * P + p;
      float o[8] = {};
      #pragma unroll
      for (int hf = 0; hf < 2; hf++)
        #pragma unroll
        for (int gg = 0; gg < R_; gg++) {
          const float4 f = lds128f(item + ((p * 2 + hf) * R_ * NV + gg * NV + v) * 16);
          o[4 * hf] += f.x; o[4 * hf + 1] += f.y; o[4 * hf + 2] += f.z; o[4 * hf + 3] += f.w;
        }
      const __half2* b2 = reinterpret_cast<const __half2*>(&braw);
      uint4 res;
      unsigned* rw = reinterpret_cast<unsigned*>(&res);
      #pragma unroll
      for (int k = 0; k < 4; k++) {
        const float2 bf = __half22float2(b2[k]);
        rw[k] = pack(fmaxf(o[2 * k] + bf.x, 0.f), fmaxf(o[2 * k + 1] + bf.y, 0.f));
      }
      if (!(ABL & 4) && oh < DIM_HO && ow < DIM_WO) stg128(out + (((size_t)n * DIM_HO + oh) * DIM_WO + ow) * DIM_C + c0 + v * 8, res);
    }
  } else {
    for (int c = g; c < 2 * P; c += R_) {
      const int p = c >> 1, hf = c & 1, ow = w0 + q * P + p;
      float o[4] = {};
      #pragma unroll
      for (int gg = 0; gg < R_; gg++) {
        const float4 f = lds128f(item + (c * R_ * NV + gg * NV + v) * 16);
        o[0] += f.x; o[1] += f.y; o[2] += f.z; o[3] += f.w;
      }
      const unsigned bw0 = hf ? braw.z : braw.x, bw1 = hf ? braw.w : braw.y;
      const float2 b0 = __half22float2(*reinterpret_cast<const __half2*>(&bw0));
      const float2 b1 = __half22float2(*reinterpret_cast<const __half2*>(&bw1));
      const uint2 res = make_uint2(pack(fmaxf(o[0] + b0.x, 0.f), fmaxf(o[1] + b0.y, 0.f)),
                                   pack(fmaxf(o[2] + b1.x, 0.f), fmaxf(o[3] + b1.y, 0.f)));
      if (!(ABL & 4) && oh < DIM_HO && ow < DIM_WO) stg64(out + (((size_t)n * DIM_HO + oh) * DIM_WO + ow) * DIM_C + c0 + v * 8 + 4 * hf, res);
    }
  }
}

// One thread per item: all R_ filter rows, f32 across rows in registers.
template<int TH, int TW, int CB, int P>
__global__ void __launch_bounds__(TH * (TW / P) * (CB / 8))
tfull(const half* __restrict__ x, const half* __restrict__ filt, const half* __restrict__ bias, half* __restrict__ out) {
  using W = Win<TH, TW, CB>;
  constexpr int NV = W::NV, QW = TW / P, THREADS = TH * QW * NV, CBLK = DIM_C / CB;
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned win = (unsigned)__cvta_generic_to_shared(smem);
  const int tw = blockIdx.x, th = blockIdx.y, n = blockIdx.z / CBLK, cb = blockIdx.z % CBLK;
  const int h0 = th * TH, w0 = tw * TW, c0 = cb * CB;
  stage<TH, TW, CB, THREADS>(win, x, n, h0, w0, c0);
  const int t = threadIdx.x, v = t % NV, it = t / NV, r = it / QW, q = it % QW;
  const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + c0 + v * 8));
  wait<0>();
  __syncthreads();
  float o[P][8] = {};
  #pragma unroll 1
  for (int g = 0; g < R_; g++) {
    Vec<8> w[R_];
    #pragma unroll
    for (int s = 0; s < R_; s++) w[s] = ld<8>(filt + (g * R_ + s) * DIM_C + c0 + v * 8);
    float s[P][8];
    row_sum<TH, TW, CB, P>(s, win + (r + g) * W::ROW + q * P * W::PIX + v * 16, w);
    #pragma unroll
    for (int p = 0; p < P; p++)
      #pragma unroll
      for (int k = 0; k < 8; k++) o[p][k] += s[p][k];
  }
  const int oh = h0 + r;
  const __half2* b2 = reinterpret_cast<const __half2*>(&braw);
  #pragma unroll
  for (int p = 0; p < P; p++) {
    const int ow = w0 + q * P + p;
    uint4 res;
    unsigned* rw = reinterpret_cast<unsigned*>(&res);
    #pragma unroll
    for (int k = 0; k < 4; k++) {
      const float2 bf = __half22float2(b2[k]);
      rw[k] = pack(fmaxf(o[p][2 * k] + bf.x, 0.f), fmaxf(o[p][2 * k + 1] + bf.y, 0.f));
    }
    if (oh < DIM_HO && ow < DIM_WO) stg128(out + (((size_t)n * DIM_HO + oh) * DIM_WO + ow) * DIM_C + c0 + v * 8, res);
  }
}

extern "C" __global__ void empty(const half*, const half*, const half*, half*) {}

extern "C" __global__ void copy16(const half* __restrict__ x, const half*, const half*, half* __restrict__ out) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i * 8 < (size_t)DIM_N * DIM_HO * DIM_WO * DIM_C)
    stg128(out + i * 8, __ldg(reinterpret_cast<const uint4*>(x) + i));
}
'''

# tsplit: (TH, TW, CB, P, EPI8)
SPLIT = [(8, 8, 32, 4, 1), (8, 8, 32, 4, 0), (4, 8, 32, 4, 1), (4, 8, 32, 4, 0), (8, 8, 32, 8, 1),
         (4, 8, 32, 8, 0), (4, 4, 96, 4, 0), (7, 8, 32, 4, 0), (4, 14, 32, 7, 0), (8, 8, 16, 4, 0),
         (4, 8, 16, 4, 0), (8, 4, 32, 2, 0), (4, 8, 32, 2, 0), (2, 8, 32, 4, 0)]
# tfull: (TH, TW, CB, P)
FULL = [(8, 8, 32, 2), (4, 8, 32, 2), (8, 8, 32, 1), (4, 8, 32, 1), (8, 8, 16, 2)]
TIMING = os.environ.get("TIMING", "cupti")
ONLY = os.environ.get("ONLY")
ABL = int(os.environ.get("ABL", "0"))


def smem_bytes(th, tw, cb, p, split):
    nv, wc = cb // 8, tw + 6
    row = wc * cb * 2
    row = row if (row // 64) % 2 else row + 64
    win = (th + 6) * row
    return win + (th * (tw // p) * p * 2 * 7 * nv * 16 if split else 0)


def main():
    p, copy = h.band_setup("1 56 56 96 7", TIMING)
    assert p.R == 7 and p.S == 7 and p.stride == 1
    N, C = p.N, p.C
    split = [v for i, v in enumerate(SPLIT) if C % v[2] == 0 and (not ONLY or f"s{i}" in ONLY.split(","))]
    full = [v for i, v in enumerate(FULL) if C % v[2] == 0 and (not ONLY or f"f{i}" in ONLY.split(","))]
    names_s = [f"tsplit<{th},{tw},{cb},{pp},{e}>" for th, tw, cb, pp, e in split]
    names_f = [f"tfull<{th},{tw},{cb},{pp}>" for th, tw, cb, pp in full]
    mod = cp.RawModule(code=f"#define ABL {ABL}\n" + h.sized_source(p, SRC), options=("-std=c++17", "--use_fast_math"),
                       name_expressions=names_s + names_f)
    args = (p.xin, p.filt.data_ptr(), p.bias.data_ptr())
    # the launch and memory chain: an empty kernel and a 16-byte-per-thread copy of the output's bytes
    threads = 256
    blocks = -(-N * p.Ho * p.Wo * C // 8 // threads)
    for name in ("empty", "copy16"):
        h.run_variant(p, name, mod.get_function(name), (blocks,), threads, args, 0, copy, graphs=TIMING, rotate=4)
    for name, (th, tw, cb, pp, e) in zip(names_s, split):
        k = mod.get_function(name)
        grid = (-(-p.Wo // tw), -(-p.Ho // th), N * (C // cb))
        threads = th * (tw // pp) * (cb // 8) * 7
        smem = smem_bytes(th, tw, cb, pp, True)
        h.run_variant(p, name, k, grid, threads, args, smem, copy, graphs=TIMING, rotate=4)
        print("   ctas", grid[0] * grid[1] * grid[2], "threads", threads, "smem", smem, flush=True)
    for name, (th, tw, cb, pp) in zip(names_f, full):
        k = mod.get_function(name)
        grid = (-(-p.Wo // tw), -(-p.Ho // th), N * (C // cb))
        threads = th * (tw // pp) * (cb // 8)
        smem = smem_bytes(th, tw, cb, pp, False)
        h.run_variant(p, name, k, grid, threads, args, smem, copy, graphs=TIMING, rotate=4)
        print("   ctas", grid[0] * grid[1] * grid[2], "threads", threads, "smem", smem, flush=True)


if __name__ == "__main__":
    main()
