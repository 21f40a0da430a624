"""NVIDIA (sm_90a / sm_100a) hooks for the shared emitters: 32-lane warps, nvvm lowering."""

from ...ir import parse_attr
from ..common.machine import GpuMachine


class NvidiaMachine(GpuMachine):
    backend = "nvidia"

    def func_attributes(self, s):
        """The schedule's cluster (split-K slices or M-multicast pairs) as a compile-time
        `.reqnctapercluster` (IREE launches with plain cuLaunchKernel, which honours it), and its
        co-residency bound as `.minnctapersm`."""
        attrs = {}
        size = s.config.cluster_size
        if size > 1:
            attrs["nvvm.cluster_dim"] = parse_attr(f"array<i32: {size}, 1, 1>")
        if s.config.min_ctas_per_sm:
            attrs["nvvm.minctasm"] = parse_attr(f"{s.config.min_ctas_per_sm} : i32")
        return attrs
