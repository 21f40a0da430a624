"""Experiment (GPU, CuPy + PyTorch): stride-1 depthwise convs at batch 1 (ConvNeXt 7x7) as banded
matrix products on mma.sync m16n8k16 whose 16 M rows are 16 output rows of one CTA tile (8
columns each), instead of 16 images (`depthwise_strip_band.py`, which needs a batch of 16) or 16
rows of a transposed channel plane (`depthwise_mma`). Each tile's input window (TR + R - 1 rows x
16 columns x the tile's channels, zeros = the padding) is staged by 16-byte async copies; per
filter row a lane gathers 8 pixels x 8 channels (16-byte loads; staged row pitch 17 pixels, odd,
so a quarter-warp's gathers hit 8 distinct bank groups), pairs columns of a channel with PRMT and
issues 8 mma.sync (f32 accumulation); bias + relu + f16 from the accumulators, 16-byte stores.

- tileband8: one warp per tile of TR rows x 8 columns x 8 channels, all R filter rows, the B
  fragments (the filter row as a shifted band) from a precomputed table in global memory;
- tilesplit: RG warps per such tile, warp w taking filter rows w, w + RG, ..., f32 partials added
  through shared memory before the epilogue (one pixel's 8 channels per thread);
- tilesplit16: tiles of 16 channels (a pixel's 32 bytes: whole L2 sectors), warps per channel
  half and row group, the B fragments built in the kernel from the tile's filter taps staged with
  zero padding (no selects) and paired by PRMT.

ABL (timing only, outputs wrong): 1 no staging, 2 no B table loads, 4 no mma, 8 no stores.

The split-row SIMT items convc runs at batch 1 issue ~113 instructions per 16 outputs; the band
needs far fewer for the taps. Question: does that bring ConvNeXt 7x7 56 px at batch 1 (3.1 us on
an H100, 44% of a same-size copy) to 70% of the copy (~2.0 us)? Answer (H100,
results/index.jsonl (bench/results/h100_depthwise_tile_band_2026-11-26.log, at c407075)): no; best 3.4 us (tileband8), the shell
without staging, B loads or mma already ~2.0 us.

    python3 bench/experiments/depthwise_tile_band.py N H W C R

Prints each variant's time (CUPTI kernel durations, 4 rotating inputs), relative L2 error
against PyTorch fp32 (poisoned output), registers and the share of a same-size copy.
"""
import os
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from depthwise_strip_band import band_table  # noqa: E402

