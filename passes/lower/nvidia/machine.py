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
        size = max(s.split_k, s.cluster_m)
        if size > 1:
            attrs["nvvm.cluster_dim"] = parse_attr(f"array<i32: {size}, 1, 1>")
        if s.min_ctas_per_sm:
            attrs["nvvm.minctasm"] = parse_attr(f"{s.min_ctas_per_sm} : i32")
        return attrs
