"""NVIDIA (sm_90a / sm_100a) hooks for the shared emitters: 32-lane warps, nvvm lowering."""

from ..common.machine import GpuMachine


from ...ir import parse_attr


class NvidiaMachine(GpuMachine):
    backend = "nvidia"

    def func_attributes(self, s):
        """Split-K CTAs form a compile-time cluster (IREE launches with plain cuLaunchKernel,
        which honours `.reqnctapercluster`)."""
        attrs = {}
        size = max(s.split_k, s.cluster_m)
        if size > 1:
            attrs["nvvm.cluster_dim"] = parse_attr(f"array<i32: {size}, 1, 1>")
        if s.kernel == "sm90_gather_wgmma":
            # single-buffered gather -> wgmma: a second resident CTA overlaps the phases
            attrs["nvvm.minctasm"] = parse_attr("2 : i32")
        return attrs