SRC = r'''
#ifndef ABL
#define ABL 0
#endif
__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint4 lds128(unsigned a) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
  return v;
}
__device__ __forceinline__ unsigned word(const uint4& v, int i) { return reinterpret_cast<const unsigned*>(&v)[i]; }
// channel ch of two 8-channel pixels as one f16 pair
__device__ __forceinline__ unsigned pair(const uint4& lo, const uint4& hi, int ch) {
  return __byte_perm(word(lo, ch >> 1), word(hi, ch >> 1), (ch & 1) ? 0x7632 : 0x5410);
}

// Staging: input rows h0 .. h0 + IR - 1 x 16 columns from w0, CHUNKS 16-byte channel chunks from
// channel c0 per pixel, at pixel pitch PPX chunks and row pitch RP pixels; zeros out of the image
// (ABL & 1: nothing staged); thread `first` of `stride`.
template<int IR, int RP, int PPX, int CHUNKS>
__device__ __forceinline__ void stage(unsigned tbase, const half* x, int n, int h0, int w0, int c0, int first, int stride) {
  constexpr int H = DIM_H, W = DIM_W, C = DIM_C;
  #pragma unroll
  for (int i = first; i < ((ABL & 1) ? 0 : IR * 16 * CHUNKS); i += stride) {
    const int k = i % CHUNKS, pix = i / CHUNKS, col = pix % 16, row = pix / 16;
    const int hh = h0 + row, ww = w0 + col;
    const bool ok = hh >= 0 && hh < H && ww >= 0 && ww < W;
    const half* src = x + (((size_t)n * H + (ok ? hh : 0)) * W + (ok ? ww : 0)) * C + c0 + k * 8;
    cp16(tbase + 16 * ((row * RP + col) * PPX + k), src, ok);
  }
}
// The lane's 8 gather addresses: segment (output row) g and g + 8, clamped to the tile's TR rows,
// columns 2q + e + 8 kk, chunk `chunk` of the pixel.
template<int TR, int RP, int PPX>
__device__ __forceinline__ void gather_offsets(unsigned (&goff)[2][2][2], unsigned tbase, int g, int q, int chunk) {
  const int m[2] = {g < TR ? g : TR - 1, g + 8 < TR ? g + 8 : TR - 1};
  #pragma unroll
  for (int hh = 0; hh < 2; hh++)
    #pragma unroll
    for (int kk = 0; kk < 2; kk++)
      #pragma unroll
      for (int e = 0; e < 2; e++) goff[hh][kk][e] = tbase + 16 * ((m[hh] * RP + 2 * q + e + 8 * kk) * PPX + chunk);
}
// One filter row (its input rows `roff` bytes past the offsets): the 8 gathers, A fragments of 8
// channels paired by PRMT, 8 mma with bfrag(ch, b0, b1) giving a channel's band (ABL & 4: an xor
// instead of the mma).
template<class BFrag>
__device__ __forceinline__ void row_products(float (&acc)[8][4], const unsigned (&goff)[2][2][2], unsigned roff,
                                             BFrag bfrag) {
  uint4 v[2][2][2];
  #pragma unroll
  for (int hh = 0; hh < 2; hh++)
    #pragma unroll
    for (int kk = 0; kk < 2; kk++)
      #pragma unroll
      for (int e = 0; e < 2; e++) v[hh][kk][e] = lds128(goff[hh][kk][e] + roff);
  #pragma unroll
  for (int ch = 0; ch < 8; ch++) {
    const unsigned a[4] = {pair(v[0][0][0], v[0][0][1], ch), pair(v[1][0][0], v[1][0][1], ch),
                           pair(v[0][1][0], v[0][1][1], ch), pair(v[1][1][0], v[1][1][1], ch)};
    unsigned b0, b1;
    bfrag(ch, b0, b1);
    if (ABL & 4) acc[ch][0] += __uint_as_float(a[0] ^ a[1] ^ a[2] ^ a[3] ^ b0 ^ b1);
    else mma(acc[ch], a, b0, b1);
  }
}
__device__ __forceinline__ void zero(float (&acc)[8][4]) {
  #pragma unroll
  for (int ch = 0; ch < 8; ch++)
    #pragma unroll
    for (int k = 0; k < 4; k++) acc[ch][k] = 0.f;
}
// 8 channels of accumulator register k (pixel (g + 8 (k >> 1), 2q + (k & 1)))
__device__ __forceinline__ void channels(float (&s)[8], const float (&acc)[8][4], int k) {
  #pragma unroll
  for (int ch = 0; ch < 8; ch++) s[ch] = acc[ch][k];
}
// partial sums of a pixel's 8 channels as two float4 (16-byte aligned)
__device__ __forceinline__ void put8(float* dst, const float (&s)[8]) {
  *reinterpret_cast<float4*>(dst) = make_float4(s[0], s[1], s[2], s[3]);
  *reinterpret_cast<float4*>(dst + 4) = make_float4(s[4], s[5], s[6], s[7]);
}
__device__ __forceinline__ void add8(float (&s)[8], const float* src) {
  const float4 a = *reinterpret_cast<const float4*>(src), b = *reinterpret_cast<const float4*>(src + 4);
  s[0] += a.x; s[1] += a.y; s[2] += a.z; s[3] += a.w; s[4] += b.x; s[5] += b.y; s[6] += b.z; s[7] += b.w;
}
// bias + relu + f16 of 8 channels, one 16-byte store (st.global.v4: nvcc split a uint4 store into
// four 32-bit ones, whose drain at exit cost 1.7 of 5.3 cycles per instruction)
__device__ __forceinline__ void store8(half* dst, const float (&s)[8], const uint4 braw) {
  const __half2* bh = reinterpret_cast<const __half2*>(&braw);
  unsigned wp[4];
  #pragma unroll
  for (int k = 0; k < 4; k++) {
    const float2 bf = __half22float2(bh[k]);
    const __half2 hv = __floats2half2_rn(fmaxf(s[2 * k] + bf.x, 0.f), fmaxf(s[2 * k + 1] + bf.y, 0.f));
    wp[k] = *reinterpret_cast<const unsigned*>(&hv);
  }
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(dst), "r"(wp[0]), "r"(wp[1]), "r"(wp[2]), "r"(wp[3]) : "memory");
}

// one warp per tile of TR (<= 16) output rows x 8 columns x 8 channels: 16-byte gathers (the lane's
// pixel's 8 channels), staged row pitch 17 pixels (odd: a quarter-warp's gathers hit 8 distinct
// 16-byte bank groups), B fragments in registers (BREG) or loaded per filter row
template<int R, int TR, int BREG, int MINB>
__global__ void __launch_bounds__(32, MINB) tileband8(const half* __restrict__ x,
    const uint2* __restrict__ btab, const half* __restrict__ bias, half* __restrict__ out)
{
  constexpr int C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, PAD = DIM_PAD;
  constexpr int IR = TR + R - 1, RP = 17;
  constexpr int RT = (Ho + TR - 1) / TR, CT = (Wo + 7) / 8, CBN = C / 8;
  __shared__ __align__(16) uint4 tile[IR * RP];
  const int item = blockIdx.x;
  const int cb = item % CBN, ct = (item / CBN) % CT, rt = (item / (CBN * CT)) % RT, n = item / (CBN * CT * RT);
  const unsigned tbase = (unsigned)__cvta_generic_to_shared(tile);
  const int lane = threadIdx.x, g = lane >> 2, q = lane & 3, c0 = cb * 8;
  stage<IR, RP, 1, 1>(tbase, x, n, rt * TR - PAD, ct * 8 - PAD, c0, lane, 32);
  commit();
  auto band = [&](int ch, int r) {
    return (ABL & 2) ? make_uint2(lane * r, ch + lane) : __ldg(btab + ((c0 + ch) * R + r) * 32 + lane);
  };
  uint2 bfr[BREG ? 8 : 1][BREG ? R : 1];
  if (BREG) {
    #pragma unroll
    for (int ch = 0; ch < 8; ch++)
      #pragma unroll
      for (int r = 0; r < R; r++) bfr[BREG ? ch : 0][BREG ? r : 0] = band(ch, r);
  }
  const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + c0));
  unsigned goff[2][2][2];
  gather_offsets<TR, RP, 1>(goff, tbase, g, q, 0);
  float acc[8][4];
  zero(acc);
  wait<0>();
  __syncwarp();
  #pragma unroll
  for (int r = 0; r < R; r++)
    row_products(acc, goff, 16 * r * RP, [&](int ch, unsigned& b0, unsigned& b1) {
      const uint2 b = BREG ? bfr[BREG ? ch : 0][BREG ? r : 0] : band(ch, r);
      b0 = b.x; b1 = b.y;
    });
  #pragma unroll
  for (int k = 0; k < 4; k++) {
    const int m = g + 8 * (k >> 1), oh = rt * TR + m, ow = ct * 8 + 2 * q + (k & 1);
    if (m < TR && oh < Ho && ow < Wo && (!(ABL & 8) || acc[0][0] == 1234.5f)) {
      float s[8];
      channels(s, acc, k);
      store8(out + (((size_t)n * Ho + oh) * Wo + ow) * C + c0, s, braw);
    }
  }
}

// RG warps per tile of TR (<= 16) rows x 8 columns x 8 channels: warp w sums filter rows w, w + RG,
// ...; the f32 partials through shared memory (pixel pitch 12 words, row pitch 100: conflict-free
// 16-byte stores), one pixel's 8 channels per thread in the epilogue
template<int R, int TR, int RG, int MINB>
__global__ void __launch_bounds__(32 * RG, MINB) tilesplit(const half* __restrict__ x,
    const uint2* __restrict__ btab, const half* __restrict__ bias, half* __restrict__ out)
{
  constexpr int C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, PAD = DIM_PAD;
  constexpr int IR = TR + R - 1, RP = 17, THREADS = 32 * RG;
  constexpr int RT = (Ho + TR - 1) / TR, CT = (Wo + 7) / 8, CBN = C / 8;
  constexpr int PPIX = 12, PROW = 8 * PPIX + 4, PWARP = TR * PROW;
  __shared__ __align__(16) uint4 tile[IR * RP];
  __shared__ __align__(16) float part[RG * PWARP];
  const int item = blockIdx.x;
  const int cb = item % CBN, ct = (item / CBN) % CT, rt = (item / (CBN * CT)) % RT, n = item / (CBN * CT * RT);
  const unsigned tbase = (unsigned)__cvta_generic_to_shared(tile);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3, c0 = cb * 8;
  stage<IR, RP, 1, 1>(tbase, x, n, rt * TR - PAD, ct * 8 - PAD, c0, threadIdx.x, THREADS);
  commit();
  constexpr int MYR = (R + RG - 1) / RG;
  uint2 bfr[8][MYR];
  #pragma unroll
  for (int ch = 0; ch < 8; ch++)
    #pragma unroll
    for (int j = 0; j < MYR; j++)
      if (warp + j * RG < R) bfr[ch][j] = __ldg(btab + ((c0 + ch) * R + warp + j * RG) * 32 + lane);
  unsigned goff[2][2][2];
  gather_offsets<TR, RP, 1>(goff, tbase, g, q, 0);
  float acc[8][4];
  zero(acc);
  wait<0>();
  __syncthreads();
  #pragma unroll
  for (int j = 0; j < MYR; j++)
    if (warp + j * RG < R)
      row_products(acc, goff, 16 * (warp + j * RG) * RP, [&](int ch, unsigned& b0, unsigned& b1) {
        b0 = bfr[ch][j].x; b1 = bfr[ch][j].y;
      });
  #pragma unroll
  for (int k = 0; k < 4; k++) {              // partials: warp w, pixel (g + 8 (k >> 1), 2q + (k & 1))
    if (g + 8 * (k >> 1) >= TR) continue;
    float s[8];
    channels(s, acc, k);
    put8(part + warp * PWARP + (g + 8 * (k >> 1)) * PROW + (2 * q + (k & 1)) * PPIX, s);
  }
  const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + c0));
  __syncthreads();
  for (int p = threadIdx.x; p < TR * 8; p += THREADS) {
    const int m = p >> 3, col = p & 7, oh = rt * TR + m, ow = ct * 8 + col;
    float s[8] = {};
    #pragma unroll
    for (int w = 0; w < RG; w++) add8(s, part + w * PWARP + m * PROW + col * PPIX);
    if (oh < Ho && ow < Wo) store8(out + (((size_t)n * Ho + oh) * Wo + ow) * C + c0, s, braw);
  }
}

// tilesplit16: tiles of TR (<= 16) rows x 8 columns x 16 channels (a pixel's 32 bytes: whole L2
// sectors), warps (h, rg): channel half h, filter rows rg, rg + RG, ...; the B fragments built
// from the tile's filter taps staged in shared memory with zero padding (tap index -9 .. 15: no
// selects), paired by PRMT; partial sums through shared memory; one pixel's 8 channels per thread
// in the epilogue. Staged pixel pitch 3 chunks, row pitch 17 pixels; partial pixel pitch 5 chunks,
// row pitch 41: conflict-free 16-byte accesses.
template<int R, int TR, int RG, int MINB>
__global__ void __launch_bounds__(64 * RG, MINB) tilesplit16(const half* __restrict__ x,
    const half* __restrict__ filt, const half* __restrict__ bias, half* __restrict__ out)
{
  constexpr int C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, PAD = DIM_PAD;
  constexpr int IR = TR + R - 1, PPX = 3, RP = 17, THREADS = 64 * RG;
  constexpr int TAPS = 25, TAP0 = 9;                     // padded tap row: s = -9 .. 15
  constexpr int RT = (Ho + TR - 1) / TR, CT = (Wo + 7) / 8, CBN = C / 16;
  constexpr int TILE = IR * RP * PPX, TAPC = R * TAPS * 2, PROWC = 41, PWARPC = TR * PROWC;
  extern __shared__ __align__(16) uint4 dyn[];
  float* part = reinterpret_cast<float*>(dyn + TILE + TAPC);
  const int item = blockIdx.x;
  const int cb = item % CBN, ct = (item / CBN) % CT, rt = (item / (CBN * CT)) % RT, n = item / (CBN * CT * RT);
  const unsigned tbase = (unsigned)__cvta_generic_to_shared(dyn), fbase = tbase + 16 * TILE;
  const int tid = threadIdx.x;
  stage<IR, RP, PPX, 2>(tbase, x, n, rt * TR - PAD, ct * 8 - PAD, cb * 16, tid, THREADS);
  for (int i = tid; i < TAPC; i += THREADS) {             // taps (r, s) at chunk (r * TAPS + s + TAP0) * 2 + k
    const int k = i & 1, t = (i >> 1) % TAPS, r = (i >> 1) / TAPS, s = t - TAP0;
    const bool ok = s >= 0 && s < R;
    cp16(fbase + 16 * i, filt + ((r * R + (ok ? s : 0)) * C + cb * 16 + k * 8), ok);
  }
  commit();
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, q = lane & 3;
  const int hf = warp & 1, rg = warp >> 1;
  unsigned goff[2][2][2], boff[4];
  gather_offsets<TR, RP, PPX>(goff, tbase, g, q, hf);
  #pragma unroll
  for (int j = 0; j < 4; j++) boff[j] = fbase + 16 * ((2 * q + (j & 1) + 8 * (j >> 1) - g + TAP0) * 2 + hf);
  float acc[8][4];
  zero(acc);
  wait<0>();
  __syncthreads();
  #pragma unroll
  for (int j = 0; j < (R + RG - 1) / RG; j++) {
    const int r = rg + j * RG;
    if (r < R) {
      uint4 t[4];
      #pragma unroll
      for (int b = 0; b < 4; b++) t[b] = lds128(boff[b] + 16 * r * TAPS * 2);
      row_products(acc, goff, 16 * r * RP * PPX, [&](int ch, unsigned& b0, unsigned& b1) {
        b0 = pair(t[0], t[1], ch); b1 = pair(t[2], t[3], ch);
      });
    }
  }
  if (RG > 1) {
    #pragma unroll
    for (int k = 0; k < 4; k++) {
      if (g + 8 * (k >> 1) >= TR) continue;
      float s[8];
      channels(s, acc, k);
      put8(part + 4 * (rg * PWARPC + (g + 8 * (k >> 1)) * PROWC + (2 * q + (k & 1)) * 5 + 2 * hf), s);
    }
    const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + cb * 16 + (tid & 1) * 8));
    __syncthreads();
    for (int i = tid; i < TR * 16; i += THREADS) {      // (pixel, channel half): the half is i & 1 = tid & 1
      const int h2 = i & 1, p = i >> 1, m = p >> 3, col = p & 7, oh = rt * TR + m, ow = ct * 8 + col;
      float s[8] = {};
      #pragma unroll
      for (int w = 0; w < RG; w++) add8(s, part + 4 * (w * PWARPC + m * PROWC + col * 5 + 2 * h2));
      if (oh < Ho && ow < Wo) store8(out + (((size_t)n * Ho + oh) * Wo + ow) * C + cb * 16 + h2 * 8, s, braw);
    }
  } else {
    const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + cb * 16 + hf * 8));
    #pragma unroll
    for (int k = 0; k < 4; k++) {
      const int m = g + 8 * (k >> 1), oh = rt * TR + m, ow = ct * 8 + 2 * q + (k & 1);
      if (m < TR && oh < Ho && ow < Wo) {
        float s[8];
        channels(s, acc, k);
        store8(out + (((size_t)n * Ho + oh) * Wo + ow) * C + cb * 16 + hf * 8, s, braw);
      }
    }
  }
}
'''

