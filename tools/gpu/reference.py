"""Independent fp32 references for conv + epilogue (numpy on CPU; PyTorch on GPU).

Inputs are rounded to their element type first, then everything runs in fp32, so the
reference differs from the kernel only by accumulation order and the final rounding.
"""

from __future__ import annotations

import numpy as np

from ...runtime.arrays import to_f32


def fhwc_filter(w, layout: str = "fhwc"):
    """A layer's filter as [F, R, S, C/G]: a depthwise [R, S, F] ("hwf") or grouped
    [R, S, C/G, F] ("hwcf") one is transposed (numpy arrays and torch tensors alike)."""
    perm = {"hwf": (2, 0, 1), "hwcf": (3, 0, 1, 2)}.get(layout)
    if perm is None:
        return w
    t = w.transpose(*perm) if isinstance(w, np.ndarray) else w.permute(*perm)
    return t[..., None] if layout == "hwf" else t


def conv_nhwc_fhwc_numpy(x: np.ndarray, w: np.ndarray, stride, dilation, pad, groups: int = 1,
                         layout: str = "fhwc", dtype=np.float32) -> np.ndarray:
    """x: [N,H,W,C] f32, w: [F,R,S,C/G] f32 (or in `layout`, see fhwc_filter), pad (top, left,
    bottom, right) -> [N,Ho,Wo,F]; output channels g*F/G .. read input channels g*C/G .. of
    group g. Summed in `dtype` (float64: exact for i8 operands, sums below 2^53)."""
    w = fhwc_filter(w, layout)
    if groups > 1:
        cg, fg = x.shape[3] // groups, w.shape[0] // groups
        return np.concatenate([conv_nhwc_fhwc_numpy(x[..., g * cg:(g + 1) * cg], w[g * fg:(g + 1) * fg],
                                                    stride, dilation, pad) for g in range(groups)], axis=3)
    pt, pl, pb, pr = pad
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    N, Hp, Wp, C = xp.shape
    F, R, S, _ = w.shape
    sh, sw = stride
    dh, dw = dilation
    Ho = (Hp - dh * (R - 1) - 1) // sh + 1
    Wo = (Wp - dw * (S - 1) - 1) // sw + 1
    out = np.zeros((N, Ho, Wo, F), dtype)
    for r in range(R):
        for s in range(S):
            win = xp[:, r * dh: r * dh + sh * (Ho - 1) + 1: sh, s * dw: s * dw + sw * (Wo - 1) + 1: sw, :]
            out += np.tensordot(win, w[:, r, s, :], axes=([3], [1])).astype(dtype)
    return out


def conv_nhwc_fhwc_torch(x, w, stride, dilation, pad, groups: int = 1, layout: str = "fhwc"):
    """Same contract as the numpy version, on torch fp32 tensors (any device), TF32 off."""
    import torch
    import torch.nn.functional as Fn
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    pt, pl, pb, pr = pad
    xn = x.permute(0, 3, 1, 2)
    xn = Fn.pad(xn, (pl, pr, pt, pb))
    y = Fn.conv2d(xn, fhwc_filter(w, layout).permute(0, 3, 1, 2), stride=tuple(stride), dilation=tuple(dilation),
                  groups=groups)
    return y.permute(0, 2, 3, 1).contiguous()


def apply_epilogue(y, epilogue: str, bias=None, residual=None):
    """bias/residual already in f32. Works on numpy arrays and torch tensors alike."""
    if epilogue == "none":
        return y
    y = y + bias
    if epilogue == "bias_residual_relu":
        y = y + residual
    if epilogue in ("bias_relu", "bias_residual_relu"):
        y = y * (y > 0)
    return y


def int8_reference(layer, inputs: list[np.ndarray]) -> np.ndarray:
    """An i8 layer's output (tools.layers._int8_layer_mlir) from an exact integer conv (int64
    sums of the i8 operands): the i32 accumulator, or its requantization (f32 math as the
    model writes it, rounded half to even, clamped), as f32 values."""
    x, w = (np.asarray(a, np.float64) for a in inputs[:2])
    acc = np.rint(conv_nhwc_fhwc_numpy(x, w, layer.stride, layer.dilation, layer.pad, dtype=np.float64))
    if layer.epilogue == "none":
        return acc.astype(np.float32)
    y = acc.astype(np.float32) * np.float32(layer.requant_scale) + inputs[2].astype(np.float32)
    if layer.epilogue == "bias_residual_relu":
        y = y + inputs[3].astype(np.float32)
    if layer.epilogue in ("bias_relu", "bias_residual_relu"):
        y = np.maximum(y, 0)
    return np.clip(np.rint(y), -128, 127).astype(np.float32)


def layer_reference_numpy(layer, inputs: list[np.ndarray]) -> np.ndarray:
    """fp32 reference output of a tools.layers.Layer for its model inputs."""
    if layer.dtype == "i8":
        return int8_reference(layer, inputs)
    f = [to_f32(a, t) for a, (_, t) in zip(inputs, layer.input_shapes())]
    y = conv_nhwc_fhwc_numpy(f[0], f[1], layer.stride, layer.dilation, layer.pad, layer.groups, layer.filter_layout)
    return apply_epilogue(y, layer.epilogue, *(f[2:] + [None] * (4 - len(f))))


def rel_l2(out: np.ndarray, ref: np.ndarray) -> float:
    out = np.asarray(out, np.float64)
    ref = np.asarray(ref, np.float64)
    denom = np.linalg.norm(ref)
    return float(np.linalg.norm(out - ref) / (denom if denom > 0 else 1.0))


