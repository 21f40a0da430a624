"""Tile constants, shared-memory layout and refusals of the sm_100a tcgen05 kernel (sm100_ws.py).

Shared memory: [A stages][B stages][staging slot][full x S][empty x S][acc_full x 2]
[acc_empty x 2][res_full][tensor-memory address slot].
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import ConvProblem, DTYPE_BYTES
from . import tcgen05 as tc
from . import tensormap as tm
from .smem import Carve, OperandRingNames, Region
from .tma_loader import epilogue_map_args, epilogue_panel

KERNEL = "sm100_ws"
BLOCK_M = 128                     # MMA M: one output pixel per tensor-memory lane
WARP = 32
TMA_WARP, MMA_WARP, FIRST_EPILOGUE_WARP = 0, 1, 2
EPILOGUE_THREADS = 4 * WARP       # warps 2..5: each tensor-memory lane quadrant once
THREADS = 2 * WARP + EPILOGUE_THREADS
ACC_STAGES = 2
DESCRIPTORS = 4                   # activation, filter, output, residual
EPILOGUE_BARRIER, DEALLOC_BARRIER = 1, 2       # named barriers (0 is the CTA barrier)
MAX_STAGES = 8                    # with 128-byte K rows (twice as many with 64-byte rows)


class Sm100Unsupported(ValueError):
    pass


@dataclass(frozen=True)
class Sm100Layout(OperandRingNames):
    """[A stages][B stages][staging slot][full][empty][acc_full][acc_empty][res_full][tmem slot]."""
    a: Region
    b: Region
    out: Region                # the staging slot (also the residual's: same dtype)
    full: Region
    empty: Region
    acc_full: Region           # per accumulator stage: its MMAs completed
    acc_empty: Region          # per accumulator stage: the epilogue read it
    res_full: Region
    tmem_slot: Region          # tcgen05.alloc writes the tensor-memory address here
    total: int

    out_slot = property(lambda self: self.out.size)

    @property
    def barriers(self) -> int:
        return 2 * self.stages + 2 * ACC_STAGES + 1


def sm100_layout(p: ConvProblem, block_n: int, block_k: int, stages: int, cluster: int = 1) -> Sm100Layout:
    """cluster = 2 (a CTA pair): each CTA's B part holds its half of the block_n filter rows."""
    row = block_k * DTYPE_BYTES[p.dtype]
    carve = Carve()
    a = carve.take(BLOCK_M * row, stages)
    b = carve.take(block_n // cluster * row, stages)
    out = carve.take(BLOCK_M * block_n * DTYPE_BYTES[p.out_dtype])
    full, empty = carve.barriers(stages), carve.barriers(stages)
    acc_full, acc_empty = carve.barriers(ACC_STAGES), carve.barriers(ACC_STAGES)
    res_full = carve.barriers(1)
    tmem_slot = carve.take(16)
    return Sm100Layout(a, b, out, full, empty, acc_full, acc_empty, res_full, tmem_slot, carve.top)


def tmem_columns(block_n: int) -> int:
    """Tensor-memory columns allocated: two f32 accumulator stages of block_n columns."""
    return tc.tmem_columns_for(ACC_STAGES * block_n)


def store_width(dtype: str) -> int:
    """Output elements per 16-byte staging store."""
    return 16 // DTYPE_BYTES[dtype]


def check_supported(p: ConvProblem, block_n: int, block_k: int, cluster: int = 1) -> None:
    """Raises Sm100Unsupported with the reason when the kernel cannot serve p with this tile
    (cluster = 2: the CTA-pair variant, M = 256 MMAs over 128 rows per CTA)."""
    if cluster not in (1, 2):
        raise Sm100Unsupported(f"a {cluster}x1 cluster (1 or a CTA pair)")
    if p.runtime_sizes and cluster != 1:
        raise Sm100Unsupported("sizes read at run time on CTA pairs (1-SM tiles take them)")
    if p.dtype not in tc.KIND:
        raise Sm100Unsupported(f"{p.dtype} operands (kind::f16 takes f16/bf16, kind::i8 s8, kind::f8f6f4 e4m3/e5m2, "
                               f"kind::tf32 f32)")
    if (p.dtype == "i8") != (p.acc_dtype == "i32"):
        raise Sm100Unsupported(f"{p.dtype} operands summed in {p.acc_dtype}")
    if p.out_dtype not in ("f16", "bf16", "f32", "i8", "i32"):
        raise Sm100Unsupported(f"{p.out_dtype} output")
    if block_k * DTYPE_BYTES[p.dtype] not in (64, 128):
        raise Sm100Unsupported(f"block_k={block_k}: K rows of 64 or 128 bytes")
    try:
        tc.check_mma_shape(BLOCK_M * cluster, block_n, cluster)
    except ValueError as e:
        raise Sm100Unsupported(str(e)) from None
    if block_n % tc.LD_COLUMNS:
        raise Sm100Unsupported(f"block_n={block_n} is not a multiple of {tc.LD_COLUMNS} "
                               f"(one tcgen05.ld.32x32b.x{tc.LD_COLUMNS} per chunk)")
    if block_n // cluster % 8:
        raise Sm100Unsupported(f"block_n={block_n} over {cluster} CTAs: B halves of whole 8-row core matrices")
    full = p.residual_loads
    if len(full) > 1:
        raise Sm100Unsupported("more than one output-shaped epilogue operand")
    if full and full[0].dtype != p.out_dtype:
        raise Sm100Unsupported("a residual whose dtype differs from the output's (it is loaded into the staging slot)")
    w = store_width(p.out_dtype)
    if p.F % w:
        raise Sm100Unsupported(f"F={p.F} is not a multiple of {w} ({p.out_dtype} 16-byte output rows)")
    for dt in [p.out_dtype] + [ld.dtype for ld in full]:
        try:
            epilogue_panel(dt, block_n)
            tm.encode_tiled(epilogue_map_args(p, dt, BLOCK_M, block_n))
        except (ValueError, tm.TensorMapError) as e:
            raise Sm100Unsupported(f"epilogue TMA descriptor refused: {e}") from None
