"""Experiment (GPU, CuPy + PyTorch): a strided depthwise conv (default: EfficientNet's 5x5 stride 2,
32 x 56 x 56 x 144, f16, bias + relu) with each CTA's input band (BR output rows' input rows, all
columns, CV 16-byte channel vectors) staged in shared memory by cp.async, so each input element is
read from DRAM once, and items of PX pixels x 8 channels computed from shared memory (packed-f16
rows, f32 across rows). Prints each variant's time (CUDA graphs), relative L2 error against
PyTorch fp32, registers, shared memory, and a copy's time (note: a copy of in + out bytes, so twice
the traffic of the bench's same-size copy).

    python3 bench/experiments/depthwise_strided_band.py N H W C R S STRIDE

Not a convc kernel: it measured whether the design could beat the direct kernel (bench/NOTES.md).
"""
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SRC = r'''
#include <cuda_fp16.h>
__device__ __forceinline__ void cpasync16(void* s, const void* g, bool ok) {
  unsigned sa = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(sa), "l"(g), "r"(ok ? 16 : 0));
}
template<int R, int S, int SD, int BR, int CV, int PX, int NT, int MINB>
__global__ void __launch_bounds__(NT, MINB) dw(const half* __restrict__ in, const half* __restrict__ filt,
    const half* __restrict__ bias, half* __restrict__ out, int N, int H, int W, int C, int Ho, int Wo, int pt, int pl)
{
  extern __shared__ uint4 sm[];
  const int IR = (BR - 1)*SD + R, IC = (Wo - 1)*SD + S;
  const int tid = threadIdx.x;
  const int bands = (Ho + BR - 1) / BR;
  const int n = blockIdx.y / bands, o0 = (blockIdx.y % bands) * BR;
  const int c0 = blockIdx.x * CV * 8;
  const int ih0 = o0*SD - pt, iw0 = -pl;
  const int CVP = CV;   // vectors per pixel in smem
  for (int i = tid; i < IR*IC*CV; i += NT) {
    int v = i % CV; int p = i / CV; int col = p % IC, row = p / IC;
    int h = ih0 + row, w = iw0 + col, c = c0 + 8*v;
    bool ok = h >= 0 && h < H && w >= 0 && w < W && c < C;
    const half* src = ok ? in + ((size_t)(n*H + h)*W + w)*C + c : in;
    cpasync16(&sm[(row*IC + col)*CVP + v], src, ok);
  }
  asm volatile("cp.async.wait_all;");
  __syncthreads();
  const int groups = (Wo + PX - 1) / PX;
  for (int it = tid; it < BR*groups*CV; it += NT) {
    int v = it % CV; int t = it / CV; int gcol = t % groups, orow = t / groups;
    int oh = o0 + orow; if (oh >= Ho) continue;
    int c = c0 + 8*v; if (c >= C) continue;
    float acc[PX][8];
    #pragma unroll
    for (int p = 0; p < PX; p++)
      #pragma unroll
      for (int k = 0; k < 8; k++) acc[p][k] = 0.f;
    const int ow0 = gcol*PX;
    #pragma unroll
    for (int r = 0; r < R; r++) {
      uint4 f[S];
      #pragma unroll
      for (int s = 0; s < S; s++) f[s] = __ldg((const uint4*)(filt + (r*S + s)*C + c));
      constexpr int NCOL = (PX - 1)*SD + S;
      uint4 x[NCOL];
      const uint4* rowp = sm + ((orow*SD + r)*IC + ow0*SD)*CVP + v;
      #pragma unroll
      for (int j = 0; j < NCOL; j++) {
        int col = ow0*SD + j;
        x[j] = col < IC ? rowp[j*CVP] : make_uint4(0,0,0,0);
      }
      #pragma unroll
      for (int p = 0; p < PX; p++) {
        __half2 s2[4];
        #pragma unroll
        for (int k = 0; k < 4; k++) s2[k] = __float2half2_rn(0.f);
        #pragma unroll
        for (int s = 0; s < S; s++) {
          const __half2* xi = (const __half2*)&x[p*SD + s];
          const __half2* fi = (const __half2*)&f[s];
          #pragma unroll
          for (int k = 0; k < 4; k++) s2[k] = __hfma2(xi[k], fi[k], s2[k]);
        }
        #pragma unroll
        for (int k = 0; k < 4; k++) { float2 q = __half22float2(s2[k]); acc[p][2*k] += q.x; acc[p][2*k+1] += q.y; }
      }
    }
    uint4 bv = *(const uint4*)(bias + c);
    const __half* bh = (const __half*)&bv;
    #pragma unroll
    for (int p = 0; p < PX; p++) {
      int ow = ow0 + p; if (ow >= Wo) break;
      uint4 o; __half* oh8 = (__half*)&o;
      #pragma unroll
      for (int k = 0; k < 8; k++) oh8[k] = __float2half(fmaxf(acc[p][k] + __half2float(bh[k]), 0.f));
      *(uint4*)(out + ((size_t)(n*Ho + oh)*Wo + ow)*C + c) = o;
    }
  }
}
'''

# (output rows per CTA BR, 16-byte channel vectors CV, pixels per item PX, threads, register bound)
VARIANTS = [(2, 2, 1, 128, 1), (4, 2, 1, 128, 1), (4, 3, 1, 128, 1), (2, 6, 1, 256, 1), (4, 6, 1, 256, 1), (2, 2, 2, 128, 1),
            (4, 2, 2, 128, 1), (4, 3, 2, 128, 1), (8, 2, 1, 256, 1), (2, 3, 2, 128, 1), (1, 6, 1, 128, 1), (4, 1, 1, 64, 1)]


def main():
    N, H, W, C, R, S, SD = h.shape_args("32 56 56 144 5 5 2")
    p = h.depthwise_problem(N, H, W, C, R, S, stride=SD, relu=True)
    names = [f"dw<{R},{S},{SD},{br},{cv},{px},{nt},{mb}>" for br, cv, px, nt, mb in VARIANTS]
    mod = cp.RawModule(code=SRC, options=("-std=c++17", "--gpu-architecture=sm_90a"), name_expressions=names)
    copy = h.copy_us(N * (H * W + p.Ho * p.Wo) * C, graphs=True)
    print("copy (in+out bytes)", round(copy, 2), flush=True)
    for name, (br, cv, px, nt, mb) in zip(names, VARIANTS):
        if C % (8*cv):
            continue
        smem = ((br - 1)*SD + R) * ((p.Wo - 1)*SD + S) * cv * 16
        grid = (C // (8*cv), N * ((p.Ho + br - 1)//br), 1)
        args = (p.xin.data_ptr(), p.filt.data_ptr(), p.bias.data_ptr()) + h.dims(p)
        h.run_variant(p, name, mod.get_function(name), grid, nt, args, smem, copy, graphs=True)


main()
