"""The lowering stage: kernel emitters by backend (common/, nvidia/, amd/, cpu/) and the pass
that runs them, convc-lower-kernel (lower_kernels.py). Kernel families register their emitter
with their planner (passes/kernel_families.py), so nothing here is imported by name."""
