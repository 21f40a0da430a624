"""The kernel registry: every kernel family the planner can choose, as data.

It sits beside problem.py and schedule.py, below the stages: the planner's families
(passes/plan/kernels/, one module each) register themselves here and convc-lower-kernels looks
their emitters up here, so the lower stage never imports the plan stage.

A family is one module of passes/plan/kernels/ that registers itself here with what it supports
(`supports(p, t)`: None, or the reason it cannot serve p on t: what a decline and `--report`
show), how it plans a schedule (`plan(p, t, **config)`, which raises PlanError only for what
planning alone finds out: ring stages that do not fit, a tensor map the driver would refuse)
and, where the family has tiles to choose from, the candidates convc-tune times. The planner
(passes/plan/plan_schedule.py) walks its rule table over the families and never catches PlanError itself:
`attempt` turns a decline into a value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .problem import ConvProblem
from .kernel_configs import KernelConfig
from .schedule import Kernel, Schedule
from .target import Target


class PlanError(ValueError):
    """What planning alone finds out (ring stages that do not fit, a tensor map the driver
    would refuse): a family's `attempt` turns it into a Declined."""


@dataclass(frozen=True)
class Declined:
    """A family's answer when it cannot serve a problem: the reason, worded for the user."""

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class KernelFamily:
    """One kernel family, registered once: its knobs (`config`, whose KERNELS are the
    Schedule.kernel values it plans), what it supports, its planner, its emitter (`emit(p, s,
    machine, memrefs)`, which convc-lower-kernels calls), the candidates convc-tune times and,
    for kernels whose grid follows run-time sizes, `batch_grid(p, s)` -> grid(extents) (lower/common/extents.py)."""

    name: str
    config: type[KernelConfig]
    supports: Callable[[ConvProblem, Target], str | None]
    plan: Callable[..., Schedule]                              # (p, t, **config); PlanError past supports
    emit: Callable[..., None]
    candidates: Callable[[ConvProblem, Target], list[Schedule]] | None = None
    batch_grid: Callable | None = None

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        return self.config.KERNELS

    def attempt(self, p: ConvProblem, t: Target, **config) -> Schedule | Declined:
        """The family's schedule for p with config, or why it declines."""
        try:
            return self.plan(p, t, **config)
        except PlanError as why:
            return Declined(str(why))


FAMILIES: dict[str, KernelFamily] = {}
_BY_KERNEL: dict[Kernel, KernelFamily] = {}


def register(family: KernelFamily) -> KernelFamily:
    if family.name in FAMILIES or any(k in _BY_KERNEL for k in family.kernels):
        raise ValueError(f"kernel family {family.name!r} registered twice")
    FAMILIES[family.name] = family
    _BY_KERNEL.update((k, family) for k in family.kernels)
    return family


def family_of(kernel: Kernel | str) -> KernelFamily:
    """The registered family that plans and emits `kernel` (the families register when
    passes.plan is imported, as passes/registry.py's pipeline does)."""
    try:
        return _BY_KERNEL[Kernel(kernel)]
    except KeyError:
        raise KeyError(f"no kernel family registered for {Kernel(kernel).value!r} "
                       f"(import convc.passes.plan first)") from None

