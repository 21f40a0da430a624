"""Experiment (GPU, CuPy + PyTorch): a depthwise 7x7 conv on mma.sync m16n8k16 whose A fragments
are built in registers from global loads: each lane loads the 16-byte channel vectors of its 8
fragment pixels (rows g, g+8 x columns 2q, 2q+1, 2q+8, 2q+9 of a 16 x 16 chunk) and pairs
neighbouring columns of one channel with a byte permute (PRMT); B is the filter row as a shifted
band (Toeplitz) staged in shared memory; no shared-memory transposition. Prints time, relative L2
error against PyTorch fp32, registers and spills per variant (warp tile 8*NB columns, WC x WR
warps), and a same-size copy's time.

    python3 bench/experiments/depthwise_register_fragments.py N H W C R S

Not a convc kernel: it measured whether the design could beat the direct kernel (bench/NOTES.md).
"""
import json
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SRC = r'''
#include <cuda_fp16.h>
__device__ __forceinline__ unsigned prmt(unsigned a, unsigned b, unsigned s) { return __byte_perm(a, b, s); }
__device__ __forceinline__ void mma(float* d, const unsigned* a, uint2 b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
}
__device__ __forceinline__ unsigned pk(half a, half b) { return (unsigned)__half_as_ushort(a) | ((unsigned)__half_as_ushort(b) << 16); }

// CTA: WC warps over channel blocks (8 ch each) x WR warps over 16-row blocks; warp tile 16 rows x 8*NB cols x 8 ch.
template<int R, int S, int NB, int WC, int WR, int MINB>
__global__ void __launch_bounds__(32*WC*WR, MINB) dw(const half* __restrict__ in, const half* __restrict__ filt,
    const half* __restrict__ bias, half* __restrict__ out, int N, int H, int W, int C, int Ho, int Wo, int pt, int pl)
{
  constexpr int SPAN = 8*NB + S - 1;
  constexpr int NCH = (SPAN + 15) / 16;
  extern __shared__ uint2 btab[];   // [WC*8 ch][R][3 shifts][32 lanes]
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int cbase = blockIdx.x * (8*WC);
  for (int i = tid; i < WC*8*R*3*32; i += 32*WC*WR) {
    int l = i & 31, t = i >> 5, e = t % 3; t /= 3; int r = t % R, c = t / R;
    int g = l >> 2, q = l & 3, sh = e == 0 ? 0 : (e == 1 ? -8 : 8);
    half v[4];
    for (int h = 0; h < 2; h++) for (int u = 0; u < 2; u++) {
      int s = 2*q + 8*h + u - g + sh;
      v[2*h+u] = (s >= 0 && s < S && cbase + c < C) ? filt[(r*S + s)*C + cbase + c] : __float2half(0.f);
    }
    btab[i] = make_uint2(pk(v[0], v[1]), pk(v[2], v[3]));
  }
  __syncthreads();
  const int wc = warp % WC, wr = warp / WC;
  const int cb = cbase + wc*8;
  if (cb >= C) return;
  const int g = lane >> 2, q = lane & 3;
  const int M = N*Ho;
  const int mrow = (blockIdx.y*WR + wr)*16 + g;
  int nn[2], ho[2]; bool mv[2];
  for (int h = 0; h < 2; h++) { int m = mrow + 8*h; mv[h] = m < M; int mm = mv[h] ? m : 0; nn[h] = mm / Ho; ho[h] = mm % Ho; }
  const int x0 = blockIdx.z * 8*NB;
  const int xin = x0 - pl;
  float acc[NB][8][4];
  #pragma unroll
  for (int j = 0; j < NB; j++)
    #pragma unroll
    for (int c = 0; c < 8; c++) { acc[j][c][0] = acc[j][c][1] = acc[j][c][2] = acc[j][c][3] = 0.f; }
  const uint2* bt = btab + (wc*8*R*3)*32 + lane;
  #pragma unroll
  for (int ch = 0; ch < NCH; ch++) {
    #pragma unroll
    for (int r = 0; r < R; r++) {
      uint4 px[2][4];
      #pragma unroll
      for (int h = 0; h < 2; h++) {
        int hi = ho[h] + r - pt;
        bool rok = mv[h] && hi >= 0 && hi < H;
        const half* rowp = in + ((size_t)(nn[h]*H + (rok ? hi : 0))*W)*C + cb;
        #pragma unroll
        for (int cc = 0; cc < 4; cc++) {
          int k = 16*ch + 2*q + (cc & 1) + 8*(cc >> 1);
          int col = xin + k;
          bool ok = rok && k < SPAN && col >= 0 && col < W;
          px[h][cc] = ok ? __ldg((const uint4*)(rowp + (size_t)col*C)) : make_uint4(0,0,0,0);
        }
      }
      unsigned a[8][4];
      #pragma unroll
      for (int c = 0; c < 8; c++) {
        unsigned sel = (c & 1) ? 0x7632 : 0x5410;
        const unsigned* p00 = (const unsigned*)&px[0][0]; const unsigned* p01 = (const unsigned*)&px[0][1];
        const unsigned* p10 = (const unsigned*)&px[1][0]; const unsigned* p11 = (const unsigned*)&px[1][1];
        const unsigned* p02 = (const unsigned*)&px[0][2]; const unsigned* p03 = (const unsigned*)&px[0][3];
        const unsigned* p12 = (const unsigned*)&px[1][2]; const unsigned* p13 = (const unsigned*)&px[1][3];
        a[c][0] = prmt(p00[c/2], p01[c/2], sel);
        a[c][1] = prmt(p10[c/2], p11[c/2], sel);
        a[c][2] = prmt(p02[c/2], p03[c/2], sel);
        a[c][3] = prmt(p12[c/2], p13[c/2], sel);
      }
      #pragma unroll
      for (int j = 0; j < NB; j++) {
        int e = 16*ch - 8*j;          // block j's window: cols 8j .. 8j+7+S-1
        if (8*j + 7 + S - 1 < 16*ch || 8*j > 16*ch + 15) continue;
        int ei = e == 0 ? 0 : (e == -8 ? 1 : (e == 8 ? 2 : -1));
        if (ei < 0) continue;
        #pragma unroll
        for (int c = 0; c < 8; c++) mma(acc[j][c], a[c], bt[((c*R + r)*3 + ei)*32]);
      }
    }
  }
  half bv[8];
  #pragma unroll
  for (int c = 0; c < 8; c++) bv[c] = bias[cb + c];
  #pragma unroll
  for (int j = 0; j < NB; j++)
    #pragma unroll
    for (int h = 0; h < 2; h++)
      #pragma unroll
      for (int u = 0; u < 2; u++) {
        int col = x0 + 8*j + 2*q + u;
        if (!mv[h] || col >= Wo) continue;
        uint4 v;
        unsigned* w = (unsigned*)&v;
        #pragma unroll
        for (int c = 0; c < 8; c += 2)
          w[c/2] = pk(__float2half(acc[j][c][2*h+u] + __half2float(bv[c])), __float2half(acc[j][c+1][2*h+u] + __half2float(bv[c+1])));
        *(uint4*)(out + ((size_t)(mrow + 8*h)*Wo + col)*C + cb) = v;
      }
}
'''

