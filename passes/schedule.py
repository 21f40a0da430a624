"""Schedule: how one ConvProblem is computed on one target (the planner's decision).

Plain data, round-tripped through the `convc.schedule` DictAttr: what every kernel has (block
tile, threads, grid, memory) plus the kernel family's typed config (kernel_configs.py); what
follows from these (the subgroup size from the target, a kernel's warp role) is computed.
Lowerings read only the problem and this; they make no tiling decisions of their own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypeVar

from .kernel_configs import WARP_ROLES, Kernel, KernelConfig, WarpRole, config_types  # noqa: F401 (re-exported)
from .target import get_target


# The config type of each kernel: the one config class that names it in its KERNELS.
CONFIG_TYPES: dict[Kernel, type[KernelConfig]] = config_types()

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
