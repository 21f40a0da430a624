"""What every kernel family's planning shares: the decline exception, tile arithmetic and the
driver-exact check of a schedule's tensor maps."""

from __future__ import annotations

import dataclasses

from ...lower.nvidia import tensormap, tma_loader
from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Schedule


# One sm_90a / sm_100a SM, for the occupancy estimates of the persistent kernels
SM_SMEM = 233_472            # shared memory per SM (228 KB)
CTA_SMEM_RESERVE = 1024      # what the hardware keeps per resident CTA
SM_THREADS = 2048
SM_REGISTERS = 65_536
MAX_CTAS = 8                 # co-resident CTAs considered


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


# Tile shapes that kernels fix at compile time and walk over whatever image comes are chosen for
# an image of this size when H and W are read at run time (the matcher's planning size,
# ir_reading.SPATIAL_HINT, only sizes the problem): detection and segmentation models, the ones
# served at several resolutions, run at hundreds of pixels. Planned for 64 px, a YOLO-style stem
# took 64-pixel tiles of the grouped kernel: 98 us at 4 x 640 x 640 where the static build's
# 320-pixel tiles take 32 (H200, csp_dynhw_b4_640).
RUNTIME_PLAN_SIZE = 640


def tile_planning_problem(p: ConvProblem) -> ConvProblem:
    """p as its tiles are planned: runtime image sizes taken as RUNTIME_PLAN_SIZE."""
    if not p.dynamic_spatial:
        return p
    return dataclasses.replace(p, H=RUNTIME_PLAN_SIZE if p.h_constant >= 0 else p.H,
                               W=RUNTIME_PLAN_SIZE if p.w_constant >= 0 else p.W)


def largest_vector(n: int, dtype: str, limit_bytes: int = 16) -> int:
    """Largest power-of-two vector (<= limit_bytes) whose width divides n."""
    v = limit_bytes // DTYPE_BYTES[dtype]
    while v > 1 and n % v:
        v //= 2
    return v


from ...kernel_families import PlanError  # noqa: F401  (the planners raise it through here)


def accepted(plan, p: ConvProblem, t, configs) -> list[Schedule]:
    """The distinct schedules `plan(p, t, config)` gives for configs, in order, leaving out the
    configs it declines (PlanError): a family's tuning candidates from its grid of knobs."""
    out = []
    for config in configs:
        try:
            out.append(plan(p, t, config))
        except PlanError:
            pass
    return list(dict.fromkeys(out))


SM90_SMEM_RESERVE = 1024        # barriers and alignment slack inside the one allocation


def tile_counts_for(p: ConvProblem, block_m: int, block_n: int) -> tuple[int, int]:
    return cdiv(p.gemm_m, block_m), cdiv(p.F, block_n)


def narrow_block_n(f: int) -> int:
    """Channels per persistent-kernel tile where F <= 64: 32 when F fits in them (an RGB or
    mask output, padded to 8 channels by convc-pad-channels, then computes 4x rather than 8x
    its useful columns), else 64. 32 is the narrowest tile the TMA-store epilogue stages (one
    64-byte swizzle panel of f16)."""
    return 32 if f <= 32 else 64


def tiles(p: ConvProblem, bm: int, bn: int) -> int:
    m, n = tile_counts_for(p, bm, bn)
    return m * n


def require_descriptors(p: ConvProblem, s: Schedule) -> Schedule:
    """s, once the driver-exact encoder accepts its activation and filter tensor maps."""
    try:
        tma_loader.tensor_maps(p, s)
    except tensormap.TensorMapError as e:
        raise PlanError(f"TMA descriptor refused: {e}") from None
    return s
