"""32-channel K steps: convs whose C is a multiple of 32 but not of 64 (C = 96, 160, 224...)
take the persistent TMA kernels with 64-byte operand rows (64B swizzle in the tensor maps and
the wgmma descriptors) instead of the thread-gathered kernel."""

import pytest

from convc.passes.lower.nvidia import tensormap as tm
from convc.passes.lower.nvidia.tma_loader import (activation_map_args, filter_map_args, k_tile_channels,
                                                  operand_swizzle, tensor_maps)
from convc.passes.plan import PlanError, plan_sm90, plan_sm90_tma
from convc.passes.target import get_target
from convc.tools.layers import load_suite


@pytest.mark.parametrize("C,bk", [(64, 64), (512, 64), (96, 32), (160, 32), (32, 32), (24, None), (3, None)])
def test_k_tile_channels(C, bk):
    assert k_tile_channels(C) == bk


def test_narrow_layers_take_the_persistent_kernels():
    t = get_target("sm_90a")
    layers = load_suite("test/inputs/narrow_k_suite.json") + [L for L in load_suite() if L.name == "s2_5x5_96"]
    for L in layers:
        p = L.expected_problem()
        s = plan_sm90(p, t)
        assert s.kernel.startswith("sm90_ws") and s.block_k == 32, (L.name, s.reason)
        assert s.smem_bytes <= t.smem_bytes and s.stages <= 16
        assert operand_swizzle(s.block_k) == tm.Swizzle.B64
        assert activation_map_args(p, s).swizzle == filter_map_args(p, s).swizzle == tm.Swizzle.B64
        tensor_maps(p, s)                       # the driver's rules accept both maps
        with pytest.raises(PlanError, match="not a multiple of 64"):
            plan_sm90_tma(p, t)                 # the non-persistent kernel keeps 64-channel steps
