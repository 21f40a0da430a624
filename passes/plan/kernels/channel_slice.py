"""Convs whose input, or residual, is a window of its operand's channels (YOLO's C2f halves and
shortcuts, any chunk of a conv's output that IREE leaves as a sliced load): the kernels that
address it through a pixel pitch and a first-channel offset take them.

The persistent sm_90a kernel reads the input through its im2col map, whose pixel strides are
the operand's and whose address is the window's first channel (tma_loader.activation_binding),
and its residual through a tiled map likewise (tma_loader.residual_binding), so its schedule is
the one the conv would get unsliced, without direct prologue loads (their cp.async chunks
assume a dense input). The TMA needs the window's first channel and the pitch
at 16-byte boundaries. Everything else takes the portable kernel, which adds the pitch and
offset to its address math. Without this, IREE's codegen ran such convs: 3.8 ms for a
160x160x32 3x3 of a YOLOv8-s style backbone at batch 4 (H200, results/e2e/h200_csp_latest.json).
"""

from __future__ import annotations

import dataclasses

from ...problem import ConvProblem, DTYPE_BYTES
from ...schedule import Kernel, Schedule
from ...target import Target
from .common import narrow_block_n
from .portable import plan_portable
from .sm90_ws import SM90_WS, WsTile

_WS = (Kernel.SM90_WS_COOPERATIVE, Kernel.SM90_WS_PINGPONG)


def plan_channel_slice(p: ConvProblem, t: Target, precision: str, plan_unsliced) -> Schedule:
    """plan_unsliced(p, t, precision): the schedule the other routes give."""
    b = DTYPE_BYTES[p.dtype]
    rb = max((DTYPE_BYTES[ld.dtype] for ld in p.residual_loads), default=1)
    where = ", ".join(([f"input channels {p.input_channel_offset}..{p.input_channel_offset + p.C - 1} of "
                        f"{p.input_channels}"] if p.input_channels else []) +
                      ([f"residual channels {p.residual_channel_offset}..{p.residual_channel_offset + p.F - 1} of "
                        f"{p.residual_channels}"] if p.residual_channels else []))
    why = None
    if t.has_wgmma and not (p.dtype == "f32" and precision == "fp32"):
        if ((p.input_channel_offset * b) % 16 or (p.input_pitch * b) % 16
                or (p.residual_channel_offset * rb) % 16 or (p.residual_pitch * rb) % 16):
            why = "the window's first channel or pitch is not at a 16-byte boundary (TMA)"
        else:
            s = plan_unsliced(p, t, precision)
            if s.kernel not in _WS:
                s = SM90_WS.attempt(p, t, tile=WsTile(Kernel.SM90_WS_PINGPONG, 64,
                                                      128 if p.F > 64 else narrow_block_n(p.F)))
            if isinstance(s, Schedule):
                if s.config.direct_stages:
                    s = s.with_config(direct_stages=0)
                return dataclasses.replace(s, reason=f"{s.reason}, {where} (maps at the windows, no direct loads)")
            why = str(s)
    s = plan_portable(p, t)
    return dataclasses.replace(s, reason=f"{s.reason}, {where}" + (f" (persistent kernel declined: {why})" if why else ""))
