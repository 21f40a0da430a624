"""Kernel names and per-family kernel configs: what one kernel family reads of a Schedule beyond
the common block tile, threads and grid. Each config class names the kernels it parameterizes
(`KERNELS`); schedule.CONFIG_TYPES is derived from them (config_types).

Each family's lowering takes exactly its config type (Schedule.config_as), so a knob another
family would ignore cannot be set. Values computable from the stored ones (the epilogue
strategy, cluster size, co-resident CTA bound) are properties. `LEGACY` names the fields a
config took in the flat schedule record that IR attributes, bundles and fuzz results written
before these types carry (Schedule.from_dict converts them).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar


class EpilogueStrategy(str, Enum):
    """Where a persistent sm_90a consumer warpgroup stages its output tile for the TMA store."""

    OWN_SLOTS = "own_slots"               # epilogue_slots >= 1 staging slots of its own
    LENT_RING_STAGE = "lent_ring_stage"   # a ring stage the producer lends it per tile (cooperative)


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
    COPY_PIECES = "copy_pieces"

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


@dataclass(frozen=True)
class KernelConfig:
    """Base of the per-family configs: the defaults of the derived launch properties."""

    LEGACY: ClassVar[dict[str, str]] = {}       # field -> its name in the flat record
    KERNELS: ClassVar[tuple[Kernel, ...]] = ()   # the kernels this config parameterizes

    @property
    def cluster_size(self) -> int:
        """CTAs per cluster (the launch's cluster dimension)."""
        return 1

    @property
    def filter_multicast(self) -> int:
        """CTAs of a cluster along M that share one filter tile by TMA multicast."""
        return 1

    @property
    def min_ctas_per_sm(self) -> int:
        """Co-resident CTAs the register allocation must allow (0: no bound)."""
        return 0

    def check(self, s) -> None:
        """Raises ValueError where the config contradicts the schedule s it belongs to."""

    def describe(self) -> str:
        """The non-default knobs, as Schedule.describe appends them."""
        return ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "KernelConfig":
        return cls(**d)

    @classmethod
    def from_legacy(cls, flat: dict) -> "KernelConfig":
        """The config a flat (pre-config) schedule record describes."""
        return cls(**{f: flat[old] for f, old in cls.LEGACY.items() if old in flat})


@dataclass(frozen=True)
class PortableConfig(KernelConfig):
    """portable_igemm: each thread accumulates thread_m x thread_n outputs; loads move vec_a
    activation and vec_b filter elements."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.PORTABLE_IGEMM,)

    thread_m: int
    thread_n: int
    vec_a: int                  # elements per activation load (divides C)
    vec_b: int                  # elements per filter load (divides R*S*C)

    LEGACY: ClassVar[dict[str, str]] = {"thread_m": "thread_m", "thread_n": "thread_n", "vec_a": "vec_a",
                                        "vec_b": "vec_b"}

    def check(self, s) -> None:
        if s.block_m % self.thread_m or s.block_n % self.thread_n:
            raise ValueError("thread tile must divide the block tile")
        if (s.block_m // self.thread_m) * (s.block_n // self.thread_n) != s.threads:
            raise ValueError("threads must cover the block tile exactly once")
        for v in (self.vec_a, self.vec_b):
            if s.block_k % v:
                raise ValueError("load vectors must divide block_k")


@dataclass(frozen=True)
class LdsMfmaConfig(KernelConfig):
    """amd_lds_mfma: lane_elems elements per direct-to-LDS load (the target's load width);
    the 2x2 MFMA waves' tiles follow from the block tile."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.AMD_LDS_MFMA,)

    lane_elems: int

    LEGACY: ClassVar[dict[str, str]] = {"lane_elems": "vec_a"}

    def check(self, s) -> None:
        if self.lane_elems < 1 or s.block_k % self.lane_elems:
            raise ValueError(f"lane width {self.lane_elems} must divide block_k={s.block_k}")


@dataclass(frozen=True)
class RowMapConfig(KernelConfig):
    """row_map: `lanes` consecutive lanes of a subgroup hold one output row's channel vectors
    (block_n channels each; lane l takes vectors l, l + lanes, ...); block_m rows per workgroup."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.ROW_MAP,)

    lanes: int

    def check(self, s) -> None:
        if self.lanes < 1 or self.lanes & (self.lanes - 1) or s.threads % self.lanes:
            raise ValueError(f"{self.lanes} lanes per row (a power of two dividing the workgroup)")

    def describe(self) -> str:
        return f" lanes={self.lanes}"


@dataclass(frozen=True)
class SkinnyGemmConfig(KernelConfig):
    """skinny_gemm: a subgroup computes `rows` output rows x `channels` output channels, its
    lanes splitting K into block_k-element vectors (lane l takes vectors l, l + lanes, ...),
    f32 partial dot products summed across the lanes by shuffles."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.SKINNY_GEMM,)

    rows: int
    channels: int

    def check(self, s) -> None:
        if self.rows < 1 or self.channels < 1 or self.rows * self.channels > 16:
            raise ValueError(f"{self.rows} x {self.channels} outputs per subgroup (at most 16 accumulators)")

    def describe(self) -> str:
        return f" rows={self.rows} channels={self.channels}"


@dataclass(frozen=True)
class GlobalPoolConfig(KernelConfig):
    """global_pool: a workgroup reduces one image's `vectors` channel vectors (block_n channels
    each) over all pixels; its threads are vectors x (threads / vectors) pixel lanes, each lane
    taking every lanes-th pixel with `unroll` loads in flight; the lanes' partial sums meet in
    workgroup memory (a tree of halvings)."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.GLOBAL_POOL,)

    vectors: int
    unroll: int = 4

    def check(self, s) -> None:
        lanes = s.threads // self.vectors if self.vectors else 0
        if self.vectors < 1 or s.threads % self.vectors or lanes & (lanes - 1):
            raise ValueError(f"{self.vectors} channel vectors do not split {s.threads} threads into "
                             "a power of two of pixel lanes")
        if self.unroll < 1:
            raise ValueError(f"{self.unroll} loads in flight")

    def describe(self) -> str:
        return f" vectors={self.vectors} unroll={self.unroll}"


@dataclass(frozen=True)
class CopyConfig(KernelConfig):
    """copy_pieces: each thread moves `per_thread` vectors (block_n elements each, or fewer for
    a piece whose slices are not vector-aligned), threads * per_thread consecutive vectors per
    workgroup, the pieces' vectors numbered one after another."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.COPY_PIECES,)

    per_thread: int = 1

    def check(self, s) -> None:
        if self.per_thread < 1:
            raise ValueError(f"{self.per_thread} vectors per thread")

    def describe(self) -> str:
        return f" per_thread={self.per_thread}"


@dataclass(frozen=True)
class DirectGroupedConfig(KernelConfig):
    """direct_grouped: an item is `pixels` outputs along W of block_n channels (block_k input
    channels per vector). Depthwise (multiplier 1) only: `accumulate` "f16_rows" sums each
    filter row's taps in packed f16 (the rows in f32); ctas_per_sm co-resident workgroups the
    register allocation must allow (a register cap); `unrolled` emits the filter rows
    unrolled instead of as a loop, and with it an item may span `rows` output rows (each input
    row loaded once for all of them); `padding` how unrolled rows meet the image's top and
    bottom edges: "branch" skips a row in the padding (no loads, no FMAs), "select" loads every
    row unconditionally (zero selected outside the image), so the compiler may issue all rows'
    loads at once; the schedule's stages are filter rows in flight (async-copy staging when
    above 1). `row_groups` > 1 splits an item's filter rows over that many threads (thread g
    of an item takes rows g, g + row_groups, ...; their partial sums meet in workgroup
    memory): a small grid's items run row_groups times shorter chains; block_m is then the
    items per workgroup and threads row_groups times that."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.DIRECT_GROUPED,)

    pixels: int
    accumulate: str = "f32"
    ctas_per_sm: int = 0
    unrolled: bool = False
    rows: int = 1
    padding: str = "branch"
    row_groups: int = 1

    LEGACY: ClassVar[dict[str, str]] = {"pixels": "thread_m", "accumulate": "accumulate",
                                        "ctas_per_sm": "min_ctas_per_sm"}

    @property
    def min_ctas_per_sm(self) -> int:
        return self.ctas_per_sm

    def check(self, s) -> None:
        if self.pixels < 1:
            raise ValueError(f"{self.pixels} pixels per item")
        if self.rows < 1 or (self.rows > 1 and not self.unrolled):
            raise ValueError(f"{self.rows} output rows per item (more than 1 needs unrolled rows)")
        if self.accumulate not in ("f32", "f16_rows"):
            raise ValueError(f"unknown accumulation {self.accumulate!r}")
        if self.padding not in ("branch", "select") or (self.padding == "select" and not self.unrolled):
            raise ValueError(f"padding rows by {self.padding!r} (select needs unrolled rows)")
        if self.row_groups < 1 or (self.row_groups > 1 and (self.unrolled or s.stages > 1)):
            raise ValueError(f"{self.row_groups} row groups (more than 1: rows as a loop, no staging)")

    def describe(self) -> str:
        return ((f" accumulate={self.accumulate}" if self.accumulate != "f32" else "")
                + (f" row_groups={self.row_groups}" if self.row_groups > 1 else ""))


@dataclass(frozen=True)
class DepthwiseTmaConfig(KernelConfig):
    """depthwise_tma: tiles of rows x cols output pixels x channels channels, each one TMA box
    of input (lower/nvidia/depthwise_tile.py); `pixels` outputs along W per thread; accumulate
    as DirectGroupedConfig; ctas_per_sm co-resident CTAs (the persistent grid and the register
    cap); the schedule's stages are the tile ring's slots."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.DEPTHWISE_TMA,)

    channels: int
    rows: int
    cols: int
    pixels: int
    accumulate: str = "f32"
    ctas_per_sm: int = 1

    @property
    def min_ctas_per_sm(self) -> int:
        return self.ctas_per_sm

    def check(self, s) -> None:
        if min(self.channels, self.rows, self.cols, self.pixels, self.ctas_per_sm) < 1:
            raise ValueError(f"depthwise tile {self}")
        if self.cols % self.pixels:
            raise ValueError(f"{self.pixels} pixels per thread must divide {self.cols} columns")
        if self.accumulate not in ("f32", "f16_rows"):
            raise ValueError(f"unknown accumulation {self.accumulate!r}")

    def describe(self) -> str:
        return (f" tile={self.rows}x{self.cols}x{self.channels} pixels={self.pixels} ctas_per_sm={self.ctas_per_sm}"
                + (f" accumulate={self.accumulate}" if self.accumulate != "f32" else ""))


@dataclass(frozen=True)
class DepthwiseStripsConfig(KernelConfig):
    """depthwise_strips: items of 16 images x rows output rows x 8 columns x channels channels
    (lower/nvidia/depthwise_strips_geometry.py); ctas_per_sm co-resident CTAs (the register cap
    and the persistent grid)."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.DEPTHWISE_STRIPS,)

    channels: int
    rows: int
    ctas_per_sm: int = 1

    @property
    def min_ctas_per_sm(self) -> int:
        return self.ctas_per_sm

    def check(self, s) -> None:
        if min(self.channels, self.rows, self.ctas_per_sm) < 1 or self.channels % 4:
            raise ValueError(f"depthwise strips {self}")

    def describe(self) -> str:
        return f" strips={self.rows} rows x {self.channels} channels ctas_per_sm={self.ctas_per_sm}"


@dataclass(frozen=True)
class DepthwiseMmaConfig(KernelConfig):
    """depthwise_mma: tiles of rows x cols output pixels x channels channels
    (lower/nvidia/depthwise_mma_geometry.py); ctas_per_sm co-resident CTAs (the register cap
    and the persistent grid)."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.DEPTHWISE_MMA,)

    channels: int
    rows: int
    cols: int
    ctas_per_sm: int = 1

    @property
    def min_ctas_per_sm(self) -> int:
        return self.ctas_per_sm

    def check(self, s) -> None:
        if min(self.channels, self.rows, self.cols, self.ctas_per_sm) < 1 or self.rows % 16 or self.cols % 8 \
                or self.channels % 8:
            raise ValueError(f"depthwise mma tile {self}")

    def describe(self) -> str:
        return f" tile={self.rows}x{self.cols}x{self.channels} ctas_per_sm={self.ctas_per_sm}"


@dataclass(frozen=True)
class GroupedMmaConfig(KernelConfig):
    """grouped_mma: output tiles of rows x cols pixels; ctas_per_sm CTAs share an SM."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.GROUPED_MMA,)

    rows: int
    cols: int
    ctas_per_sm: int
    slices: int = 1             # channel slices the patch is staged in (Schedule.stages slice buffers)

    LEGACY: ClassVar[dict[str, str]] = {"rows": "thread_m", "cols": "thread_n", "ctas_per_sm": "min_ctas_per_sm"}

    @property
    def min_ctas_per_sm(self) -> int:
        return self.ctas_per_sm

    def check(self, s) -> None:
        if self.rows < 1 or self.cols < 1 or self.ctas_per_sm < 1 or self.slices < 1:
            raise ValueError(f"grouped tile {self.rows}x{self.cols}, {self.ctas_per_sm} CTAs per SM, "
                             f"{self.slices} slices")
        if self.slices > 1 and (s.stages < 2 or self.slices % s.stages):
            raise ValueError(f"{self.slices} channel slices in {s.stages} slice buffers (2+, a divisor)")


@dataclass(frozen=True)
class TmaWgmmaConfig(KernelConfig):
    """sm90_tma_wgmma: split_k CTAs of one cluster share an output tile, each a K slice."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.SM90_TMA_WGMMA,)

    split_k: int = 1

    LEGACY: ClassVar[dict[str, str]] = {"split_k": "split_k"}

    @property
    def cluster_size(self) -> int:
        return self.split_k

    def check(self, s) -> None:
        if self.split_k < 1:
            raise ValueError(f"split_k={self.split_k}")

    def describe(self) -> str:
        return f" split_k={self.split_k}" if self.split_k > 1 else ""


@dataclass(frozen=True)
class GatherConfig(KernelConfig):
    """sm90_gather_wgmma: no knobs. Single-buffered: a second CTA's gather overlaps wgmma."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.SM90_GATHER_WGMMA,)

    @property
    def min_ctas_per_sm(self) -> int:
        return 2


@dataclass(frozen=True)
class RowSlabConfig(KernelConfig):
    """sm90_rows_wgmma: no knobs."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.SM90_ROWS_WGMMA,)

    @property
    def min_ctas_per_sm(self) -> int:
        return 1            # ptxas ignores setmaxnreg without a known entry register count


@dataclass(frozen=True)
class PersistentConfig(KernelConfig):
    """What the persistent tile walk (lower/nvidia/tile_scheduler.py) reads: M tiles per
    rasterization group, and CTAs per cluster along M (filter tile multicast)."""

    raster: int = 1
    cluster_m: int = 1

    @property
    def cluster_size(self) -> int:
        return self.cluster_m

    @property
    def filter_multicast(self) -> int:
        return self.cluster_m

    def check(self, s) -> None:
        if self.raster < 1 or self.cluster_m < 1:
            raise ValueError(f"raster={self.raster}, cluster_m={self.cluster_m}")


@dataclass(frozen=True)
class Sm90WsConfig(PersistentConfig):
    """sm90_ws_*: the warp-specialized persistent TMA + wgmma kernels."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_PINGPONG, Kernel.SM90_WS_STREAMK)

    epilogue_slots: int = 1     # staging (and residual) slots per consumer warpgroup; 0: lent ring stage
    swap_ab: bool = False       # wgmma M over channels, N over block_m pixels
    direct_stages: int = 0      # leading k-tiles the consumers load with cp.async while the
                                # TMA descriptors are written (direct_loads.py)
    late_channel_ops: bool = False  # per-channel epilogue operands loaded after the main loop, not
                                # before it (tiles whose operands would not fit the consumer
                                # registers beside the accumulators: sm90_ws_layout.consumer_registers)
    consumers: int = 2          # consumer warpgroups; 3 (ping-pong) gives an epilogue that
                                # outlasts the main loop more warps to issue from

    LEGACY: ClassVar[dict[str, str]] = {f: f for f in ("raster", "cluster_m", "epilogue_slots", "swap_ab",
                                                       "direct_stages")}

    @property
    def epilogue(self) -> EpilogueStrategy:
        return EpilogueStrategy.LENT_RING_STAGE if self.epilogue_slots == 0 else EpilogueStrategy.OWN_SLOTS

    def check(self, s) -> None:
        super().check(s)
        if self.epilogue_slots < 0 or self.direct_stages < 0:
            raise ValueError(f"epilogue_slots={self.epilogue_slots}, direct_stages={self.direct_stages}")
        if s.threads != (1 + self.consumers) * 128:
            raise ValueError(f"{self.consumers} consumer warpgroups and a producer in {s.threads} threads")

    def describe(self) -> str:
        return ((f" raster={self.raster}" if self.raster > 1 else "")
                + (f" cluster={self.cluster_m}x1" if self.cluster_m > 1 else "")
                + (f" epilogue_slots={self.epilogue_slots}" if self.epilogue_slots != 1 else "")
                + (" swap_ab" if self.swap_ab else "")
                + (f" direct={self.direct_stages}" if self.direct_stages else "")
                + (" late_channel_ops" if self.late_channel_ops else "")
                + (f" consumers={self.consumers}" if self.consumers != 2 else ""))


@dataclass(frozen=True)
class Sm100WsConfig(PersistentConfig):
    """sm100_ws: the warp-specialized tcgen05 kernel; cluster_m = 2 runs CTA pairs."""

    KERNELS: ClassVar[tuple[Kernel, ...]] = (Kernel.SM100_WS,)

    LEGACY: ClassVar[dict[str, str]] = {"raster": "raster", "cluster_m": "cluster_m"}

    @property
    def min_ctas_per_sm(self) -> int:
        # `.minnctapersm 1`: one persistent CTA per SM is the design; without a bound ptxas
        # 13.5 capped some kernels at 64-80 registers and spilled 8-16 bytes
        return 1

    def describe(self) -> str:
        return (f" raster={self.raster}" if self.raster > 1 else "") + \
               (f" cluster={self.cluster_m}x1" if self.cluster_m > 1 else "")


def config_types() -> dict[Kernel, type[KernelConfig]]:
    """Each kernel's config class (the one whose KERNELS names it); every kernel has one."""
    out: dict = {}
    todo = list(KernelConfig.__subclasses__())
    while todo:
        c = todo.pop()
        todo += c.__subclasses__()
        for k in c.KERNELS:
            if k in out:
                raise TypeError(f"kernel {k} has two config types: {out[k].__name__}, {c.__name__}")
            out[k] = c
    missing = [k.value for k in Kernel if k not in out]
    if missing:
        raise TypeError(f"kernels without a config type: {missing}")
    return out
