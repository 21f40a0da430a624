"""Kernel families as the planner sees them: per family, what it supports and the schedules it
plans (passes/plan.py walks them; passes/lower/ lowers the schedules)."""
