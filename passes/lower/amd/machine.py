"""AMD Instinct (gfx942 / gfx950) hooks for the shared emitters: 64-lane waves, rocdl lowering."""

from ..common.machine import GpuMachine


class AmdMachine(GpuMachine):
    backend = "amd"
