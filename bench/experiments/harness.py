"""What the depthwise experiments share: the problem on the GPU (random f16 NHWC input, one
filter per channel, a bias) with PyTorch's fp32 reference, timing, a copy's time for scale, and
one variant's launch-check-time report. Each experiment keeps its CUDA source, variants and
launch geometry.

Timing: `graphs` False times back-to-back launches between two events (what the mma.sync
experiments were measured with; enough for kernels of 15 us and more), True captures them in a
CUDA graph first (no launch overhead: short kernels), "cupti" takes the median kernel duration
from the profiler (as convc-bench does: comparable with its times).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import cupy as cp
import torch


@dataclass
class Problem:
    N: int
    H: int
    W: int
    C: int
    R: int
    S: int
    stride: int
    Ho: int
    Wo: int
    pad: int
    x: torch.Tensor          # NCHW view of NHWC memory (channels_last)
    xin: torch.Tensor        # the same memory as an NHWC tensor
    filt: torch.Tensor       # [R, S, C]
    bias: torch.Tensor
    ref: torch.Tensor        # fp32, NCHW
    w: torch.Tensor          # [C, 1, R, S] (PyTorch's layout, for cuDNN)


# CUDA the experiments share: V f16 channels as V/2 packed pairs, their 8- or 16-byte loads,
# zeros and stores; 16-byte async copies into shared memory
VEC_CUDA = r'''
#include <cuda_fp16.h>
template<int V> struct Vec;
template<> struct Vec<4> { __half2 h[2]; };
template<> struct Vec<8> { __half2 h[4]; };

template<int V> __device__ __forceinline__ Vec<V> ld(const half* p) {
  Vec<V> v;
  if constexpr (V == 4) { *reinterpret_cast<uint2*>(&v) = __ldg(reinterpret_cast<const uint2*>(p)); }
  else { *reinterpret_cast<uint4*>(&v) = __ldg(reinterpret_cast<const uint4*>(p)); }
  return v;
}
template<int V> __device__ __forceinline__ Vec<V> zero() {
  Vec<V> v;
  #pragma unroll
  for (int k = 0; k < V / 2; k++) v.h[k] = __float2half2_rn(0.f);
  return v;
}
template<int V> __device__ __forceinline__ void st(half* p, Vec<V> v) {
  if constexpr (V == 4) *reinterpret_cast<uint2*>(p) = *reinterpret_cast<uint2*>(&v);
  else *reinterpret_cast<uint4*>(p) = *reinterpret_cast<uint4*>(&v);
}
// staged tiles: a 16-byte async copy into shared memory (zeros where !ok), its groups
__device__ __forceinline__ void cp16(unsigned dst, const void* src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(ok ? 16 : 0));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;"); }
template<int K> __device__ __forceinline__ void wait() { asm volatile("cp.async.wait_group %0;" :: "n"(K)); }
'''


def sized_source(p: "Problem", src: str) -> str:
    """src after VEC_CUDA, with the problem's sizes as DIM_* macros: compile-time constants, as
    in convc's kernels (runtime divisions made an item kernel ~1.7x slower)."""
    sizes = "".join(f"#define DIM_{k} {v}\n" for k, v in
                    dict(N=p.N, H=p.H, W=p.W, C=p.C, HO=p.Ho, WO=p.Wo, PAD=p.pad).items())
    return sizes + VEC_CUDA + src


def shape_args(default: str) -> list[int]:
    return [int(v) for v in (sys.argv[1:] or default.split())]


def depthwise_problem(N, H, W, C, R, S, stride=1, relu=False) -> Problem:
    """Same-padded (R // 2) depthwise conv with bias (and relu), seeded."""
    pad = R // 2
    Ho, Wo = (H + 2 * pad - R) // stride + 1, (W + 2 * pad - S) // stride + 1
    torch.manual_seed(0)
    x = torch.randn(N, C, H, W, device="cuda").half().contiguous(memory_format=torch.channels_last)
    w = (torch.randn(C, 1, R, S, device="cuda") / (R * S) ** 0.5).half()
    b = torch.randn(C, device="cuda").half()
    ref = torch.nn.functional.conv2d(x.float(), w.float(), b.float(), padding=pad, stride=stride, groups=C)
    if relu:
        ref = torch.relu(ref)
    return Problem(N, H, W, C, R, S, stride, Ho, Wo, pad, x, x.permute(0, 2, 3, 1).contiguous(),
                   w[:, 0].permute(1, 2, 0).contiguous(), b, ref, w)


