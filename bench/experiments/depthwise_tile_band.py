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
bench/results/h100_depthwise_tile_band_2026-11-26.log): no; best 3.4 us (tileband8), the shell
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

// one warp per tile of TR (<= 16) output rows x 8 columns x 8 channels: 16-byte gathers (the lane's
// pixel's 8 channels), staged row pitch 17 pixels (odd: a quarter-warp's gathers hit 8 distinct
// 16-byte bank groups), B fragments in registers (BREG) or loaded per filter row
template<int R, int TR, int BREG, int MINB>
__global__ void __launch_bounds__(32, MINB) tileband8(const half* __restrict__ x,
    const uint2* __restrict__ btab, const half* __restrict__ bias, half* __restrict__ out)
{
  constexpr int N = DIM_N, H = DIM_H, W = DIM_W, C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, PAD = DIM_PAD;
  constexpr int IR = TR + R - 1, IC = 16, RP = 17;
  constexpr int RT = (Ho + TR - 1) / TR, CT = (Wo + 7) / 8, CBN = C / 8;
  __shared__ __align__(16) uint4 tile[IR * RP];
  const int item = blockIdx.x;
  const int cb = item % CBN, ct = (item / CBN) % CT, rt = (item / (CBN * CT)) % RT, n = item / (CBN * CT * RT);
  const int h0 = rt * TR - PAD, w0 = ct * 8 - PAD;
  const unsigned tbase = (unsigned)__cvta_generic_to_shared(tile);
  const int lane = threadIdx.x, g = lane >> 2, q = lane & 3;
  #pragma unroll
  for (int i = lane; i < ((ABL & 1) ? 0 : IR * IC); i += 32) {
    const int col = i % IC, row = i / IC;
    const int hh = h0 + row, ww = w0 + col;
    const bool ok = hh >= 0 && hh < H && ww >= 0 && ww < W;
    const half* src = x + (((size_t)n * H + (ok ? hh : 0)) * W + (ok ? ww : 0)) * C + cb * 8;
    cp16(tbase + 16 * (row * RP + col), src, ok);
  }
  commit();
  const int c0 = cb * 8;
  unsigned bfr[BREG ? 8 : 1][BREG ? R : 1][2];
  if (BREG) {
    #pragma unroll
    for (int ch = 0; ch < 8; ch++)
      #pragma unroll
      for (int r = 0; r < R; r++) {
        const uint2 v = (ABL & 2) ? make_uint2(lane * r, ch + lane) : __ldg(btab + ((c0 + ch) * R + r) * 32 + lane);
        bfr[BREG ? ch : 0][BREG ? r : 0][0] = v.x; bfr[BREG ? ch : 0][BREG ? r : 0][1] = v.y;
      }
  }
  const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + c0));
  const __half2* bh = reinterpret_cast<const __half2*>(&braw);
  const int m0 = g < TR ? g : TR - 1, m1 = g + 8 < TR ? g + 8 : TR - 1;
  unsigned goff[2][2][2];
  #pragma unroll
  for (int kk = 0; kk < 2; kk++)
    #pragma unroll
    for (int e = 0; e < 2; e++) {
      goff[0][kk][e] = tbase + 16 * (m0 * RP + 2 * q + e + 8 * kk);
      goff[1][kk][e] = tbase + 16 * (m1 * RP + 2 * q + e + 8 * kk);
    }
  float acc[8][4];
  #pragma unroll
  for (int ch = 0; ch < 8; ch++)
    #pragma unroll
    for (int k = 0; k < 4; k++) acc[ch][k] = 0.f;
  wait<0>();
  __syncwarp();
  #pragma unroll
  for (int r = 0; r < R; r++) {
    uint4 v[2][2][2];
    #pragma unroll
    for (int hh = 0; hh < 2; hh++)
      #pragma unroll
      for (int kk = 0; kk < 2; kk++)
        #pragma unroll
        for (int e = 0; e < 2; e++)
          asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[hh][kk][e].x), "=r"(v[hh][kk][e].y),
                       "=r"(v[hh][kk][e].z), "=r"(v[hh][kk][e].w) : "r"(goff[hh][kk][e] + 16 * r * RP));
    #pragma unroll
    for (int ch = 0; ch < 8; ch++) {
      unsigned b0, b1;
      if (BREG) { b0 = bfr[BREG ? ch : 0][BREG ? r : 0][0]; b1 = bfr[BREG ? ch : 0][BREG ? r : 0][1]; }
      else {
        const uint2 bv = (ABL & 2) ? make_uint2(lane * r, ch + lane) : __ldg(btab + ((c0 + ch) * R + r) * 32 + lane);
        b0 = bv.x; b1 = bv.y;
      }
      unsigned a[4];
      #pragma unroll
      for (int kk = 0; kk < 2; kk++)
        #pragma unroll
        for (int hh = 0; hh < 2; hh++) {
          const unsigned* w0p = reinterpret_cast<const unsigned*>(&v[hh][kk][0]);
          const unsigned* w1p = reinterpret_cast<const unsigned*>(&v[hh][kk][1]);
          a[2 * kk + hh] = __byte_perm(w0p[ch >> 1], w1p[ch >> 1], (ch & 1) ? 0x7632 : 0x5410);
        }
      if (ABL & 4) acc[ch][0] += __uint_as_float(a[0] ^ a[1] ^ a[2] ^ a[3] ^ b0 ^ b1);
      else mma(acc[ch], a, b0, b1);
    }
  }
  #pragma unroll
  for (int hh = 0; hh < 2; hh++)
    #pragma unroll
    for (int e = 0; e < 2; e++) {
      const int m = g + 8 * hh;
      const int oh = rt * TR + m, ow = ct * 8 + 2 * q + e;
      if (m < TR && oh < Ho && ow < Wo && (!(ABL & 8) || acc[0][0] == 1234.5f)) {
        uint4 w;
        unsigned* wp = reinterpret_cast<unsigned*>(&w);
        #pragma unroll
        for (int p = 0; p < 4; p++) {
          const float2 bf = __half22float2(bh[p]);
          const __half2 hv = __floats2half2_rn(fmaxf(acc[2 * p][2 * hh + e] + bf.x, 0.f),
                                               fmaxf(acc[2 * p + 1][2 * hh + e] + bf.y, 0.f));
          wp[p] = *reinterpret_cast<const unsigned*>(&hv);
        }
        asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(out + (((size_t)n * Ho + oh) * Wo + ow) * C + c0),
                     "r"(wp[0]), "r"(wp[1]), "r"(wp[2]), "r"(wp[3]) : "memory");
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
  constexpr int N = DIM_N, H = DIM_H, W = DIM_W, C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, PAD = DIM_PAD;
  constexpr int IR = TR + R - 1, IC = 16, RP = 17, THREADS = 32 * RG;
  constexpr int RT = (Ho + TR - 1) / TR, CT = (Wo + 7) / 8, CBN = C / 8;
  constexpr int PPIX = 12, PROW = 8 * PPIX + 4, PWARP = TR * PROW;
  __shared__ __align__(16) uint4 tile[IR * RP];
  __shared__ __align__(16) float part[RG * PWARP];
  const int item = blockIdx.x;
  const int cb = item % CBN, ct = (item / CBN) % CT, rt = (item / (CBN * CT)) % RT, n = item / (CBN * CT * RT);
  const int h0 = rt * TR - PAD, w0 = ct * 8 - PAD;
  const unsigned tbase = (unsigned)__cvta_generic_to_shared(tile);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  #pragma unroll
  for (int i = threadIdx.x; i < IR * IC; i += THREADS) {
    const int col = i % IC, row = i / IC;
    const int hh = h0 + row, ww = w0 + col;
    const bool ok = hh >= 0 && hh < H && ww >= 0 && ww < W;
    const half* src = x + (((size_t)n * H + (ok ? hh : 0)) * W + (ok ? ww : 0)) * C + cb * 8;
    cp16(tbase + 16 * (row * RP + col), src, ok);
  }
  commit();
  const int c0 = cb * 8;
  constexpr int MYR = (R + RG - 1) / RG;
  unsigned bfr[8][MYR][2];
  #pragma unroll
  for (int ch = 0; ch < 8; ch++)
    #pragma unroll
    for (int j = 0; j < MYR; j++) {
      const int r = warp + j * RG;
      if (r < R) {
        const uint2 v = __ldg(btab + ((c0 + ch) * R + r) * 32 + lane);
        bfr[ch][j][0] = v.x; bfr[ch][j][1] = v.y;
      }
    }
  const int m0 = g < TR ? g : TR - 1, m1 = g + 8 < TR ? g + 8 : TR - 1;
  unsigned goff[2][2][2];
  #pragma unroll
  for (int kk = 0; kk < 2; kk++)
    #pragma unroll
    for (int e = 0; e < 2; e++) {
      goff[0][kk][e] = tbase + 16 * (m0 * RP + 2 * q + e + 8 * kk);
      goff[1][kk][e] = tbase + 16 * (m1 * RP + 2 * q + e + 8 * kk);
    }
  float acc[8][4];
  #pragma unroll
  for (int ch = 0; ch < 8; ch++)
    #pragma unroll
    for (int k = 0; k < 4; k++) acc[ch][k] = 0.f;
  wait<0>();
  __syncthreads();
  #pragma unroll
  for (int j = 0; j < MYR; j++) {
    const int r = warp + j * RG;
    if (r < R) {
      uint4 v[2][2][2];
      #pragma unroll
      for (int hh = 0; hh < 2; hh++)
        #pragma unroll
        for (int kk = 0; kk < 2; kk++)
          #pragma unroll
          for (int e = 0; e < 2; e++)
            asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[hh][kk][e].x), "=r"(v[hh][kk][e].y),
                         "=r"(v[hh][kk][e].z), "=r"(v[hh][kk][e].w) : "r"(goff[hh][kk][e] + 16 * r * RP));
      #pragma unroll
      for (int ch = 0; ch < 8; ch++) {
        unsigned a[4];
        #pragma unroll
        for (int kk = 0; kk < 2; kk++)
          #pragma unroll
          for (int hh = 0; hh < 2; hh++) {
            const unsigned* w0p = reinterpret_cast<const unsigned*>(&v[hh][kk][0]);
            const unsigned* w1p = reinterpret_cast<const unsigned*>(&v[hh][kk][1]);
            a[2 * kk + hh] = __byte_perm(w0p[ch >> 1], w1p[ch >> 1], (ch & 1) ? 0x7632 : 0x5410);
          }
        mma(acc[ch], a, bfr[ch][j][0], bfr[ch][j][1]);
      }
    }
  }
  // partials: warp w, pixel (m = g + 8 hh, column 2q + e), channels 0-3 and 4-7
  #pragma unroll
  for (int hh = 0; hh < 2; hh++)
    #pragma unroll
    for (int e = 0; e < 2; e++) {
      if (g + 8 * hh >= TR) continue;
      float* dst = part + warp * PWARP + (g + 8 * hh) * PROW + (2 * q + e) * PPIX;
      *reinterpret_cast<float4*>(dst) = make_float4(acc[0][2 * hh + e], acc[1][2 * hh + e], acc[2][2 * hh + e], acc[3][2 * hh + e]);
      *reinterpret_cast<float4*>(dst + 4) = make_float4(acc[4][2 * hh + e], acc[5][2 * hh + e], acc[6][2 * hh + e], acc[7][2 * hh + e]);
    }
  const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + c0));
  const __half2* bh = reinterpret_cast<const __half2*>(&braw);
  __syncthreads();
  for (int p = threadIdx.x; p < TR * 8; p += THREADS) {
    const int m = p >> 3, col = p & 7;
    const int oh = rt * TR + m, ow = ct * 8 + col;
    float s[8];
    #pragma unroll
    for (int k = 0; k < 8; k++) s[k] = 0.f;
    #pragma unroll
    for (int w = 0; w < RG; w++) {
      const float* src = part + w * PWARP + m * PROW + col * PPIX;
      const float4 a = *reinterpret_cast<const float4*>(src), b = *reinterpret_cast<const float4*>(src + 4);
      s[0] += a.x; s[1] += a.y; s[2] += a.z; s[3] += a.w; s[4] += b.x; s[5] += b.y; s[6] += b.z; s[7] += b.w;
    }
    if (oh < Ho && ow < Wo) {
      uint4 wv;
      unsigned* wp = reinterpret_cast<unsigned*>(&wv);
      #pragma unroll
      for (int k = 0; k < 4; k++) {
        const float2 bf = __half22float2(bh[k]);
        const __half2 hv = __floats2half2_rn(fmaxf(s[2 * k] + bf.x, 0.f), fmaxf(s[2 * k + 1] + bf.y, 0.f));
        wp[k] = *reinterpret_cast<const unsigned*>(&hv);
      }
      asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(out + (((size_t)n * Ho + oh) * Wo + ow) * C + c0),
                   "r"(wp[0]), "r"(wp[1]), "r"(wp[2]), "r"(wp[3]) : "memory");
    }
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
  constexpr int N = DIM_N, H = DIM_H, W = DIM_W, C = DIM_C, Ho = DIM_HO, Wo = DIM_WO, PAD = DIM_PAD;
  constexpr int IR = TR + R - 1, IC = 16, PPX = 3, RP = 17, THREADS = 64 * RG;
  constexpr int TAPS = 25, TAP0 = 9;                     // padded tap row: s = -9 .. 15
  constexpr int RT = (Ho + TR - 1) / TR, CT = (Wo + 7) / 8, CBN = C / 16;
  constexpr int TILE = IR * RP * PPX, TAPC = R * TAPS * 2, PROWC = 41, PWARPC = TR * PROWC;
  extern __shared__ __align__(16) uint4 dyn[];
  uint4* tile = dyn;
  uint4* taps = dyn + TILE;
  float* part = reinterpret_cast<float*>(dyn + TILE + TAPC);
  const int item = blockIdx.x;
  const int cb = item % CBN, ct = (item / CBN) % CT, rt = (item / (CBN * CT)) % RT, n = item / (CBN * CT * RT);
  const int h0 = rt * TR - PAD, w0 = ct * 8 - PAD;
  const unsigned tbase = (unsigned)__cvta_generic_to_shared(tile), fbase = (unsigned)__cvta_generic_to_shared(taps);
  const int tid = threadIdx.x;
  for (int i = tid; i < IR * IC * 2; i += THREADS) {
    const int k = i & 1, pix = i >> 1, col = pix % IC, row = pix / IC;
    const int hh = h0 + row, ww = w0 + col;
    const bool ok = !(ABL & 1) && hh >= 0 && hh < H && ww >= 0 && ww < W;
    const half* src = x + (((size_t)n * H + (ok ? hh : 0)) * W + (ok ? ww : 0)) * C + cb * 16 + k * 8;
    cp16(tbase + 16 * ((row * RP + col) * PPX + k), src, ok);
  }
  for (int i = tid; i < TAPC; i += THREADS) {             // taps (r, s) at chunk (r * TAPS + s + TAP0) * 2 + k
    const int k = i & 1, t = (i >> 1) % TAPS, r = (i >> 1) / TAPS, s = t - TAP0;
    const bool ok = s >= 0 && s < R;
    cp16(fbase + 16 * i, filt + ((r * R + (ok ? s : 0)) * C + cb * 16 + k * 8), ok);
  }
  commit();
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, q = lane & 3;
  const int hf = warp & 1, rg = warp >> 1;
  const int m0 = g < TR ? g : TR - 1, m1 = g + 8 < TR ? g + 8 : TR - 1;
  unsigned goff[2][2][2], boff[4];
  #pragma unroll
  for (int kk = 0; kk < 2; kk++)
    #pragma unroll
    for (int e = 0; e < 2; e++) {
      goff[0][kk][e] = tbase + 16 * ((m0 * RP + 2 * q + e + 8 * kk) * PPX + hf);
      goff[1][kk][e] = tbase + 16 * ((m1 * RP + 2 * q + e + 8 * kk) * PPX + hf);
    }
  #pragma unroll
  for (int j = 0; j < 4; j++) boff[j] = fbase + 16 * ((2 * q + (j & 1) + 8 * (j >> 1) - g + TAP0) * 2 + hf);
  float acc[8][4];
  #pragma unroll
  for (int ch = 0; ch < 8; ch++)
    #pragma unroll
    for (int k = 0; k < 4; k++) acc[ch][k] = 0.f;
  wait<0>();
  __syncthreads();
  #pragma unroll
  for (int j = 0; j < (R + RG - 1) / RG; j++) {
    const int r = rg + j * RG;
    if (r < R) {
      uint4 v[2][2][2], t[4];
      #pragma unroll
      for (int hh = 0; hh < 2; hh++)
        #pragma unroll
        for (int kk = 0; kk < 2; kk++)
          #pragma unroll
          for (int e = 0; e < 2; e++)
            asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[hh][kk][e].x), "=r"(v[hh][kk][e].y),
                         "=r"(v[hh][kk][e].z), "=r"(v[hh][kk][e].w) : "r"(goff[hh][kk][e] + 16 * r * RP * PPX));
      #pragma unroll
      for (int b = 0; b < 4; b++)
        asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(t[b].x), "=r"(t[b].y), "=r"(t[b].z), "=r"(t[b].w)
                     : "r"(boff[b] + 16 * r * TAPS * 2));
      #pragma unroll
      for (int ch = 0; ch < 8; ch++) {
        const unsigned sel = (ch & 1) ? 0x7632 : 0x5410;
        unsigned a[4];
        #pragma unroll
        for (int kk = 0; kk < 2; kk++)
          #pragma unroll
          for (int hh = 0; hh < 2; hh++)
            a[2 * kk + hh] = __byte_perm(reinterpret_cast<const unsigned*>(&v[hh][kk][0])[ch >> 1],
                                         reinterpret_cast<const unsigned*>(&v[hh][kk][1])[ch >> 1], sel);
        const unsigned b0 = __byte_perm(reinterpret_cast<const unsigned*>(&t[0])[ch >> 1],
                                        reinterpret_cast<const unsigned*>(&t[1])[ch >> 1], sel);
        const unsigned b1 = __byte_perm(reinterpret_cast<const unsigned*>(&t[2])[ch >> 1],
                                        reinterpret_cast<const unsigned*>(&t[3])[ch >> 1], sel);
        if (ABL & 4) acc[ch][0] += __uint_as_float(a[0] ^ a[1] ^ a[2] ^ a[3] ^ b0 ^ b1);
        else mma(acc[ch], a, b0, b1);
      }
    }
  }
  const uint4 braw = __ldg(reinterpret_cast<const uint4*>(bias + cb * 16 + (tid & 1) * 8));
  if (RG > 1) {
    #pragma unroll
    for (int hh = 0; hh < 2; hh++)
      #pragma unroll
      for (int e = 0; e < 2; e++) {
        if (g + 8 * hh >= TR) continue;
        float* dst = part + 4 * (rg * PWARPC + (g + 8 * hh) * PROWC + (2 * q + e) * 5 + 2 * hf);
        *reinterpret_cast<float4*>(dst) = make_float4(acc[0][2 * hh + e], acc[1][2 * hh + e], acc[2][2 * hh + e], acc[3][2 * hh + e]);
        *reinterpret_cast<float4*>(dst + 4) = make_float4(acc[4][2 * hh + e], acc[5][2 * hh + e], acc[6][2 * hh + e], acc[7][2 * hh + e]);
      }
    __syncthreads();
  }
  const __half2* bh = reinterpret_cast<const __half2*>(&braw);
  auto store = [&](int oh, int ow, int h2, const float (&s)[8]) {
    if (oh < Ho && ow < Wo) {
      unsigned wp[4];
      #pragma unroll
      for (int k = 0; k < 4; k++) {
        const float2 bf = __half22float2(bh[k]);
        const __half2 hv = __floats2half2_rn(fmaxf(s[2 * k] + bf.x, 0.f), fmaxf(s[2 * k + 1] + bf.y, 0.f));
        wp[k] = *reinterpret_cast<const unsigned*>(&hv);
      }
      asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(out + (((size_t)n * Ho + oh) * Wo + ow) * C + cb * 16 + h2 * 8),
                   "r"(wp[0]), "r"(wp[1]), "r"(wp[2]), "r"(wp[3]) : "memory");
    }
  };
  if (RG > 1) {
    for (int i = tid; i < TR * 16; i += THREADS) {      // (pixel, channel half): the half is i & 1 = tid & 1
      const int h2 = i & 1, p = i >> 1, m = p >> 3, col = p & 7;
      float s[8];
      #pragma unroll
      for (int k = 0; k < 8; k++) s[k] = 0.f;
      #pragma unroll
      for (int w = 0; w < RG; w++) {
        const float* src = part + 4 * (w * PWARPC + m * PROWC + col * 5 + 2 * h2);
        const float4 a = *reinterpret_cast<const float4*>(src), b = *reinterpret_cast<const float4*>(src + 4);
        s[0] += a.x; s[1] += a.y; s[2] += a.z; s[3] += a.w; s[4] += b.x; s[5] += b.y; s[6] += b.z; s[7] += b.w;
      }
      store(rt * TR + m, ct * 8 + col, h2, s);
    }
  } else {
    const uint4 braw1 = __ldg(reinterpret_cast<const uint4*>(bias + cb * 16 + hf * 8));
    const __half2* bh1 = reinterpret_cast<const __half2*>(&braw1);
    #pragma unroll
    for (int hh = 0; hh < 2; hh++)
      #pragma unroll
      for (int e = 0; e < 2; e++) {
        const int m = g + 8 * hh, oh = rt * TR + m, ow = ct * 8 + 2 * q + e;
        if (m < TR && oh < Ho && ow < Wo) {
          unsigned wp[4];
          #pragma unroll
          for (int k = 0; k < 4; k++) {
            const float2 bf = __half22float2(bh1[k]);
            const __half2 hv = __floats2half2_rn(fmaxf(acc[2 * k][2 * hh + e] + bf.x, 0.f), fmaxf(acc[2 * k + 1][2 * hh + e] + bf.y, 0.f));
            wp[k] = *reinterpret_cast<const unsigned*>(&hv);
          }
          asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(out + (((size_t)n * Ho + oh) * Wo + ow) * C + cb * 16 + hf * 8),
                       "r"(wp[0]), "r"(wp[1]), "r"(wp[2]), "r"(wp[3]) : "memory");
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
    N, H, W, C, R = h.shape_args("1 56 56 96 7")
    assert R <= 9, "16 input columns cover 8 outputs of windows up to 9 wide"
    p = h.depthwise_problem(N, H, W, C, R, R, 1, relu=True)
    copy = h.copy_us(N * (H * W + p.Ho * p.Wo) * C // 2, graphs=TIMING, rotate=4)
    print("shape", [N, H, W, C, R], "copy", round(copy, 2), "cudnn", round(h.cudnn_us(p, graphs=TIMING), 2), flush=True)
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
