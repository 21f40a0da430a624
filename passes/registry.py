"""Named passes and the one ordered list of them (STAGES) the driver runs. Each pass is a pure function
(module, options) -> module, runnable alone (convc-opt --pass=...)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .layout.input_layout import input_layout
from .layout.quantized import quantized_convs
from .layout.conv3d import conv3d_to_2d
from .layout.upsample import nearest_upsamples
from .layout.channels_last import channels_last
from .layout.subpixel import subpixel_convs
from .layout.window import trim_windows
from .layout.channel_pad import pad_channels
from .layout.linear_weights import linear_weights
from .match.pad_dispatch import pads_to_copies
from .match.copy_chains import merge_copy_chains
from .match.match_conv import match_conv
from .plan.plan_schedule import plan_schedule
from .lower.lower_kernels import lower_kernels
from .splice.splice_dispatch import splice_dispatches
from .splice.drop_barriers import drop_barriers
from .splice.record_once import record_once


@dataclass(frozen=True)
class PassOptions:
    """target: Target.arch the plan/lower passes build for.
    gemm_signatures: (M, K, F) of the input model's 1x1 convs and Linear layers; GEMM-form dispatches are taken
    as convs only if listed. None (convc-opt's default) takes every GEMM-form dispatch.
    tuning_cache: tuning cache file (None: the default location; "none": no cache).
    tuning_device: read cache entries measured on this device (None: the most recent).
    candidate: force the planner's candidate schedule with this index (tuning rounds; kernels
    are then named per round).
    candidate_settings: force the first candidate schedule with these settings, "field=value,..."
    of Schedule or kernel config fields (e.g. "kernel=sm90_ws_pingpong,block_m=64,swap_ab=false"; lit tests).
    precision: how f32 convs compute: "tf32" (tensor cores, f32 accumulation; the default),
    "fp32" (exact f32 math); "f16"/"bf16" models were demoted before convc saw them.
    input_layout: "nchw" (the model's own), or "nhwc": its 4-D inputs taken channels-last.
    output_layout: likewise for the tensors it returns."""

    target: str = "sm_90a"
    gemm_signatures: frozenset | None = None
    tuning_cache: str | None = None
    tuning_device: str | None = None
    candidate: int | None = None
    candidate_settings: str | None = None
    precision: str = "tf32"
    input_layout: str = "nchw"
    output_layout: str = "nchw"


PASSES: dict[str, Callable] = {
    "convc-input-layout": input_layout,        # input-phase IR, first (a no-op unless a layout is "nhwc")
    "convc-quantized-conv": quantized_convs,   # input-phase IR, before convc-channels-last
    "convc-conv3d": conv3d_to_2d,              # input-phase IR, before convc-channels-last
    "convc-nearest-upsample": nearest_upsamples,  # input-phase IR, before convc-channels-last
    "convc-channels-last": channels_last,      # input-phase IR (before IREE's flow)
    "convc-subpixel-conv": subpixel_convs,     # input-phase IR, after convc-channels-last
    "convc-trim-window": trim_windows,         # input-phase IR, after convc-subpixel-conv
    "convc-pad-channels": pad_channels,        # input-phase IR, after convc-trim-window
    "convc-linear-weights": linear_weights,    # input-phase IR, after convc-pad-channels
    "convc-pad-copy": pads_to_copies,          # flow-phase IR from here on
    "convc-copy-chains": merge_copy_chains,
    "convc-match-conv": match_conv,
    "convc-plan-schedule": plan_schedule,
    "convc-lower-kernel": lower_kernels,
    "convc-splice-dispatch": splice_dispatches,
    "convc-drop-barriers": drop_barriers,      # last flow-phase pass: the program handed to IREE's backend
    "convc-record-once": record_once,          # hal-phase IR: IREE's host program, after its backend
}

# THE pass order: every convc pass, grouped by stage (one package of passes/ per stage), in the order
# the driver runs them. Each entry is (IR phase, stage, passes). Phases: "input" -- the model at IREE's
# `input` phase (linalg on tensors), before IREE's flow; "flow" -- flow-phase IR, whose dispatches are
# flow.executable ops (`--dump-dir` writes the module after each of these); "hal" -- IREE's host program
# once its backend has built the executables and the command buffers (CUDA targets by default:
# CompileOptions.record_once). compiler/driver.py runs INPUT_PHASE, PIPELINE and HAL_PHASE, the three
# slices of this list below; nothing else orders passes.
STAGES = (
    ("input", "layout", ("convc-input-layout",      # first (a no-op unless input_layout="nhwc")
                         "convc-quantized-conv",
                         "convc-conv3d",
                         "convc-nearest-upsample",
                         "convc-channels-last",
                         "convc-subpixel-conv",
                         "convc-trim-window",
                         "convc-pad-channels",
                         "convc-linear-weights")),
    ("flow", "match", ("convc-pad-copy",            # flow-phase IR from here on
                       "convc-copy-chains",
                       "convc-match-conv")),
    ("flow", "plan", ("convc-plan-schedule",)),
    ("flow", "lower", ("convc-lower-kernel",)),
    ("flow", "splice", ("convc-splice-dispatch",
                        "convc-drop-barriers")),    # last flow-phase pass: the program handed to IREE's backend
    ("hal", "splice", ("convc-record-once",)),      # after IREE's backend
)

ORDER = tuple(name for _, _, names in STAGES for name in names)
assert list(PASSES) == list(ORDER), "PASSES and STAGES must list the same passes in the same order"


def _phase(phase: str) -> tuple:
    return tuple(name for ph, _, names in STAGES if ph == phase for name in names)


INPUT_PHASE = _phase("input")      # the driver's input-phase passes, in order
PIPELINE = list(_phase("flow"))    # the driver's flow-phase passes, in order
HAL_PHASE = _phase("hal")          # the driver's hal-phase passes, in order


class UnknownPassError(ValueError):
    pass


def get_pass(name: str) -> Callable:
    try:
        return PASSES[name]
    except KeyError:
        raise UnknownPassError(f"unknown pass '{name}' (known: {', '.join(PASSES)})") from None
