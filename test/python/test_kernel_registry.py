"""The kernel registry: every kernel name has one family, and a family's `supports` reason is
the decline its planning gives (so `--report` and declines read the same)."""

import pytest

import convc.passes.plan.plan_schedule as plan
from convc.passes.plan.kernels.common import PlanError
from convc.passes.kernel_families import FAMILIES, Declined
from convc.passes.plan.kernels.sm90 import TILE_RULES, Shape, tile_rule
from convc.passes.schedule import Kernel, Schedule
from convc.passes.target import TARGETS
from convc.tools.layers import Layer, load_suite

SUITE = [L.expected_problem() for L in load_suite()]
ODD = [Layer(n, 2, 9, 9, c, f, 3, 3, pad=(1, 1, 1, 1)).expected_problem()
       for n, c, f in (("c3", 3, 64), ("c24", 24, 36), ("f12", 64, 12), ("c96", 96, 128))]


def test_every_kernel_has_one_family():
    owners = [k for f in FAMILIES.values() for k in f.kernels]
    assert sorted(owners) == sorted(Kernel)
    assert all(str(k) == k.value for k in Kernel)


def test_a_family_is_registered_once_with_its_config_and_emitter():
    """The registration is the one place a family names its config (whose KERNELS are its
    Schedule.kernel values), planner, emitter and batch grid; the lowering pass and Schedule
    look them up there."""
    from convc.passes.kernel_families import family_of
    from convc.passes.schedule import CONFIG_TYPES
    for k in Kernel:
        f = family_of(k)
        assert CONFIG_TYPES[k] is f.config and k in f.config.KERNELS
        assert callable(f.emit) and f.emit.__module__.startswith("convc.passes.lower.")
    grids = {name for name, f in FAMILIES.items() if f.batch_grid}
    assert grids == {"portable_igemm", "direct_grouped", "global_pool", "row_map", "sm90_gather_wgmma", "copy_pieces"}


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_supports_is_the_plans_first_decline(arch):
    t = TARGETS[arch]
    for p in SUITE + ODD:
        for f in FAMILIES.values():
            why = f.supports(p, t)
            if why is None:
                continue
            got = f.attempt(p, t)
            assert isinstance(got, Declined) and str(got) == why, (f.name, p.name, why, got)
            with pytest.raises(PlanError):
                f.plan(p, t)


def test_plans_come_from_a_registered_family():
    for arch, t in TARGETS.items():
        for p in SUITE + ODD:
            s = plan.plan_schedule_for(p, t)
            assert isinstance(s, Schedule) and isinstance(s.kernel, Kernel)


def test_the_sm90_tile_rules_end_with_a_catch_all():
    t = TARGETS["sm_90a"]
    for p in SUITE + ODD:
        assert TILE_RULES[-1].when(Shape(p, t))
        rule = tile_rule(p, t)
        assert rule.tile(Shape(p, t)).kernel == rule.kernel