VARIANTS = [(7, 2, 2, 1), (4, 2, 2, 1), (2, 2, 2, 1), (2, 2, 2, 2), (4, 2, 1, 1), (4, 4, 1, 1), (2, 4, 1, 2), (1, 2, 2, 2),
            (1, 4, 2, 2)]     # (8-column blocks per warp NB, warps over channels WC and rows WR, register bound)


def main():
    N, H, W, C, R, S = h.shape_args("32 56 56 96 7 7")
    p = h.depthwise_problem(N, H, W, C, R, S)
    names = [f"dw<{R},{S},{nb},{wc},{wr},{mb}>" for nb, wc, wr, mb in VARIANTS]
    mod = cp.RawModule(code=SRC, options=("-std=c++17", "--gpu-architecture=sm_90a", "-lineinfo"), name_expressions=names)
    res = {"shape": [N, H, W, C, R, S], "copy_us": h.copy_us(p.xin.numel()), "cudnn_us": h.cudnn_us(p)}
    for name, (nb, wc, wr, mb) in zip(names, VARIANTS):
        grid = ((C + 8*wc - 1)//(8*wc), (N*p.Ho + 16*wr - 1)//(16*wr), (p.Wo + 8*nb - 1)//(8*nb))
        args = (p.xin.data_ptr(), p.filt.data_ptr(), p.bias.data_ptr()) + h.dims(p)
        res[name] = h.run_variant(p, name, mod.get_function(name), grid, 32*wc*wr, args, wc*8*R*3*32*8, res["copy_us"])
    print(json.dumps(res))


main()
