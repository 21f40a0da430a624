"""Device harnesses: what tools/device/*.sh run on the GPU machine (python3 -m convc.tools.gpu.X).
They need iree-base-runtime (and PyTorch for the timing baselines), not the compiler."""
