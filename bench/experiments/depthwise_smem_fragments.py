"""Experiment (GPU, CuPy + PyTorch): a depthwise 7x7 conv on mma.sync m16n8k16 with the CTA's input
tile staged in shared memory by cp.async as 4-channel planes ([row][column][4 channels]), each lane's
A fragment registers read as two neighbouring pixels per 16-byte load and paired per channel with a
byte permute (no transposition pass, unlike depthwise_mma), B prepacked per lane in global memory,
the output staged through shared memory for 16-byte stores. Variants: (8*NB columns, WC x WR warps,
register bound, plane pitch mod 16 pixels); ONLY="dw<...>;..." runs a subset (for Nsight Compute).

    python3 bench/experiments/depthwise_smem_fragments.py N H W C R S

Not a convc kernel: it measured whether the design could beat the direct kernel (bench/NOTES.md).
"""
import os
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SRC = r'''
#include <cuda_fp16.h>
__device__ __forceinline__ void mma(float* d, const unsigned* a, uint2 b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
}
__device__ __forceinline__ void cpasync8(void* s, const void* g, bool ok) {
  unsigned sa = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" :: "r"(sa), "l"(g), "r"(ok ? 8 : 0));
}
__device__ __forceinline__ unsigned pk(half a, half b) { return (unsigned)__half_as_ushort(a) | ((unsigned)__half_as_ushort(b) << 16); }

// B table: [C/4][R][3][32 lanes][4 ch] uint2 (channel innermost so a warp's 4 channels are one 32-B read per lane)
__global__ void pack_b(const half* filt, uint2* bt, int C, int R, int S) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int total = C * R * 3 * 32;
  if (i >= total) return;
  int c4 = i % 4; int t = i / 4; int l = t % 32; t /= 32; int e = t % 3; t /= 3; int r = t % R; int cg = t / R;
  int c = cg * 4 + c4;
  int g = l >> 2, q = l & 3, sh = e == 0 ? 0 : (e == 1 ? -8 : 8);
  half v[4];
  for (int h = 0; h < 2; h++) for (int u = 0; u < 2; u++) {
    int s = 2*q + 8*h + u - g + sh;
    v[2*h+u] = (s >= 0 && s < S) ? filt[(r*S + s)*C + c] : __float2half(0.f);
  }
  bt[i] = make_uint2(pk(v[0], v[1]), pk(v[2], v[3]));
}

template<int R, int S, int NB, int WC, int WR, int MINB, int PMOD>
__global__ void __launch_bounds__(32*WC*WR, MINB) dw(const half* __restrict__ in, const uint4* __restrict__ bt,
    const half* __restrict__ bias, half* __restrict__ out, int N, int H, int W, int C, int Ho, int Wo, int pt, int pl)
{
  constexpr int CT = 4*WC, TR = 16*WR, TW = 8*NB;
  constexpr int SPAN = TW + S - 1;
  constexpr int NCH = (SPAN + 15) / 16;
  constexpr int INR = TR + R - 1, INC = NCH*16;
  constexpr int PITCH = INC + ((PMOD - INC % 16) + 16) % 16;  // pixels (8 B) per plane row
  constexpr int PLANE = INR * PITCH;                          // uint2 per plane
  extern __shared__ uint2 sm[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  constexpr int NT = 32*WC*WR;
  const int tiles_w = (Wo + TW - 1) / TW, tiles_h = (Ho + TR - 1) / TR;
  int t = blockIdx.y;
  const int tw = t % tiles_w; t /= tiles_w;
  const int th = t % tiles_h; const int n = t / tiles_h;
  const int oh0 = th*TR, ow0 = tw*TW, c0 = blockIdx.x*CT;
  const int ih0 = oh0 - pt, iw0 = ow0 - pl;
  // stage: pieces (row, col, 4-ch group), group fastest
  for (int i = tid; i < INR*INC*WC; i += NT) {
    int cg = i % WC; int p = i / WC; int col = p % INC; int row = p / INC;
    int h = ih0 + row, w = iw0 + col;
    bool ok = h >= 0 && h < H && w >= 0 && w < W && col < SPAN && c0 + 4*cg < C;
    const half* src = ok ? in + ((size_t)(n*H + h)*W + w)*C + c0 + 4*cg : in;
    cpasync8(&sm[cg*PLANE + row*PITCH + col], src, ok);
  }
  asm volatile("cp.async.wait_all;");
  __syncthreads();
  const int wc = warp % WC, wr = warp / WC;
  const int g = lane >> 2, q = lane & 3;
  float acc[NB][4][4];
  #pragma unroll
  for (int j = 0; j < NB; j++)
    #pragma unroll
    for (int c = 0; c < 4; c++) { acc[j][c][0] = acc[j][c][1] = acc[j][c][2] = acc[j][c][3] = 0.f; }
  const int cgl = (c0 + 4*wc) / 4;
  const uint2* plane = sm + wc*PLANE;
  #pragma unroll 1
  for (int r = 0; r < R; r++) {
    uint2 b[3][4];
    #pragma unroll
    for (int e = 0; e < 3; e++) {
      const uint4* p = bt + (((size_t)(cgl*R + r)*3 + e)*32 + lane)*2;
      uint4 x = __ldg(p), y = __ldg(p + 1);
      b[e][0] = make_uint2(x.x, x.y); b[e][1] = make_uint2(x.z, x.w); b[e][2] = make_uint2(y.x, y.y); b[e][3] = make_uint2(y.z, y.w);
    }
    const uint2* row0 = plane + (16*wr + g + r)*PITCH + 2*q;
    #pragma unroll
    for (int ch = 0; ch < NCH; ch++) {
      uint4 v[4];   // (row g | g+8) x (cols 2q,2q+1 | +8)
      v[0] = *(const uint4*)(row0 + 16*ch);
      v[1] = *(const uint4*)(row0 + 8*PITCH + 16*ch);
      v[2] = *(const uint4*)(row0 + 16*ch + 8);
      v[3] = *(const uint4*)(row0 + 8*PITCH + 16*ch + 8);
      unsigned a[4][4];
      #pragma unroll
      for (int k = 0; k < 4; k++) {
        a[0][k] = __byte_perm(v[k].x, v[k].z, 0x5410);
        a[1][k] = __byte_perm(v[k].x, v[k].z, 0x7632);
        a[2][k] = __byte_perm(v[k].y, v[k].w, 0x5410);
        a[3][k] = __byte_perm(v[k].y, v[k].w, 0x7632);
      }
      #pragma unroll
      for (int j = 0; j < NB; j++) {
        int e = 16*ch - 8*j;
        if (8*j + 7 + S - 1 < 16*ch || 8*j > 16*ch + 15) continue;
        int ei = e == 0 ? 0 : (e == -8 ? 1 : (e == 8 ? 2 : -1));
        if (ei < 0) continue;
        #pragma unroll
        for (int c = 0; c < 4; c++) mma(acc[j][c], a[c], b[ei][c]);
      }
    }
  }
  __syncthreads();   // input tile dead: stage the output as f16 [row][col][CT] (+8 halves pad per row)
  half* st = (half*)sm;
  constexpr int SP = TW*CT + 8;
  float bv[4];
  #pragma unroll
  for (int c = 0; c < 4; c++) bv[c] = (c0 + 4*wc + c < C) ? __half2float(bias[c0 + 4*wc + c]) : 0.f;
  #pragma unroll
  for (int j = 0; j < NB; j++)
    #pragma unroll
    for (int h = 0; h < 2; h++)
      #pragma unroll
      for (int u = 0; u < 2; u++) {
        int row = 16*wr + g + 8*h, col = 8*j + 2*q + u;
        uint2 v = make_uint2(pk(__float2half(acc[j][0][2*h+u] + bv[0]), __float2half(acc[j][1][2*h+u] + bv[1])),
                             pk(__float2half(acc[j][2][2*h+u] + bv[2]), __float2half(acc[j][3][2*h+u] + bv[3])));
        *(uint2*)(st + row*SP + col*CT + 4*wc) = v;
      }
  __syncthreads();
  constexpr int VPP = CT / 8;   // 16-B vectors per pixel
  for (int i = tid; i < TR*TW*VPP; i += NT) {
    int vv = i % VPP; int p = i / VPP; int col = p % TW, row = p / TW;
    int oh = oh0 + row, ow = ow0 + col, c = c0 + 8*vv;
    if (oh < Ho && ow < Wo && c < C)
      *(uint4*)(out + ((size_t)(n*Ho + oh)*Wo + ow)*C + c) = *(const uint4*)(st + row*SP + col*CT + 8*vv);
  }
}
'''

