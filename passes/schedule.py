"""Schedule: how one ConvProblem is computed on one target (the planner's decision).

Plain data, round-tripped through the `convc.schedule` DictAttr: what every kernel has (block
tile, threads, grid, memory) plus the kernel family's typed config (kernel_configs.py); what
follows from these (the subgroup size from the target, a kernel's warp role) is computed.
Lowerings read only the problem and this; they make no tiling decisions of their own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from .kernel_configs import (DepthwiseMmaConfig, DepthwiseStripsConfig, DepthwiseTmaConfig, DirectGroupedConfig, GatherConfig, GlobalPoolConfig, RowMapConfig, SkinnyGemmConfig, GroupedMmaConfig, KernelConfig, LdsMfmaConfig,
                             PortableConfig, RowSlabConfig, Sm90WsConfig, Sm100WsConfig, TmaWgmmaConfig)
from .target import get_target


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
    DEPTHWISE_TMA = "depthwise_tma"
    DEPTHWISE_MMA = "depthwise_mma"
    DEPTHWISE_STRIPS = "depthwise_strips"
    GLOBAL_POOL = "global_pool"
    SKINNY_GEMM = "skinny_gemm"
    ROW_MAP = "row_map"

    def __str__(self) -> str:
        return self.value

    @property
    def role(self) -> "WarpRole | None":
        """The consumer warpgroups' division of work, for the warp-specialized sm_90a kernels."""
        return WARP_ROLES.get(self)


class WarpRole(str, Enum):
    """How the consumer warpgroups of a warp-specialized sm_90a kernel share the tiles:
    cooperative (both on each tile, splitting its rows or swapped channels), ping-pong (one
    tile each, taking turns in the main loop and epilogue) or stream-K (ping-pong consumers
    over k-lockstep segments, partial tiles fixed up through global memory)."""

    COOPERATIVE = "cooperative"
    PINGPONG = "ping-pong"
    STREAM_K = "ping-pong, stream-K"


WARP_ROLES = {Kernel.SM90_WS_COOPERATIVE: WarpRole.COOPERATIVE, Kernel.SM90_WS_PINGPONG: WarpRole.PINGPONG,
              Kernel.SM90_WS_STREAMK: WarpRole.STREAM_K}

# The config type each kernel family reads.
CONFIG_TYPES: dict[Kernel, type[KernelConfig]] = {
    Kernel.PORTABLE_IGEMM: PortableConfig,
    Kernel.SM90_TMA_WGMMA: TmaWgmmaConfig,
    Kernel.SM90_GATHER_WGMMA: GatherConfig,
    Kernel.SM90_WS_COOPERATIVE: Sm90WsConfig,
    Kernel.SM90_WS_PINGPONG: Sm90WsConfig,
    Kernel.SM90_WS_STREAMK: Sm90WsConfig,
    Kernel.SM90_ROWS_WGMMA: RowSlabConfig,
    Kernel.SM100_WS: Sm100WsConfig,
    Kernel.AMD_LDS_MFMA: LdsMfmaConfig,
    Kernel.DIRECT_GROUPED: DirectGroupedConfig,
    Kernel.GROUPED_MMA: GroupedMmaConfig,
    Kernel.DEPTHWISE_TMA: DepthwiseTmaConfig,
    Kernel.DEPTHWISE_MMA: DepthwiseMmaConfig,
    Kernel.DEPTHWISE_STRIPS: DepthwiseStripsConfig,
    Kernel.GLOBAL_POOL: GlobalPoolConfig,
    Kernel.SKINNY_GEMM: SkinnyGemmConfig,
    Kernel.ROW_MAP: RowMapConfig,
}

C = TypeVar("C", bound=KernelConfig)


KERNELS = tuple(k.value for k in Kernel)


@dataclass(frozen=True)
class Schedule:
    kernel: Kernel              # which kernel family lowers it (a plain string converts)
    target: str                 # Target.arch
    block_m: int                # output rows (N*Ho*Wo) per workgroup
    block_n: int                # output channels per workgroup
    block_k: int                # reduction slice per main-loop step, K ordered (r, s, c)
    threads: int                # threads per workgroup
    stages: int                 # shared-memory buffers in the main-loop ring
    grid: tuple[int, int, int]  # workgroup count
    smem_bytes: int             # workgroup memory the kernel allocates
    config: KernelConfig        # the kernel family's own knobs (CONFIG_TYPES[kernel])
    reason: str = ""            # why this kernel was chosen (shown by --report)
    scratch_bytes: int = 128    # per-call scratch result (TMA descriptor slots)

    def __post_init__(self):
        if self.kernel not in KERNELS:
            raise ValueError(f"unknown kernel {self.kernel!r}")
        object.__setattr__(self, "kernel", Kernel(self.kernel))
        object.__setattr__(self, "grid", tuple(self.grid))
        want = CONFIG_TYPES[self.kernel]
        if type(self.config) is not want:
            raise TypeError(f"{self.kernel} takes a {want.__name__}, not {type(self.config).__name__}")
        self.config.check(self)

    @property
    def subgroup_size(self) -> int:
        return get_target(self.target).subgroup_size

    def config_as(self, cls: type[C]) -> C:
        """The config, for a lowering that reads cls; TypeError for another family's schedule."""
        if not isinstance(self.config, cls):
            raise TypeError(f"a {cls.__name__} reader was given a {self.kernel} schedule "
                            f"({type(self.config).__name__})")
        return self.config

    def with_config(self, **changes) -> "Schedule":
        """This schedule with some config fields changed."""
        return dataclasses.replace(self, config=dataclasses.replace(self.config, **changes))

    def setting(self, name: str):
        """A field of the schedule or of its config, by name (tuning settings, test filters);
        AttributeError when neither has it."""
        if name in SCHEDULE_FIELDS:
            return getattr(self, name)
        if name in {f.name for f in dataclasses.fields(self.config)}:
            return getattr(self.config, name)
        raise AttributeError(f"{self.kernel} schedules have no setting {name!r}")

    def to_dict(self) -> dict:
        return {**{f: getattr(self, f) for f in SCHEDULE_FIELDS}, "config": self.config.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> "Schedule":
        """Inverse of to_dict; also reads the flat record written before per-family configs
        (every family's knobs side by side, plus k_order), keeping its family's knobs."""
        if d["kernel"] not in KERNELS:
            raise ValueError(f"unknown kernel {d['kernel']!r}")
        config_type = CONFIG_TYPES[Kernel(d["kernel"])]
        if "config" in d:
            return cls(**{**d, "config": config_type.from_dict(d["config"])})
        return cls(config=config_type.from_legacy(d), **{k: v for k, v in d.items() if k in SCHEDULE_FIELDS})

    def describe(self) -> str:
        return (f"{self.kernel} {self.block_m}x{self.block_n}x{self.block_k} "
                f"threads={self.threads} stages={self.stages} smem={self.smem_bytes}B"
                + self.config.describe())


SCHEDULE_FIELDS = tuple(f.name for f in dataclasses.fields(Schedule) if f.name != "config")
# every name Schedule.setting can answer for some kernel
SETTING_NAMES = frozenset(SCHEDULE_FIELDS).union(*({f.name for f in dataclasses.fields(c)}
                                                    for c in CONFIG_TYPES.values()))
