"""Tiles, shared-memory layout and refusals of the sm_90a warp-specialized kernels (sm90_ws.py).

Shared memory, one 1024-aligned allocation:
[A stages][B stages][out slots][residual slots unless in place][full][empty]
[res_full][res_empty][turn x consumers], `epilogue_slots` slots per consumer warpgroup (with
none: [A stages][B stages][full][empty][turn x2]).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...problem import ConvProblem, DTYPE_BYTES, OperandLoad
from ...schedule import Kernel, WarpRole
from . import tensormap as tm
from .primitives import WGMMA_OPERANDS
from .smem import Carve, OperandRingNames, Region
from .tma_loader import CHANNELS_PER_TILE, epilogue_map_args, epilogue_panel
from .warp_roles import CONSUMER_REGS, WARPGROUP, consumer_registers_for


def row_bytes(block_k: int, dtype: str = "f16") -> int:
    """Bytes of one swizzled K row of operands (128 or 64: also the swizzle span)."""
    return block_k * DTYPE_BYTES[dtype]


DESCRIPTORS = 4                            # activation, filter, output, residual
# f32 accumulator registers per consumer thread: 160 (a 128x160 tile per warpgroup, F = 320
# in two tiles) still leaves ptxas room under the 232-register consumer budget without spills.
MAX_ACC_REGS = 160


# A consumer thread's accumulators plus the per-channel epilogue operands loaded before the
# main loop, in 32-bit registers: above this, ptxas spills under the 232-register consumer
# budget (the addresses, loop state and epilogue temporaries need the rest). Measured with
# ptxas 13 on ResNet-50's unfolded BatchNorm epilogues: 128 accumulators + 6 f16 operands of a
# 256-channel tile (320) spilled 460 bytes and ran 77 us on an H200 where the same conv with 3
# operands (224) spilled 60 bytes and ran 37.5 us; a tile over the budget loads its operands in
# the epilogue instead (Sm90WsConfig.late_channel_ops).
CHANNEL_OPERAND_BUDGET = 168


def channel_operand_budget(consumers: int = 2) -> int:
    """CHANNEL_OPERAND_BUDGET under the register share of `consumers` consumer warpgroups
    (warp_roles.consumer_registers_for): the same 64 registers left for the rest."""
    return CHANNEL_OPERAND_BUDGET - (CONSUMER_REGS - consumer_registers_for(consumers))


def consumer_registers(p: ConvProblem, kernel: str, block_m: int, block_n: int, swap: bool = False) -> int:
    """32-bit registers a consumer thread holds through the main loop: its accumulators (f32 or
    i32, one per 128th of its slice) and, per per-channel epilogue operand, the vector<2>
    pairs of its columns (warp_roles.channel_operands: block_n / 8 of them; swapped tiles: two
    broadcast pairs per 64-channel sub-block, warp_roles.channel_operands_rows)."""
    rows, cols = consumer_slice(kernel, block_m, block_n, swap)
    regs = rows * cols // WARPGROUP
    for ld in p.operand_loads:
        if ld.broadcast == "channel":
            per_pair = max(1, 2 * DTYPE_BYTES[ld.dtype] // 4)
            regs += (cols // 64 * 2 if swap else block_n // 8) * per_pair
    return regs


class WsUnsupported(ValueError):
    pass


def residual_step(p: ConvProblem) -> OperandLoad | None:
    """The epilogue's one output-shaped operand (loaded by TMA), if any."""
    full = p.residual_loads
    if len(full) > 1:
        raise WsUnsupported("more than one output-shaped epilogue operand")
    return full[0] if full else None


