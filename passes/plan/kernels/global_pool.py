"""Global pooling: the pixel-reduction kernel (lower/common/global_pool.py).

A pooling window that covers the whole image (global average pooling before a classifier, the
squeeze of every squeeze-excitation block) reduces H*W pixels per output: the direct kernel's
unrolled window would give each thread a chain of H*W taps and the grid N*C/8 threads. IREE's
own codegen of these reductions (over the middle axis of [N, H*W, C]) took 66-99 us for 20-29 MB
at batch 32 on an H100 (about 10 us at bandwidth). Here a workgroup takes one image and a
chunk of channel vectors, its threads split into pixel lanes that stride over the pixels with
several 16-byte loads in flight, and the lanes' f32 partial sums meet in workgroup memory.
"""

from __future__ import annotations

from ...kernel_configs import GlobalPoolConfig
from ...problem import DTYPE_BYTES, ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import PlanError, cdiv, largest_vector
from ...lower.common.global_pool import emit_global_pool, global_pool_batch_grid
from ...kernel_families import KernelFamily, register

# threads per workgroup; where even one vector per workgroup leaves SMs idle, the larger size
# keeps more loads in flight on the SMs that have work
THREADS, FEW_WORKGROUP_THREADS = 256, 1024
# workgroups per SM the channel chunks aim for (narrower chunks, more workgroups, below it)
WORKGROUPS_PER_SM = 2
# bytes of a pixel's channels one workgroup reads at least: a whole 32-byte DRAM sector
MIN_PIXEL_BYTES = 32
UNROLL = 4


def supports(p: ConvProblem, t: Target) -> str | None:
    if not p.is_global_pool:
        return "not a pooling window over the whole image"
    return None


def plan_global_pool(p: ConvProblem, t: Target) -> Schedule:
    """One workgroup per (image, chunk of channel vectors): the widest chunk (up to 8 vectors)
    that still gives WORKGROUPS_PER_SM workgroups per SM, never below a DRAM sector per pixel."""
    why = supports(p, t)
    if why:
        raise PlanError(why)
    v = largest_vector(p.C, p.dtype)
    needed = cdiv(p.C, v)
    if t.backend == "cpu":
        vectors, threads = 1, 1
    else:
        floor = min(needed, max(1, MIN_PIXEL_BYTES // (v * DTYPE_BYTES[p.dtype])))
        options = [w for w in (8, 4, 2, 1) if floor <= w <= needed]      # powers of two: so are the lanes
        vectors = next((w for w in options if p.N * cdiv(needed, w) >= WORKGROUPS_PER_SM * t.num_sms), options[-1])
        threads = THREADS if p.N * cdiv(needed, vectors) >= t.num_sms else FEW_WORKGROUP_THREADS
    lanes = threads // vectors
    grid = (p.N * cdiv(needed, vectors), 1, 1)
    smem = lanes * vectors * v * 4 if lanes > 1 else 0
    return Schedule(kernel=Kernel.GLOBAL_POOL, target=t.arch, block_m=1, block_n=v, block_k=1, threads=threads,
                    stages=1, grid=grid, smem_bytes=smem, config=GlobalPoolConfig(vectors=vectors, unroll=UNROLL),
                    reason=f"global {p.pool}-pool: {vectors * v} channels of one image per workgroup, "
                           f"{lanes} pixel lane{'s' if lanes > 1 else ''} x {UNROLL} loads in flight, f32 sums"
                           + (" meeting in workgroup memory" if lanes > 1 else "")
                           + (", batch read at run time" if p.dynamic_batch else ""))


GLOBAL_POOL = register(KernelFamily("global_pool", GlobalPoolConfig, supports, plan_global_pool,
                                    emit_global_pool, batch_grid=global_pool_batch_grid))
