"""Shrinking a failing fuzz case to a minimal problem that still fails with the same kind of
schedule, so that it can become a small regression test.

A reduction is one step toward a simpler layer (batch 1, fewer rows/columns/channels, a 1-tap
filter axis, unit stride/dilation, no padding, no epilogue, f16); `shrink` walks them greedily,
smallest first, while the failure reproduces. Where the failure shows on the CPU (llvm-cpu
numerics), `convc-fuzz shrink --local` runs the whole walk here. A GPU-only failure shrinks in
rounds: `convc-fuzz shrink --results CHECK.json --bundle B --out NEXT` compiles every one-step
reduction of each failing pair into NEXT (each with the first candidate schedule of the same
kind, `same_kind`), the device checks NEXT, and the next round starts from its results; a case
none of whose reductions fail is minimal and is written to the regressions file.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from ..passes.kernel_configs import Sm90WsConfig
from ..passes.plan.plan_schedule import candidate_schedules
from ..passes.schedule import Schedule
from ..passes.target import Target
from .layers import Layer, has_output


def cost(L: Layer) -> tuple:
    """Ordering of layers by size: work first, then how far from the simplest form."""
    simple = (L.stride != (1, 1)) + (L.dilation != (1, 1)) + (any(L.pad)) + (L.epilogue != "none") + (L.dtype != "f16")
    return (L.N * L.H * L.W * L.C * L.F * L.R * L.S // max(L.groups, 1), simple, L.N, L.H, L.W, L.C, L.F)


def reductions(L: Layer) -> list[Layer]:
    """Valid one-step simplifications of L, smallest first."""
    cands: list[dict] = []
    for n in {1, L.N // 2}:
        if 1 <= n < L.N:
            cands.append(dict(N=n))
    for axis in ("H", "W"):
        v = getattr(L, axis)
        for x in {1, v // 2, v - 1}:
            if 1 <= x < v:
                cands.append({axis: x})
    g = L.groups
    for c in {g, L.C // 2, L.C - g}:                  # channels stay a multiple of the groups
        if g <= c < L.C and c % g == 0 and (not L.depthwise):
            cands.append(dict(C=c))
    for f in {g, L.F // 2, L.F - g, L.F - 8}:
        if g <= f < L.F and f % g == 0 and (not L.depthwise or f % L.C == 0):
            cands.append(dict(F=f))
    if L.depthwise and L.C > 1:
        for c in {1, L.C // 2}:
            if 1 <= c < L.C:
                cands.append(dict(C=c, F=c * (L.F // L.C), groups=c))
    if g > 1 and not L.depthwise:
        for gg in {1, g // 2}:
            if 1 <= gg < g and L.C % gg == 0 and L.F % gg == 0:
                cands.append(dict(groups=gg))
    if L.R > 1:
        cands.append(dict(R=1, pad=(0, L.pad[1], 0, L.pad[3])))
    if L.S > 1:
        cands.append(dict(S=1, pad=(L.pad[0], 0, L.pad[2], 0)))
    if L.stride != (1, 1):
        cands.append(dict(stride=(1, 1)))
    if L.dilation != (1, 1):
        cands.append(dict(dilation=(1, 1)))
    for i in range(4):
        if L.pad[i]:
            cands.append(dict(pad=tuple(0 if j == i else p for j, p in enumerate(L.pad))))
    if L.epilogue != "none":
        cands.append(dict(epilogue="none"))
    if L.dtype != "f16":
        cands.append(dict(dtype="f16"))
    out, seen = [], set()
    for c in cands:
        r = dataclasses.replace(L, **c)
        key = dataclasses.astuple(dataclasses.replace(r, name=""))
        if key not in seen and has_output(r):
            seen.add(key)
            out.append(r)
    return sorted(out, key=cost)


def shrink(L: Layer, fails: Callable[[Layer], bool], max_steps: int = 500) -> tuple[Layer, int]:
    """The smallest layer reachable from L by reductions that all still fail; (layer, tries)."""
    tries = 0
    for _ in range(max_steps):
        for r in reductions(L):
            tries += 1
            if fails(r):
                L = r
                break
        else:
            return L, tries
    return L, tries


def _kind(s: Schedule) -> tuple:
    """What makes two schedules 'the same kind' for a reproduction: the kernel and its flags,
    not the tile sizes (which follow the shape)."""
    ws = s.config if isinstance(s.config, Sm90WsConfig) else Sm90WsConfig()
    return (s.kernel, ws.swap_ab, ws.epilogue_slots, s.config.cluster_size > 1, ws.direct_stages > 0)


def same_kind(L: Layer, t: Target, failing: Schedule) -> int | None:
    """Index of the first of L's candidate schedules of the failing one's kind, or None."""
    try:
        cands = candidate_schedules(L.expected_problem(), t)
    except ValueError:         # the planner declines the reduced shape (PlanError): not a reproduction
        return None
    return next((i for i, s in enumerate(cands) if _kind(s) == _kind(failing)), None)

