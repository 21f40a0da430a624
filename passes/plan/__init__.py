"""Plan stage: convc-plan-schedule (plan_schedule.py), the tuning cache (tuning.py) and the per-family
planners (kernels/)."""
