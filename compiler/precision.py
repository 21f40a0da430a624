"""--precision: how a model's f32 convolutions compute, and the IREE flags each mode needs.

- tf32 (default): f32 convs run on the tensor cores with TF32 operands and f32 accumulation,
  what PyTorch users get from cuDNN (`torch.backends.cudnn.allow_tf32` is on by default).
- fp32: f32 convs keep exact f32 math (a correct, slower kernel).
- f16: the whole model is demoted to f16 before global optimization (IREE's
  `--iree-input-demote-f32-to-f16`), so every conv is an f16 conv.
- bf16: every conv reads bf16 activations and filters, demoted by convc-channels-last
  (IREE 3.13 has no whole-model bf16 demotion, and its contraction-input demotion left the
  convs f32); accumulation, outputs and the values between layers stay f32.
The tolerances each mode is checked against are in README.md ("Precision").
"""

from __future__ import annotations

PRECISIONS = ("tf32", "fp32", "f16", "bf16")

_FLAGS = {
    "tf32": [],
    "fp32": [],
    "f16": ["--iree-input-demote-f32-to-f16"],
    "bf16": [],
}


def precision_flags(precision: str) -> list[str]:
    return list(_FLAGS[precision])