def consumer_slice(kernel: str, block_m: int, block_n: int, swap: bool = False) -> tuple[int, int]:
    """(pixel rows, channels) of the tile that one consumer warpgroup computes and stages:
    cooperative warpgroups split the rows, or the channels of a swapped tile."""
    if Kernel(kernel).role is not WarpRole.COOPERATIVE:
        return block_m, block_n
    return (block_m, block_n // 2) if swap else (block_m // 2, block_n)


@dataclass(frozen=True)
class WsLayout(OperandRingNames):
    """Shared memory of the persistent kernels: the operand ring, then `slots` staging slots
    per consumer warpgroup (each also the residual's when it has the output's dtype, else
    separate residual slots), then the barriers. Two slots let tile u's residual land while
    tile u - 1's epilogue and store run, and let a store drain while the next tile is staged.
    slots = 0: no staging slots; each consumer warpgroup stages its slice of a tile (and
    receives its residual) in one ring stage of its own, the activation or filter part of
    that stage (`out` and `res` are then that ring part), so the whole allocation is ring:
    128x256 cooperative tiles get 4 stages instead of 3."""
    rows: int                  # pixel rows per consumer warpgroup
    cols: int                  # channels per consumer warpgroup
    out_slot: int              # bytes of a warpgroup's staged slice
    res_slot: int              # bytes of a warpgroup's residual slice (0: no residual)
    res_in_place: bool         # the residual is loaded into the staging slot itself
    slots: int                 # staging (and residual) slots per consumer warpgroup; 0: in the ring
    a: Region                  # the ring stages' activation parts
    b: Region                  # ... and filter parts
    out: Region                # staging slots, warpgroup-major
    res: Region                # residual slots (`out` when in place)
    full: Region               # per ring stage: the producer filled it
    empty: Region              # per ring stage: the consumers released it
    res_full: Region           # per residual slot: its residual landed
    res_empty: Region          # per residual slot: it may be refilled
    turn: Region               # per ping-pong warpgroup: its main loop may start
    total: int
    consumers: int = 2         # consumer warpgroups (more than two: ping-pong only)

    res0 = property(lambda self: self.res.offset)
    slot_stride = property(lambda self: self.out.size)


def swap_max_pixels(kernel: str, block_n: int) -> int:
    """Most pixels a swapped tile of block_n channels may hold: the wgmma's N limit (256),
    and the accumulators of a warpgroup's channels (cols x pixels / 128 per thread) within
    MAX_ACC_REGS, in multiples of 16."""
    cols = consumer_slice(kernel, 0, block_n, swap=True)[1]
    return min(256, MAX_ACC_REGS * WARPGROUP // cols // 16 * 16)


def ws_layout(p: ConvProblem, kernel: str, block_m: int, block_n: int, stages: int,
              block_k: int = CHANNELS_PER_TILE, slots: int = 1, swap: bool = False,
              consumers: int = 2) -> WsLayout:
    rows, cols = consumer_slice(kernel, block_m, block_n, swap)
    res = residual_step(p)
    out_slot = rows * cols * DTYPE_BYTES[p.out_dtype]
    res_slot = rows * cols * DTYPE_BYTES[res.dtype] if res else 0
    in_place = bool(res) and res.dtype == p.out_dtype
    carve = Carve()
    a = carve.take(block_m * row_bytes(block_k, p.dtype), stages)
    b = carve.take(block_n * row_bytes(block_k, p.dtype), stages)
    if slots == 0:
        # the smaller ring part that holds a warpgroup's slice (check_supported: one does)
        out = min([part for part in (a, b) if out_slot <= part.size] or [b], key=lambda r: (r.size, r.offset))
        res = out
    else:
        out = carve.take(out_slot, consumers * slots)
        res = out if in_place else carve.take(res_slot, consumers * slots)
    full, empty = carve.barriers(stages), carve.barriers(stages)
    res_full, res_empty = carve.barriers(consumers * slots), carve.barriers(consumers * slots)
    turn = carve.barriers(consumers)
    return WsLayout(rows, cols, out_slot, res_slot, in_place, slots, a, b, out, res, full, empty, res_full,
                    res_empty, turn, carve.top, consumers)


def check_operands(p: ConvProblem, role: WarpRole, mma_n: int) -> None:
    """What the operand type adds to check_supported: the accumulator type the wgmma sums in;
    for s8 (summed in s32), an N the integer wgmma takes (8, 16, 24, 32, then multiples of 16:
    ptxas refuses e.g. m64n40k32 or m64n136k32). Stream-K partials travel in the
    accumulator's type (stream_k.py)."""
    acc = WGMMA_OPERANDS[p.dtype][2]
    if p.acc_dtype != acc:
        raise WsUnsupported(f"{p.dtype} operands accumulated in {p.acc_dtype} (the wgmma sums them in {acc})")
    if acc != "i32":
        return
    if mma_n > 32 and mma_n % 16:
        raise WsUnsupported(f"an s8 wgmma with N={mma_n} (8, 16, 24, 32, then multiples of 16)")


def check_supported(p: ConvProblem, kernel: str, block_m: int, block_n: int, slots: int = 1,
                    swap: bool = False, cluster_m: int = 1, block_k: int = CHANNELS_PER_TILE,
                    consumers: int = 2) -> None:
    """Raises WsUnsupported with the reason when the kernel cannot serve p with this tile."""
    res = residual_step(p)
    rows, cols = consumer_slice(kernel, block_m, block_n, swap)
    role = Kernel(kernel).role
    if consumers != 2 and (role is not WarpRole.PINGPONG or consumers != 3):
        # four hung on an H200 before their register share was bounded (warp_roles), and none
        # has run since: not offered
        raise WsUnsupported(f"{consumers} consumer warpgroups with {kernel} (3: ping-pong only)")
    if consumers > 2 and rows * cols // WARPGROUP + 48 > consumer_registers_for(consumers):
        # the accumulators and ~48 registers of addresses, loop state and epilogue temporaries
        raise WsUnsupported(f"a {rows}x{cols} tile in {consumers} consumer warpgroups of "
                            f"{consumer_registers_for(consumers)} registers")
    check_operands(p, role, block_m if swap else block_n)
    if role is WarpRole.STREAM_K and res:
        raise WsUnsupported("stream-K with a residual (the residual load follows tiles, not segments)")
    if slots not in (0, 1, 2) or (role is WarpRole.STREAM_K and slots != 1):
        raise WsUnsupported(f"{slots} epilogue slots per warpgroup with {kernel}")
    if slots == 0:
        # staging in the ring: each cooperative warpgroup lends one ring stage per tile
        if role is not WarpRole.COOPERATIVE or cluster_m != 1:
            raise WsUnsupported("epilogue staged in the ring needs cooperative consumers without a cluster")
        if res and res.dtype != p.out_dtype:
            raise WsUnsupported("epilogue staged in the ring with a residual whose dtype differs from the output's")
        lay = ws_layout(p, kernel, block_m, block_n, 1, block_k, 0, swap)
        if lay.out_slot > max(lay.a_stage, lay.b_stage):
            raise WsUnsupported(f"a {lay.rows}x{lay.cols} {p.out_dtype} slice does not fit a ring stage's operand part")
    if slots > 1 and res and res.dtype != p.out_dtype:
        # the residual would need slots of its own (not in place): a protocol no GPU check covers
        raise WsUnsupported("two epilogue slots with a residual whose dtype differs from the output's")
    if swap:
        if role is WarpRole.STREAM_K or cluster_m != 1:
            raise WsUnsupported("swapped tiles with stream-K or a cluster")
        if cols % 64 or cols > 128:
            raise WsUnsupported(f"swapped tiles: {cols} channels per consumer warpgroup (64 or 128)")
        if block_m % 16 or block_m > 256 or cols * block_m > MAX_ACC_REGS * WARPGROUP:
            raise WsUnsupported(f"swapped tiles: block_m={block_m} (a multiple of 16, at most 256)")
        if any(DTYPE_BYTES[dt] != 2 for dt in [p.out_dtype] + ([res.dtype] if res else [])):
            raise WsUnsupported("swapped tiles need 16-bit outputs and residuals (transposed 8x8 moves)")
    else:
        if rows % 64 or rows > 128:
            raise WsUnsupported(f"{rows} rows per consumer warpgroup (64 or 128)")
        if block_n % 8 or block_n > 256 or rows * block_n > MAX_ACC_REGS * WARPGROUP:
            raise WsUnsupported(f"block_n={block_n}")
    for dt in [p.out_dtype] + ([res.dtype] if res else []):
        try:
            epilogue_panel(dt, cols)
        except ValueError as e:
            raise WsUnsupported(str(e)) from None
        if (p.F * DTYPE_BYTES[dt]) % 16:
            raise WsUnsupported(f"F={p.F} rows of {dt} are not 16-byte aligned for TMA")
        try:
            tm.encode_tiled(epilogue_map_args(p, dt, rows, cols))
        except tm.TensorMapError as e:
            raise WsUnsupported(f"epilogue TMA descriptor refused: {e}") from None
