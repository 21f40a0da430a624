"""One layer per kernel family and variant flag, each compiled with the schedule that exercises
it: the bundle the sanitizers run (`tools/device/sanitize_families.sh`).

A variant names a layer and a predicate on the Schedule; the schedule is the first of the
planner's candidates (`candidate_schedules`, the list convc-tune times) that satisfies it,
forced through `CompileOptions.candidate`, so the bundle follows the planner as it changes
and a variant the planner can no longer produce is an error, not a silent gap.

  convc-suite families --out BUNDLE [--target sm_90a]
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from typing import Callable

from ..passes.plan.plan_schedule import candidate_schedules
from ..passes.schedule import Schedule
from ..passes.target import get_target
from .layers import Layer
from .bundle import compile_entry, git_commit


@dataclass(frozen=True)
class Variant:
    name: str
    layer: Layer
    wants: Callable[[Schedule], bool]
    what: str                       # the flag or family it exercises, in words


def _L(name, N, H, W, C, F, R, S, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0), dtype="f16",
       epilogue="bias_residual_relu", groups=1) -> Layer:
    return Layer(name=name, N=N, H=H, W=W, C=C, F=F, R=R, S=S, stride=stride, dilation=dilation, pad=pad,
                 dtype=dtype, epilogue=epilogue, group="families", groups=groups)


def _kernel(kernel: str, **flags) -> Callable[[Schedule], bool]:
    def wants(s: Schedule) -> bool:
        return s.kernel == kernel and all(s.setting(k) == v for k, v in flags.items())
    return wants


def _ws(s: Schedule) -> bool:
    """One of the sm_90a warp-specialized persistent kernels (an Sm90WsConfig)."""
    return s.kernel.role is not None


_R3 = _L("r3", 4, 28, 28, 128, 256, 3, 3, pad=(1, 1, 1, 1))           # many tiles, residual
_SMALL = _L("small", 1, 14, 14, 256, 256, 3, 3, pad=(1, 1, 1, 1))     # fewer tiles than SMs
_BIG = _L("big", 8, 56, 56, 128, 128, 3, 3, pad=(1, 1, 1, 1))         # more 128x128 tiles than SMs

VARIANTS: tuple[Variant, ...] = (
    Variant("ws_cooperative", _R3, _kernel("sm90_ws_cooperative", swap_ab=False, cluster_m=1, epilogue_slots=1,
                                       raster=1), "persistent cooperative, one staging slot"),
    Variant("ws_pingpong", _R3, _kernel("sm90_ws_pingpong", swap_ab=False, cluster_m=1, epilogue_slots=1),
            "persistent ping-pong consumers"),
    Variant("ws_ring_staged", _R3, _kernel("sm90_ws_cooperative", epilogue_slots=0, swap_ab=False),
            "epilogue staged in a lent ring stage (epilogue_slots=0)"),
    Variant("ws_two_slots", _BIG, lambda s: _ws(s) and s.config.epilogue_slots == 2,
            "two epilogue staging slots (residual prefetch)"),
    Variant("ws_swapped", _R3, lambda s: _ws(s) and s.config.swap_ab,
            "swapped operands (wgmma M over channels)"),
    Variant("ws_cluster", _R3, lambda s: _ws(s) and s.config.cluster_m == 2,
            "2x1 clusters, filter tile multicast"),
    Variant("ws_raster", _R3, lambda s: _ws(s) and s.config.raster > 1, "rasterized tile walk"),
    Variant("ws_256_rows", _R3, _kernel("sm90_ws_cooperative", block_m=256), "256-row cooperative tiles"),
    Variant("ws_direct_loads", _L("direct", 8, 14, 14, 256, 256, 3, 3, pad=(1, 1, 1, 1)),
            lambda s: _ws(s) and s.config.direct_stages > 0,
            "first k-tiles by cp.async while the descriptors are written"),
    Variant("ws_streamk", _L("streamk", 1, 7, 7, 512, 512, 3, 3, pad=(1, 1, 1, 1), epilogue="bias_relu"),
            _kernel("sm90_ws_streamk"), "stream-K partition (bias_relu: the planner takes stream-K only without a residual)"),
    Variant("tma_split_k", _L("splitk", 1, 7, 7, 512, 512, 3, 3, pad=(1, 1, 1, 1)),
            lambda s: s.kernel == "sm90_tma_wgmma" and s.config.split_k > 1, "non-persistent TMA kernel, split-K"),
    Variant("tma_wgmma", _SMALL, lambda s: s.kernel == "sm90_tma_wgmma" and s.config.split_k == 1,
            "non-persistent TMA kernel"),
    Variant("row_slab", _L("rowslab", 1, 224, 224, 3, 64, 7, 7, stride=(2, 2), pad=(3, 3, 3, 3), epilogue="bias_relu"),
            _kernel("sm90_rows_wgmma"), "row-slab TMA (few input channels)"),
    Variant("row_slab_tf32", _L("rowslab_f32", 1, 224, 224, 3, 64, 7, 7, stride=(2, 2), pad=(3, 3, 3, 3),
                                 dtype="f32", epilogue="bias_relu"),
            lambda s: s.kernel == "sm90_rows_wgmma", "row-slab TMA, f32 operands on TF32 register-A wgmma, "
            "serial sub-blocks (84 fragment registers each)"),
    Variant("row_slab_tf32_carry", _L("rowslab_f32c", 2, 21, 40, 3, 128, 3, 3, pad=(1, 1, 1, 1), dtype="f32",
                                       epilogue="bias_relu"),
            lambda s: s.kernel == "sm90_rows_wgmma", "row-slab TMA, TF32, one sub-block with the next tile's "
            "fragments prefetched, odd stride_w*C"),
    Variant("gather", _L("gather", 2, 17, 19, 40, 128, 3, 3, pad=(1, 1, 1, 1)), _kernel("sm90_gather_wgmma"),
            "gathered im2col + wgmma (C not TMA-aligned)"),
    Variant("tf32", _L("tf32", 2, 14, 14, 64, 128, 3, 3, pad=(1, 1, 1, 1), dtype="f32"),
            lambda s: s.kernel.startswith("sm90"), "f32 inputs on TF32 wgmma"),
    Variant("portable", _L("portable", 2, 9, 9, 24, 6, 1, 1), _kernel("portable_igemm"),
            "portable implicit GEMM (a 1x1 conv with F not a multiple of 8; wider filters are padded)"),
    Variant("depthwise", _L("dw", 2, 20, 20, 96, 96, 3, 3, pad=(1, 1, 1, 1), groups=96, epilogue="bias_relu"),
            lambda s: s.kernel != "portable_igemm", "depthwise, multiplier 1"),
    Variant("depthwise_staged", _L("dws", 2, 19, 21, 64, 64, 3, 3, pad=(1, 1, 1, 1), groups=64, epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.stages == 3 and s.config.pixels == 4,
            "depthwise, filter rows staged by cp.async (3 in flight), odd H and W"),
    Variant("depthwise_f32_rows", _L("dwf", 2, 19, 21, 64, 64, 3, 3, pad=(1, 1, 1, 1), groups=64, epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.config.accumulate == "f32" and s.stages == 1,
            "depthwise, f16 inputs accumulated in f32"),
    Variant("depthwise_7x7", _L("dw7", 2, 14, 14, 96, 96, 7, 7, pad=(3, 3, 3, 3), groups=96, epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.config.pixels == 8 and not s.config.unrolled,
            "depthwise 7x7, 8 pixels per thread, packed f16 rows as a loop (padding rows skipped)"),
    Variant("depthwise_rows2", _L("dwr", 2, 19, 21, 64, 64, 3, 3, pad=(1, 1, 1, 1), groups=64, epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.config.rows == 2 and s.config.pixels == 4
            and s.config.padding == "branch",
            "depthwise, 2 output rows x 4 pixels per item (each input row loaded once for both), odd H: the "
            "last item's second row masked"),
    Variant("depthwise_select", _L("dwsel", 2, 19, 21, 64, 64, 3, 3, pad=(1, 1, 1, 1), groups=64, epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.config.padding == "select" and s.config.rows == 1
            and s.config.pixels == 4,
            "depthwise, 4 pixels per item, padding rows loaded as zeros (no branch), odd H and W"),
    Variant("depthwise_unrolled_s2", _L("dwu", 2, 23, 19, 48, 48, 5, 5, stride=(2, 2), pad=(2, 1, 3, 2), groups=48,
                                        epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.config.unrolled and s.config.pixels == 4
            and s.config.padding == "branch",
            "depthwise 5x5, rows unrolled (padding rows skipped), stride 2, asymmetric pads, odd H and W"),
    Variant("depthwise_half_vector", _L("dwh", 2, 19, 21, 64, 64, 3, 3, pad=(1, 1, 1, 1), groups=64, epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.block_n == 4 and s.config.padding == "select"
            and s.config.accumulate == "f16_rows",
            "depthwise, 8-byte channel vectors (4 f16 channels per item), 2 rows with padding rows loaded as zeros"),
    Variant("depthwise_7x7_half_vector", _L("dw7h", 2, 19, 21, 68, 68, 7, 7, pad=(3, 2, 3, 4), groups=68,
                                           epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.block_n == 4 and s.config.unrolled and s.config.pixels == 4
            and s.config.padding == "branch" and s.config.ctas_per_sm == 2,
            "depthwise 7x7, the rule's 4 pixels of 8-byte vectors (rows unrolled, padding rows skipped, bound 2), "
            "68 channels (17 vectors), asymmetric pads, odd H and W"),
    Variant("depthwise_split_rows", _L("dwsr", 1, 19, 21, 68, 68, 7, 7, pad=(3, 2, 3, 4), groups=68,
                                       epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.config.row_groups == 7 and s.config.pixels == 4,
            "depthwise 7x7, the rule's small-grid item: filter rows split over 7 threads (partials in workgroup "
            "memory, one barrier), 68 channels, asymmetric pads, odd H and W"),
    Variant("depthwise_split_rows_s2", _L("dwsr4", 1, 23, 19, 48, 48, 5, 5, stride=(2, 2), pad=(2, 1, 3, 2),
                                          groups=48, epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.config.row_groups == 4,
            "depthwise 5x5, filter rows split over 4 threads (the first takes rows 0 and 4), stride 2, "
            "asymmetric pads, odd H and W"),
    Variant("depthwise_select_s2", _L("dwss", 2, 23, 19, 48, 48, 5, 5, stride=(2, 2), pad=(2, 1, 3, 2), groups=48,
                                      epilogue="bias_relu"),
            lambda s: s.kernel == "direct_grouped" and s.config.padding == "select" and s.config.rows == 2,
            "depthwise 5x5, the rule's 2 rows x 2 pixels with padding rows loaded as zeros, stride 2, "
            "asymmetric pads, odd H and W"),
    Variant("depthwise_tma", _L("dwt", 1, 14, 14, 96, 96, 7, 7, pad=(3, 3, 3, 3), groups=96, epilogue="bias_relu"),
            _kernel("depthwise_tma"), "depthwise on the TMA tile kernel (7x7 at batch 1; the default for f32)"),
    Variant("depthwise_tma_ring", _L("dwtr", 32, 56, 56, 72, 72, 3, 3, pad=(1, 1, 1, 1), groups=72,
                                     epilogue="bias_relu"),
            lambda s: s.kernel == "depthwise_tma" and s.stages == 2,
            "TMA tile kernel, several tiles per CTA through a 2-slot ring, a half-empty channel block"),
    Variant("depthwise_tma_one_slot", _L("dwt1", 4, 23, 29, 40, 40, 5, 5, stride=(2, 2), pad=(2, 1, 2, 1),
                                         groups=40, epilogue="bias_relu"),
            lambda s: s.kernel == "depthwise_tma" and s.stages == 1,
            "TMA tile kernel, one slot per CTA, stride 2, asymmetric pads, odd H and W"),
    Variant("depthwise_mma", _L("dwq", 1, 14, 14, 96, 96, 7, 7, pad=(3, 3, 3, 3), groups=96, epilogue="bias_relu"),
            _kernel("depthwise_mma"), "depthwise on tensor cores (banded mma.sync; 7x7 at batch 1: the planner's default)"),
    Variant("depthwise_mma_walk", _L("dwqs", 48, 23, 29, 40, 40, 5, 5, stride=(2, 1), pad=(3, 1, 4, 2),
                                     dtype="bf16", groups=40, epilogue="bias_relu"),
            lambda s: s.kernel == "depthwise_mma" and s.config.channels == 16,
            "tensor-core depthwise, bf16, up to two tiles per CTA (the next box loads while one computes), a "
            "half-empty channel block, stride 2 along H, asymmetric pads, odd H and W"),
    Variant("depthwise_mma_residual", _L("dwqr", 2, 19, 21, 64, 64, 3, 3, dilation=(2, 2), pad=(2, 2, 2, 2), groups=64),
            lambda s: s.kernel == "depthwise_mma" and s.threads == 128,
            "tensor-core depthwise with a residual epilogue, dilation 2, 4 warps"),
    Variant("depthwise_strips", _L("dws", 40, 30, 19, 32, 32, 7, 7, pad=(3, 2, 3, 4), groups=32, epilogue="bias_relu"),
            _kernel("depthwise_strips"),
            "depthwise on tensor cores with 16 images as the mma rows (the rule's default for 7x7 at batch 16+): "
            "a partial image group, strips of a full group of 7 input rows and a tail, asymmetric pads, odd W"),
    Variant("depthwise_strips_narrow", _L("dwsn", 33, 15, 250, 48, 48, 5, 9, pad=(2, 4, 2, 4), groups=48, dtype="bf16"),
            lambda s: s.kernel == "depthwise_strips" and s.config.channels == 16,
            "strip tensor-core depthwise, bf16 with a residual epilogue, 16-channel blocks (2 CTAs per SM), a "
            "5x9 window, more items than resident CTAs (a CTA walks several)"),
    Variant("depthwise_multiplier", _L("dwm", 2, 12, 12, 24, 48, 3, 3, stride=(2, 2), pad=(1, 1, 1, 1),
                                       groups=24, epilogue="bias"),
            lambda s: True, "depthwise with a channel multiplier"),
    Variant("grouped_mma", _L("grouped", 2, 14, 14, 128, 128, 3, 3, pad=(1, 1, 1, 1), groups=8),
            _kernel("grouped_mma"), "grouped 3x3 on tensor cores (mma.sync), one tile per CTA"),
    Variant("grouped_mma_two_buffers", _L("grouped_b2", 8, 28, 28, 256, 256, 3, 3, pad=(1, 1, 1, 1), groups=16),
            lambda s: s.kernel == "grouped_mma" and s.stages == 2,
            "grouped on tensor cores, several tiles per CTA: two cp.async patch buffers"),
    Variant("grouped_mma_narrow", _L("grouped4", 2, 14, 14, 64, 64, 3, 3, pad=(1, 1, 1, 1), groups=16),
            _kernel("grouped_mma"), "grouped on tensor cores, 4 channels per group"),
    Variant("grouped_mma_1x1", _L("grouped1x1", 2, 28, 28, 384, 384, 1, 1, groups=8),
            _kernel("grouped_mma"), "grouped 1x1 on tensor cores (GEMM-form rows)"),
    Variant("grouped_f32", _L("grouped_f32", 2, 14, 14, 64, 64, 3, 3, pad=(1, 1, 1, 1), groups=8, dtype="f32"),
            _kernel("direct_grouped"), "grouped f32 (direct kernel)"),
    Variant("grouped_direct", _L("grouped_d", 2, 14, 14, 128, 128, 3, 3, pad=(1, 1, 1, 1), groups=8),
            _kernel("direct_grouped"), "grouped on the direct kernel (forced where another is the default)"),
)


def families_bundle(out: str, target: str = "sm_90a", only=None) -> dict:
    """Compiles every variant (or those named in `only`) into `out`; writes manifest.json."""
    os.makedirs(out, exist_ok=True)
    t = get_target(target)
    entries = []
    for v in VARIANTS:
        if only and v.name not in only:
            continue
        L = dataclasses.replace(v.layer, name=v.name)
        cands = candidate_schedules(L.expected_problem(), t)
        index = next((i for i, s in enumerate(cands) if v.wants(s)), None)
        entry = {"layer": dataclasses.asdict(L), "vmfb": f"{v.name}.vmfb", "variant": v.what}
        if index is None:
            entry.update(ok=False, error=f"no candidate schedule exercises {v.what!r} "
                                         f"(candidates: {', '.join(s.describe() for s in cands)})")
        else:
            entry.update(compile_entry(L, out, target, index if len(cands) > 1 else None))
        entries.append(entry)
        kernel = next((d["kernel"] for d in entry.get("dispatches", []) if d["path"] == "convc"), None)
        print(f"{v.name:22s} {'ok' if entry['ok'] else 'FAILED':6s} {kernel or entry.get('error', '')}", flush=True)
    manifest = {"target": target, "commit": git_commit(), "purpose": "sanitizers: one layer per kernel family/flag",
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "layers": entries}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest
