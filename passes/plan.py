"""convc-plan-schedule: choose a Schedule for every matched problem.

The one owner of tiling decisions. Reads `convc.problem`, writes `convc.schedule`. Shapes the
planner cannot serve become `convc.decline` (IREE fallback) with the reason.
"""

from __future__ import annotations

import dataclasses
from .ir import ir, attr_to_py, dict_attr, walk_ops
from .attrs import DECLINE_ATTR, PROBLEM_ATTR, SCHEDULE_ATTR  # noqa: F401 (SCHEDULE_ATTR re-exported)
from .problem import ConvProblem
from .schedule import Schedule
from .target import Target, get_target
from .tuning import knobs_of, load_cache
from .kernels.amd_lds_mfma import plan_amd_lds_mfma
from .kernels.common import PlanError
from .kernels.direct_grouped import plan_grouped
from .kernels.f32 import plan_dynamic_batch, plan_f32
from .kernels.portable import plan_portable
from .kernels.sm100_ws import plan_sm100, sm100_candidates
from .kernels.sm90 import plan_sm90
from .kernels.sm90_candidates import sm90_candidates


def plan_schedule_for(p: ConvProblem, t: Target, precision: str = "tf32") -> Schedule:
    """The fastest path that applies, else the portable kernel with the reasons."""
    if p.grouped:
        return plan_grouped(p, t)
    if p.dynamic_batch:
        return plan_dynamic_batch(p, t, precision)
    if p.dtype == "f32":
        return plan_f32(p, t, precision)
    if t.has_tcgen05:
        return plan_sm100(p, t)
    if t.has_wgmma:
        return plan_sm90(p, t)
    if t.backend == "amd":
        try:
            return plan_amd_lds_mfma(p, t)
        except PlanError as why:
            s = plan_portable(p, t)
            return dataclasses.replace(s, reason=f"portable implicit GEMM: LDS-direct MFMA path declined ({why})")
    return plan_portable(p, t)


def candidate_schedules(p: ConvProblem, t: Target, precision: str = "tf32") -> list[Schedule]:
    """Every schedule worth timing for p on t, the default first."""
    if p.dtype == "f32" or p.dynamic_batch or p.grouped:
        return [plan_schedule_for(p, t, precision)]
    if t.has_tcgen05:
        return sm100_candidates(p, t)
    if t.has_wgmma:
        return sm90_candidates(p, t)
    return [plan_schedule_for(p, t)]


def choose_schedule(p: ConvProblem, t: Target, options=None) -> Schedule:
    """The default schedule, unless a tuning round forces a candidate or the tuning cache has
    a winner measured for this problem on a device of this target."""
    precision = getattr(options, "precision", "tf32")
    forced = getattr(options, "candidate", None)
    if forced is not None:
        cands = candidate_schedules(p, t, precision)
        if forced < len(cands):
            s = cands[forced]
            return dataclasses.replace(s, reason=f"tuning candidate {forced + 1}/{len(cands)}: {s.reason}")
        return cands[0]
    cache = load_cache(getattr(options, "tuning_cache", None))
    hit = cache.lookup(t.arch, p.name, getattr(options, "tuning_device", None)) if cache else None
    if hit is None or (p.dtype == "f32" and precision == "fp32"):
        # exact f32 math has one schedule: a cache entry, timed on TF32 kernels, cannot apply
        return plan_schedule_for(p, t, precision)
    cands = candidate_schedules(p, t, precision)
    if hit.outdated_by(knobs_of(cands[0])):
        s = cands[0]
        return dataclasses.replace(s, reason=f"{s.reason} (tuning cache entry from {hit.device} predates this default)")
    # an entry from before direct prologue loads names its tile without them: the tile, with
    # whatever prologue the planner gives it now, unless the no-direct variant is a candidate
    legacy = [s for s in cands if list(knobs_of(dataclasses.replace(s, direct_stages=0))) == list(hit.knobs)]
    for s in [s for s in cands if list(knobs_of(s)) == list(hit.knobs)] + legacy:
        return dataclasses.replace(s, reason=f"tuned on {hit.device} ({hit.us:.1f} us, best of {hit.tried}): {s.reason}")
    s = plan_schedule_for(p, t, precision)
    return dataclasses.replace(s, reason=f"{s.reason} (tuning cache entry from {hit.device} names no current candidate)")


def plan_schedule(module: ir.Module, options=None) -> ir.Module:
    """Pass convc-plan-schedule: attach convc.schedule next to each convc.problem."""
    target = get_target(getattr(options, "target", None) or "sm_90a")
    with module.context:
        for exe in walk_ops(module.operation, "flow.executable"):
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
