"""convc-plan-schedule: choose a Schedule for every matched problem.

The one owner of tiling decisions. Reads `convc.problem`, writes `convc.schedule`. Shapes the
planner cannot serve become `convc.decline` (IREE fallback) with the reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from ..attrs import COPY_ATTR, DECLINE_ATTR, PROBLEM_ATTR, SCHEDULE_ATTR  # noqa: F401 (SCHEDULE_ATTR re-exported)
from ..ir import ir, attr_to_py, dict_attr, walk_ops
from .kernels.amd_lds_mfma import plan_amd
from .kernels.common import PlanError
from .kernels.direct_grouped import plan_pool
from .kernels.global_pool import plan_global_pool
from .kernels.row_map import plan_row_map
from .kernels.copy_pieces import plan_copy
from .kernels.skinny_gemm import plan_skinny, supports as skinny_supports
from .kernels.grouped_mma import grouped_candidates, plan_grouped_choice
from .kernels.channel_slice import plan_channel_slice
from .kernels.f32 import f32_candidates, plan_dynamic_batch, plan_f32, plan_runtime_spatial
from .kernels.int8 import eight_bit_candidates, plan_fp8, plan_int8
from .kernels.portable import plan_portable
from .kernels.sm100_ws import plan_sm100, sm100_candidates
from .kernels.sm90 import plan_sm90
from .kernels.sm90_candidates import sm90_candidates
from ..copy_problem import CopyProblem
from ..problem import FP8_INPUT_DTYPES, ConvProblem
from ..schedule import SETTING_NAMES, Schedule
from ..target import Target, get_target
from .tuning import knobs_of, load_cache  # noqa: F401 (knobs_of re-exported)


@dataclass(frozen=True)
class Route:
    """Where a conv goes: when `when` holds, `plan` gives its default schedule and
    `candidates` (None: the default alone) the schedules a tuning round times."""

    when: Callable[[ConvProblem, Target], bool]
    plan: Callable[[ConvProblem, Target, str], Schedule]
    candidates: Callable[[ConvProblem, Target], list[Schedule]] | None = None


# convs reading a window of an operand's channels: the schedule the later routes give, on a
# kernel that reads windows (plan_channel_slice)
CHANNEL_WINDOWS = Route(lambda p, t: p.channel_windows,
                        lambda p, t, precision: plan_channel_slice(p, t, precision, _plan_unsliced))

# The first route that holds plans the conv (precision: how f32 convs compute).
ROUTES = (
    Route(lambda p, t: p.dynamic_spatial, plan_runtime_spatial),
    CHANNEL_WINDOWS,
    Route(lambda p, t: p.is_global_pool, lambda p, t, precision: plan_global_pool(p, t)),
    Route(lambda p, t: bool(p.row_combine), lambda p, t, precision: plan_row_map(p, t)),
    Route(lambda p, t: bool(p.pool), lambda p, t, precision: plan_pool(p, t)),
    Route(lambda p, t: skinny_supports(p, t) is None, lambda p, t, precision: plan_skinny(p, t)),
    Route(lambda p, t: p.grouped, lambda p, t, precision: plan_grouped_choice(p, t), grouped_candidates),
    Route(lambda p, t: p.dtype == "i8", lambda p, t, precision: plan_int8(p, t), eight_bit_candidates),
    Route(lambda p, t: p.dtype in FP8_INPUT_DTYPES, lambda p, t, precision: plan_fp8(p, t), eight_bit_candidates),
    Route(lambda p, t: p.dynamic_batch, plan_dynamic_batch),
    Route(lambda p, t: p.dtype == "f32", plan_f32, f32_candidates),
    Route(lambda p, t: t.has_tcgen05, lambda p, t, precision: plan_sm100(p, t), sm100_candidates),
    Route(lambda p, t: t.has_wgmma, lambda p, t, precision: plan_sm90(p, t), sm90_candidates),
    Route(lambda p, t: t.backend == "amd", lambda p, t, precision: plan_amd(p, t)),
    Route(lambda p, t: True, lambda p, t, precision: plan_portable(p, t)),
)


def _plan_unsliced(p: ConvProblem, t: Target, precision: str) -> Schedule:
    """The schedule of the routes after the channel-window one (what an unsliced input gets)."""
    after = ROUTES[ROUTES.index(CHANNEL_WINDOWS) + 1:]
    return next(r for r in after if r.when(p, t)).plan(p, t, precision)


def route_for(p: ConvProblem, t: Target) -> Route:
    return next(r for r in ROUTES if r.when(p, t))


def plan_schedule_for(p: ConvProblem, t: Target, precision: str = "tf32") -> Schedule:
    """The fastest path that applies, else the portable kernel with the reasons."""
    return route_for(p, t).plan(p, t, precision)


def candidate_schedules(p: ConvProblem, t: Target, precision: str = "tf32") -> list[Schedule]:
    """Every schedule worth timing for p on t, the default first."""
    route = route_for(p, t)
    if not route.candidates or (p.dtype == "f32" and precision == "fp32"):
        # exact f32 math has one schedule (the candidates are TF32 ones)
        return [plan_schedule_for(p, t, precision)]
    return route.candidates(p, t)


def choose_schedule(p: ConvProblem, t: Target, options=None) -> Schedule:
    """The default schedule, unless a tuning round forces a candidate or the tuning cache has
    a winner measured for this problem on a device of this target."""
    precision = getattr(options, "precision", "tf32")
    forced = getattr(options, "candidate", None)
    if forced is None:
        forced = getattr(options, "candidate_settings", None)
    if forced is not None:
        return forced_candidate(p, t, precision, forced)
    cache = load_cache(getattr(options, "tuning_cache", None))
    hit = cache.lookup(t.arch, p.name, getattr(options, "tuning_device", None)) if cache else None
    if hit is None or (p.dtype == "f32" and precision == "fp32"):
        # exact f32 math has one schedule: a cache entry, timed on TF32 kernels, cannot apply
        return plan_schedule_for(p, t, precision)
    cands = candidate_schedules(p, t, precision)
    if hit.outdated_by(knobs_of(cands[0])):
        s = cands[0]
        return dataclasses.replace(s, reason=f"{s.reason} (tuning cache entry from {hit.device} predates this default)")
    s = hit.pick(cands)
    if s is not None:
        return dataclasses.replace(s, reason=f"tuned on {hit.device} ({hit.us:.1f} us, best of {hit.tried}): {s.reason}")
    s = plan_schedule_for(p, t, precision)
    return dataclasses.replace(s, reason=f"{s.reason} (tuning cache entry from {hit.device} names no current candidate)")


def forced_candidate(p: ConvProblem, t: Target, precision: str, forced: int | str) -> Schedule:
    """The candidate a tuning round forces: by index (out of range: the default), or by its
    settings, "field=value,..." of Schedule or kernel config fields (e.g.
    "kernel=sm90_ws_pingpong,block_m=64,swap_ab=false"): the first candidate that has them all."""
    cands = candidate_schedules(p, t, precision)
    index = forced if isinstance(forced, int) else candidate_with(cands, forced)
    if index >= len(cands):
        return cands[0]
    s = cands[index]
    return dataclasses.replace(s, reason=f"tuning candidate {index + 1}/{len(cands)}: {s.reason}")


def candidate_with(cands: list[Schedule], settings: str) -> int:
    """Index of the first candidate with every setting; PlanError naming the settings if none."""
    want = [kv.split("=", 1) for kv in settings.split(",") if kv.strip()]
    if any(len(kv) != 2 or kv[0].strip() not in SETTING_NAMES for kv in want):
        raise PlanError(f"candidate settings {settings!r}: expected field=value,... of Schedule or kernel config fields")
    for i, s in enumerate(cands):
        if all(_has_setting(s, k.strip(), v.strip()) for k, v in want):
            return i
    raise PlanError(f"no tuning candidate has {settings}")


def _has_setting(s: Schedule, name: str, value: str) -> bool:
    try:
        return str(s.setting(name)).lower() == value.lower()
    except AttributeError:          # a knob of another kernel family
        return False


def plan_schedule(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-plan-schedule: attach convc.schedule next to each convc.problem."""
    target = get_target(getattr(options, "target", None) or "sm_90a")
    with module.context:
        for exe in walk_ops(module.operation, "flow.executable"):
            if COPY_ATTR in exe.attributes:     # an assembled tensor: one kernel, planned by size
                copy = CopyProblem.from_dict(attr_to_py(exe.attributes[COPY_ATTR]))
                exe.attributes[SCHEDULE_ATTR] = dict_attr(plan_copy(copy, target).to_dict())
                continue
            if PROBLEM_ATTR not in exe.attributes:
                continue
            prob = ConvProblem.from_dict(attr_to_py(exe.attributes[PROBLEM_ATTR]))
            try:
                sched = choose_schedule(prob, target, options)
            except PlanError as e:
                exe.attributes[DECLINE_ATTR] = ir.StringAttr.get(str(e))
                continue
            exe.attributes[SCHEDULE_ATTR] = dict_attr(sched.to_dict())
    return module
