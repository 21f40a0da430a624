"""NVIDIA (sm_90a / sm_100a) hooks for the shared emitters: 32-lane warps, nvvm lowering."""

from ..common.machine import GpuMachine


from ...ir import parse_attr


class NvidiaMachine(GpuMachine):
    backend = "nvidia"

    def func_attributes(self, s):
        """Split-K CTAs form a compile-time cluster (IREE launches with plain cuLaunchKernel,
        which honours `.reqnctapercluster`)."""
        if s.split_k > 1:
            return {"nvvm.cluster_dim": parse_attr(f"array<i32: {s.split_k}, 1, 1>")}
        return {}