# tileband8: (TR, BREG, MINB)
VARIANTS8 = [(16, 1, 1), (14, 1, 1), (16, 0, 1), (14, 0, 1), (8, 1, 1), (7, 1, 1), (8, 0, 1)]
# tilesplit: (TR, RG, MINB)
VARIANTS_SPLIT = [(16, 4, 1), (14, 7, 1), (14, 4, 1), (8, 4, 1), (8, 7, 1), (16, 2, 1), (7, 7, 1), (14, 2, 1)]
ONLYS = os.environ.get("ONLYS")
# tilesplit16: (TR, RG, MINB)
VARIANTS16 = [(16, 7, 1), (14, 7, 1), (16, 4, 1), (14, 4, 1), (16, 2, 1), (16, 1, 1), (8, 7, 1), (7, 7, 1), (8, 4, 1)]
ONLY16 = os.environ.get("ONLY16")
TIMING = os.environ.get("TIMING", "cupti")
ABL = int(os.environ.get("ABL", "0"))
ONLY8 = os.environ.get("ONLY8")


def main():
    p, copy = h.band_setup("1 56 56 96 7", TIMING)
    N, C, R = p.N, p.C, p.R
    variants8 = [v for i, v in enumerate(VARIANTS8) if C % 8 == 0 and (not ONLY8 or str(i) in ONLY8.split(","))]
    names8 = [f"tileband8<{R},{tr},{br},{mb}>" for tr, br, mb in variants8]
    variants_s = [v for i, v in enumerate(VARIANTS_SPLIT) if C % 8 == 0 and (not ONLYS or str(i) in ONLYS.split(","))]
    names_s = [f"tilesplit<{R},{tr},{rg},{mb}>" for tr, rg, mb in variants_s]
    variants16 = [v for i, v in enumerate(VARIANTS16) if C % 16 == 0 and (not ONLY16 or str(i) in ONLY16.split(","))]
    names16 = [f"tilesplit16<{R},{tr},{rg},{mb}>" for tr, rg, mb in variants16]
    mod = cp.RawModule(code=f"#define ABL {ABL}\n" + h.sized_source(p, SRC), options=("-std=c++17", "--use_fast_math"), name_expressions=names8 + names_s + names16)
    btab = band_table(p.filt)
    for name, (tr, br, mb) in zip(names8, variants8):
        k = mod.get_function(name)
        items = N * -(-p.Ho // tr) * -(-p.Wo // 8) * (C // 8)
        h.run_variant(p, name, k, (items,), 32, (p.xin, btab.data.ptr, p.bias.data_ptr()), 0,
                      copy, graphs=TIMING, rotate=4)
        print("   items", items, flush=True)
    for name, (tr, rg, mb) in zip(names16, variants16):
        k = mod.get_function(name)
        items = N * -(-p.Ho // tr) * -(-p.Wo // 8) * (C // 16)
        smem = 16 * ((tr + R - 1) * 17 * 3 + R * 25 * 2) + (16 * rg * tr * 41 if rg > 1 else 0)
        h.run_variant(p, name, k, (items,), 64 * rg, (p.xin, p.filt.data_ptr(), p.bias.data_ptr()), smem,
                      copy, graphs=TIMING, rotate=4)
        print("   items", items, "smem", smem, flush=True)
    for name, (tr, rg, mb) in zip(names_s, variants_s):
        k = mod.get_function(name)
        items = N * -(-p.Ho // tr) * -(-p.Wo // 8) * (C // 8)
        h.run_variant(p, name, k, (items,), 32 * rg, (p.xin, btab.data.ptr, p.bias.data_ptr()), 0,
                      copy, graphs=TIMING, rotate=4)
        print("   items", items, flush=True)


if __name__ == "__main__":
    main()
