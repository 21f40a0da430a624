"""--precision: how a model's f32 convolutions compute.

- tf32 (default): f32 convs run on the tensor cores with TF32 operands and f32 accumulation,
  what PyTorch users get from cuDNN (`torch.backends.cudnn.allow_tf32` is on by default).
- fp32: f32 convs keep exact f32 math (a correct, slower kernel).
- f16 / bf16: every f32 conv (dense, depthwise, grouped) reads f16/bf16 activations and
  filters, demoted by convc-channels-last; accumulation, conv outputs and the values between layers stay f32.
  (IREE 3.13's whole-model `--iree-input-demote-f32-to-f16` breaks the function ABI of
  imported models: an f32 result view over an f16 buffer; it has no whole-model bf16
  demotion, and its contraction-input demotion left the convs f32.)
The tolerances each mode is checked against are in docs/models.md ("Precision").
"""

from __future__ import annotations

PRECISIONS = ("tf32", "fp32", "f16", "bf16")
