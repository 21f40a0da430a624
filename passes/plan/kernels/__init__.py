"""Kernel families as the planner sees them: per family, what it supports and the schedules it
plans (passes/plan/plan_schedule.py walks them; passes/lower/ lowers the schedules)."""

# Every family registers itself on import (registry.register); importing them here makes the
# registry complete wherever passes.plan.kernels is imported.
from . import (amd_lds_mfma, copy_pieces, depthwise_mma, depthwise_strips, depthwise_tma, direct_grouped,  # noqa: E402,F401
               global_pool, grouped_mma, portable, row_map, skinny_gemm, sm100_ws, sm90_gather,
               sm90_rows, sm90_tma, sm90_ws)
