"""NVIDIA (sm_90a / sm_100a) hooks for the shared emitters: 32-lane warps, nvvm lowering."""

from ..common.machine import GpuMachine


class NvidiaMachine(GpuMachine):
    backend = "nvidia"