def band_setup(default: str, timing) -> tuple:
    """The band experiments' problem (N H W C R from argv or `default`, same-padded R x R
    depthwise + bias + relu, stride 1) and its same-size copy time (4 rotating buffers), printed
    with cuDNN's time: (p, copy_us)."""
    N, H, W, C, R = shape_args(default)
    assert R <= 9, "16 input columns cover 8 outputs of windows up to 9 wide"
    p = depthwise_problem(N, H, W, C, R, R, 1, relu=True)
    copy = copy_us(N * (H * W + p.Ho * p.Wo) * C // 2, graphs=timing, rotate=4)
    print("shape", [N, H, W, C, R], "copy", round(copy, 2), "cudnn", round(cudnn_us(p, graphs=timing), 2), flush=True)
    return p, copy


def stream():
    """PyTorch's current stream for CuPy launches (the capture stream inside a graph)."""
    return cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)


def cupti_us(fn, iters: int = 50) -> float:
    """Median device duration (microseconds) of the kernels of one call of fn."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    evs = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                 key=lambda e: e.time_range.start)
    per = len(evs) // iters
    return sorted(sum(e.time_range.elapsed_us() for e in evs[i * per:(i + 1) * per]) for i in range(iters))[iters // 2]


def timeit(fn, graphs=False, iters: int = 200) -> float:
    """Microseconds per call of fn."""
    if graphs == "cupti":
        return cupti_us(fn)
    if graphs:
        fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        reps, replays = 20, iters // 20
        with torch.cuda.graph(g):
            for _ in range(reps):
                fn()
        g.replay()
        torch.cuda.synchronize()
        run, calls = g.replay, reps * replays
    else:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        run, calls, replays = fn, iters, iters
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(replays):
        run()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / calls * 1000


def copy_us(elements: int, graphs: bool = False, rotate: int = 1) -> float:
    """A device copy of `elements` f16 values (reads and writes that many); `rotate` source and
    destination buffers used in turn (as convc-bench's inputs: with 4, a problem of more than a
    quarter of L2 is read from DRAM)."""
    srcs = [torch.empty(elements, dtype=torch.half, device="cuda") for _ in range(rotate)]
    dsts = [torch.empty_like(srcs[0]) for _ in range(rotate)]
    calls = [0]

    def fn():
        i = calls[0] % rotate
        calls[0] += 1
        dsts[i].copy_(srcs[i])
    return timeit(fn, graphs)


def cudnn_us(p: Problem, graphs: bool = False) -> float:
    """PyTorch's depthwise conv (channels_last, cudnn.benchmark)."""
    torch.backends.cudnn.benchmark = True
    conv = torch.nn.Conv2d(p.C, p.C, p.R, padding=p.pad, stride=p.stride, groups=p.C).cuda().half()
    conv = conv.to(memory_format=torch.channels_last)
    conv.weight.data.copy_(p.w)
    conv.bias.data.copy_(p.bias)
    with torch.no_grad():
        return timeit(lambda: conv(p.x), graphs)


def run_variant(p: Problem, name: str, kernel, grid, threads: int, args, smem: int, copy: float,
                graphs: bool = False, rotate: int = 1) -> dict:
    """Launch into a NaN-poisoned output, check it against the reference, time it (with
    `rotate` copies of the input used in turn, the first one checked), print and return the
    report."""
    if smem > 48 * 1024:
        kernel.max_dynamic_shared_size_bytes = smem
    out = torch.full((p.N, p.Ho, p.Wo, p.C), float("nan"), device="cuda", dtype=torch.half)
    inputs = [args[0]] + [p.xin.clone() for _ in range(rotate - 1)]
    fulls = [(x if isinstance(x, int) else x.data_ptr(), args[1], args[2], out.data_ptr()) + tuple(args[3:])
             for x in inputs]
    calls = [0]

    def fn():
        full = fulls[calls[0] % rotate]
        calls[0] += 1
        kernel(grid, (threads,), full, shared_mem=smem, stream=stream())

    fn()
    torch.cuda.synchronize()
    got = out.permute(0, 3, 1, 2).float()
    err = ((got - p.ref).norm() / p.ref.norm()).item()
    us = timeit(fn, graphs)
    report = {"us": round(us, 2), "rel_l2": err, "regs": kernel.num_regs, "spill": kernel.local_size_bytes,
              "smem": smem, "pct_copy": round(100 * copy / us, 1) if us else None}
    print(name, report, flush=True)
    return report


def ctas_per_sm(regs: int, threads: int, smem: int) -> int:
    """Resident CTAs per SM on sm_90 (registers in 8-per-thread units, 227 KiB of shared memory
    plus 1 KiB reserved per CTA, 64 warps): the persistent experiments' grid."""
    warps = -(-threads // 32)
    by_regs = 65536 // (warps * 32 * (-(-regs // 8) * 8))
    by_smem = (228 * 1024) // (smem + 1024)
    return max(1, min(by_regs, by_smem, 64 // warps, 32))


def dims(p: Problem) -> tuple:
    """The kernels' trailing int arguments: N, H, W, C, Ho, Wo, pad top, pad left."""
    return tuple(cp.int32(v) for v in (p.N, p.H, p.W, p.C, p.Ho, p.Wo, p.pad, p.pad))