ONLY = [x for x in os.environ.get('ONLY', '').split(';') if x]
# (8-column blocks NB, warps over 4-channel groups WC and 16-row blocks WR, register bound, plane pitch mod 16)
VARIANTS = [(7, 4, 1, 1, 2), (7, 4, 1, 1, 8), (4, 4, 1, 1, 8), (4, 4, 1, 3, 8), (4, 4, 2, 2, 8), (7, 2, 2, 1, 8),
            (7, 4, 2, 1, 8), (2, 4, 2, 2, 8)]


def main():
    N, H, W, C, R, S = h.shape_args("32 56 56 96 7 7")
    p = h.depthwise_problem(N, H, W, C, R, S)
    names = [f"dw<{R},{S},{nb},{wc},{wr},{mb},{pm}>" for nb, wc, wr, mb, pm in VARIANTS]
    mod = cp.RawModule(code=SRC, options=("-std=c++17", "--gpu-architecture=sm_90a", "-lineinfo"),
                       name_expressions=names + ["pack_b"])
    bt = torch.empty(C * R * 3 * 32 * 2, dtype=torch.int32, device="cuda")
    total = C * R * 3 * 32
    mod.get_function("pack_b")(((total + 255)//256,), (256,), (p.filt.data_ptr(), bt.data_ptr(), cp.int32(C), cp.int32(R),
                                                               cp.int32(S)))
    copy = round(h.copy_us(p.xin.numel()), 2)
    print("copy", copy, "cudnn", round(h.cudnn_us(p), 2), flush=True)
    for name, (nb, wc, wr, mb, pm) in zip(names, VARIANTS):
        if (ONLY and name not in ONLY) or C % (4*wc):
            continue
        tr, tw = 16*wr, 8*nb
        inc = (tw + S - 1 + 15)//16*16
        pitch = inc + ((pm - inc % 16) + 16) % 16
        smem = max(wc * (tr + R - 1) * pitch * 8, tr * (tw*4*wc + 8) * 2)
        grid = (C // (4*wc), N * ((p.Ho + tr - 1)//tr) * ((p.Wo + tw - 1)//tw), 1)
        args = (p.xin.data_ptr(), bt.data_ptr(), p.bias.data_ptr()) + h.dims(p)
        h.run_variant(p, name, mod.get_function(name), grid, 32*wc*wr, args, smem, copy)


main()
