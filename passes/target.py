"""Target: what the planner and lowerings may assume about a chip, as plain data.

Also owns the text of the IREE device-target attribute for targets IREE does not know
(sm_90a / sm_100a) and the iree-compile flags for those it does.
"""

from __future__ import annotations

from dataclasses import dataclass

# bindings one dispatch may have: IREE 3.13's CUDA runtime refuses to load an executable whose
# export declares more ("binding_flags count 17 exceeds maximum of 16", measured on an H200 with
# a 25-piece concatenation); held for every target
MAX_DISPATCH_BINDINGS = 16


@dataclass(frozen=True)
class Target:
    arch: str              # sm_90a | sm_100a | gfx942 | gfx950 | llvm-cpu
    backend: str           # "nvidia" | "amd" | "cpu": which lowering package owns it
    subgroup_size: int
    smem_bytes: int        # max workgroup memory per block
    has_tma: bool = False
    has_wgmma: bool = False
    has_tcgen05: bool = False  # sm_100a: tcgen05 MMAs with tensor memory (passes/plan/kernels/sm100_ws.py)
    ptx_features: str = ""
    num_sms: int = 1           # compute units, for grid-filling heuristics
    lds_dma_bytes: int = 0     # AMD: bytes one lane moves per direct-to-LDS load (0: none)
    mfma_k: int = 0            # AMD: K of the 16x16xK f16/bf16 MFMA (0: none)

    @property
    def is_gpu(self) -> bool:
        return self.backend in ("nvidia", "amd")


TARGETS: dict[str, Target] = {
    # +ptx86: relaxed cluster-scope mbarrier arrivals (the driver JITs PTX 8.6)
    "sm_90a": Target("sm_90a", "nvidia", 32, 232448, has_tma=True, has_wgmma=True, ptx_features="+ptx86",
                     num_sms=132),
    # +ptx86: the tcgen05 instructions (PTX ISA 8.6 is their first version) and relaxed arrivals
    "sm_100a": Target("sm_100a", "nvidia", 32, 232448, has_tma=True, has_tcgen05=True, ptx_features="+ptx86",
                      num_sms=148),
    "gfx942": Target("gfx942", "amd", 64, 65536, num_sms=304, lds_dma_bytes=4, mfma_k=16),
    "gfx950": Target("gfx950", "amd", 64, 163840, num_sms=256, lds_dma_bytes=16, mfma_k=32),
    "llvm-cpu": Target("llvm-cpu", "cpu", 1, 32768),
}


class UnknownTargetError(ValueError):
    pass


def get_target(arch: str) -> Target:
    try:
        return TARGETS[arch]
    except KeyError:
        raise UnknownTargetError(
            f"unknown target '{arch}' (known: {', '.join(TARGETS)})") from None


_NV_WGP = (
    "wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, "
    "subgroup = shuffle|arithmetic, dot = dp4xi8toi32, "
    "mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, "
    "<NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], "
    "subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], "
    "max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = {smem}, "
    "max_workgroup_counts = [2147483647, 65535, 65535]>"
)


def device_targets_attr_text(t: Target) -> str | None:
    """`hal.device.targets` value for targets IREE 3.13 does not know; None otherwise."""
    if t.backend != "nvidia":
        return None
    info = (f"#iree_gpu.target<arch = \"{t.arch}\", features = \"{t.ptx_features}\", "
            + _NV_WGP.format(smem=t.smem_bytes) + ">")
    return ("[#hal.device.target<\"cuda\", [#hal.executable.target<\"cuda\", \"cuda-nvptx-fb\", "
            f"{{iree_codegen.target_info = {info}}}>]> : !hal.device]")


def iree_target_flags(t: Target) -> list[str]:
    """iree-compile flags selecting the target (none for targets carried in the module)."""
    if t.backend == "nvidia":
        return []
    if t.backend == "amd":
        return ["--iree-hal-target-device=hip", f"--iree-rocm-target={t.arch}"]
    return ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=host"]
