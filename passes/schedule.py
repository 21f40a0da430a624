"""Schedule: how one ConvProblem is computed on one target (the planner's decision).

Plain data, round-tripped through the `convc.schedule` DictAttr. Lowerings read only the
problem and this; they make no tiling decisions of their own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum

class Kernel(str, Enum):
    """The kernel families' names: a Schedule's `kernel`, equal (and str()-equal) to its string,
    which the IR attribute and tuning caches store."""

    PORTABLE_IGEMM = "portable_igemm"
    SM90_TMA_WGMMA = "sm90_tma_wgmma"
    SM90_GATHER_WGMMA = "sm90_gather_wgmma"
    SM90_WS_COOPERATIVE = "sm90_ws_cooperative"
    SM90_WS_PINGPONG = "sm90_ws_pingpong"
    SM90_WS_STREAMK = "sm90_ws_streamk"
    SM90_ROWS_WGMMA = "sm90_rows_wgmma"
    SM100_WS = "sm100_ws"
    AMD_LDS_MFMA = "amd_lds_mfma"
    DIRECT_GROUPED = "direct_grouped"
    GROUPED_MMA = "grouped_mma"

    def __str__(self) -> str:
        return self.value


KERNELS = tuple(k.value for k in Kernel)


@dataclass(frozen=True)
class Schedule:
    kernel: Kernel              # which kernel family lowers it (a plain string converts)
    target: str                 # Target.arch
    block_m: int                # output rows (N*Ho*Wo) per workgroup
    block_n: int                # output channels per workgroup
    block_k: int                # reduction slice per main-loop step, K ordered (r, s, c)
    thread_m: int               # accumulator rows per thread
    thread_n: int               # accumulator columns per thread (vector along F)
    threads: int                # threads per workgroup
    vec_a: int                  # elements per activation load (divides C)
    vec_b: int                  # elements per filter load (divides R*S*C)
    stages: int                 # shared-memory buffers in the main-loop ring
    grid: tuple[int, int, int]  # workgroup count
    smem_bytes: int             # workgroup memory the kernel allocates
    subgroup_size: int
    k_order: str = "rsc"
    reason: str = ""            # why this kernel was chosen (shown by --report)
    scratch_bytes: int = 128    # per-call scratch result (TMA descriptor slots)
    split_k: int = 1            # CTAs (one cluster) sharing an output tile, each a K slice
    raster: int = 1             # persistent kernels: M tiles per rasterization group
    cluster_m: int = 1          # persistent kernels: CTAs per cluster along M (filter tile multicast)
    min_ctas_per_sm: int = 0    # co-resident CTAs the register allocation must allow (0: no bound)
    epilogue_slots: int = 1     # persistent kernels: staging (and residual) slots per consumer warpgroup;
                                # 0: staged in a ring stage lent per tile (cooperative)
    swap_ab: bool = False       # persistent kernels: wgmma M over channels, N over block_m pixels
    direct_stages: int = 0      # persistent kernels: leading k-tiles the consumers load with cp.async
                                # while the TMA descriptors are written (direct_loads.py)
    accumulate: str = "f32"     # direct depthwise: "f32", or "f16_rows" (each filter row's taps
                                # summed in packed f16, the rows in f32)

    def __post_init__(self):
        if self.kernel not in KERNELS:
            raise ValueError(f"unknown kernel {self.kernel!r}")
        object.__setattr__(self, "kernel", Kernel(self.kernel))
        object.__setattr__(self, "grid", tuple(self.grid))
        if self.kernel != "portable_igemm":
            return
        if self.block_m % self.thread_m or self.block_n % self.thread_n:
            raise ValueError("thread tile must divide the block tile")
        if (self.block_m // self.thread_m) * (self.block_n // self.thread_n) != self.threads:
            raise ValueError("threads must cover the block tile exactly once")
        for v in (self.vec_a, self.vec_b):
            if self.block_k % v:
                raise ValueError("load vectors must divide block_k")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        if d["accumulate"] == "f32":        # only the direct depthwise kernel has another
            del d["accumulate"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Schedule":
        return cls(**d)

    def describe(self) -> str:
        return (f"{self.kernel} {self.block_m}x{self.block_n}x{self.block_k} "
                f"threads={self.threads} stages={self.stages} smem={self.smem_bytes}B"
                + (f" split_k={self.split_k}" if self.split_k > 1 else "")
                + (f" raster={self.raster}" if self.raster > 1 else "")
                + (f" cluster={self.cluster_m}x1" if self.cluster_m > 1 else "")
                + (f" epilogue_slots={self.epilogue_slots}" if self.epilogue_slots != 1 else "")
                + (" swap_ab" if self.swap_ab else "")
                + (f" direct={self.direct_stages}" if self.direct_stages else "")
                + (f" accumulate={self.accumulate}" if self.accumulate != "f32" else ""))
