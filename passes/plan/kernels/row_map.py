"""Maps that read a reduction of each row's channels (a LayerNorm over the channel axis): the
row kernel (lower/common/row_map.py).

IREE splits a channels-last LayerNorm into two dispatches, each a reduction of every pixel's C
channels (the sum, then the sum of squares of the centred values) followed by an elementwise map
that reads it per pixel. Its codegen of these took 310 us each on ConvNeXt-T's 100352 x 96
activations at batch 32 on an H100 (19 MB in, 19 MB out: about 12 us at bandwidth). Here a few
lanes of a subgroup hold one row's channels in registers: each lane loads its 16-byte vectors,
the row's reduction is summed across the lanes by shuffles, and the same registers then go
through the map's epilogue.
"""

from __future__ import annotations

from ...kernel_configs import RowMapConfig
from ...problem import ConvProblem
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import PlanError, cdiv, largest_vector
from ...lower.common.row_map import emit_row_map, row_map_batch_grid
from ...kernel_families import KernelFamily, register

THREADS = 256
# 16-byte vectors of a row one lane keeps (registers): rows wider than lanes x this are declined
MAX_VECTORS_PER_LANE = 8


def supports(p: ConvProblem, t: Target) -> str | None:
    if not (p.is_map and p.row_combine):
        return "not a map reading a row reduction"
    lanes = 1 if t.backend == "cpu" else t.subgroup_size
    if cdiv(p.C, largest_vector(p.C, p.dtype)) > lanes * MAX_VECTORS_PER_LANE and t.backend != "cpu":
        return f"rows of {p.C} channels do not fit one subgroup's registers"
    return None


def plan_row_map(p: ConvProblem, t: Target) -> Schedule:
    """Lanes per row: the largest power of two up to the subgroup that divides the row's
    vectors (so each lane holds the same number), at least as many as the row needs to stay
    within MAX_VECTORS_PER_LANE."""
    why = supports(p, t)
    if why:
        raise PlanError(why)
    v = largest_vector(p.C, p.dtype)
    vectors = cdiv(p.C, v)
    if t.backend == "cpu":
        lanes, threads = 1, 1
    else:
        lanes = 1
        while lanes < t.subgroup_size and (vectors % (2 * lanes) == 0 or cdiv(vectors, lanes) > MAX_VECTORS_PER_LANE):
            lanes *= 2
        threads = THREADS
    rows = threads // lanes
    return Schedule(kernel=Kernel.ROW_MAP, target=t.arch, block_m=rows, block_n=v, block_k=1, threads=threads,
                    stages=1, grid=(cdiv(p.gemm_m, rows), 1, 1), smem_bytes=0, config=RowMapConfig(lanes=lanes),
                    reason=f"map reading a {p.row_combine} over each row's {p.C} channels: {lanes} lane"
                           f"{'s' if lanes > 1 else ''} per row holding {cdiv(vectors, lanes)} {v}-channel vectors "
                           "each, f32 partials summed across lanes")


ROW_MAP = register(KernelFamily("row_map", RowMapConfig, supports, plan_row_map,
                                emit_row_map, batch_grid=row_map_batch_grid))
