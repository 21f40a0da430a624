"""The convc driver: orchestrates flow -> match -> plan -> lower -> splice -> vmfb.

It owns no compiler decisions: passes decide, IREE compiles. Its jobs are running the stages
in order, dumping each stage's IR, collecting the per-dispatch report and timing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field

from ..passes.ir import ir, attr_to_py, walk_ops
from ..passes.layout.op_rewrites import is_nhwc_conv
from ..passes.layout.transpose_report import transpose_dispatches
from ..passes.match.match_conv import (PROBLEM_ATTR, DECLINE_ATTR, MAP_DECLINE, POOL_DECLINE, SEVERAL_RESULTS,
                            executable_function, gemm_signature, grouped_1x1_signature, is_gemm_1x1,
                            match_conv)
from ..passes.match.pad_dispatch import pad_dispatches, uncopyable_pad_dispatches
from ..passes.plan.plan_schedule import SCHEDULE_ATTR
from ..passes.splice.record_once import recordable_functions
from ..passes.attrs import COPY_ATTR
from ..passes.copy_problem import CopyProblem
from ..passes.problem import FP8_INPUT_DTYPES, ConvProblem
from ..passes.registry import HAL_PHASE, INPUT_PHASE, PIPELINE, PassOptions, get_pass
from ..passes.schedule import Schedule
from ..passes.plan.tuning import TuningCacheError, default_cache_path, load_cache
from ..passes.target import Target, device_targets_attr_text, get_target, iree_target_flags
from .errors import ConvcError
from .frontends import read_model
from .iree_tools import iree_compile
from .precision import PRECISIONS
from .structure import ProgramStructure, program_structure

# Pads fuse into the conv's dispatch; transposes are placed by convc-channels-last, and IREE's
# own propagation would fold them into contractions in layouts no kernel reads.
FLOW_FLAGS = ["--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops",
              "--iree-global-opt-propagate-transposes=false"]
# A convc kernel writes one result: where IREE's multi-use fusion gave a conv, pool or map
# dispatch several (DenseNet's transition pools: the pooled tensor for the next concatenation
# and its BatchNorm + ReLU for the next conv), the flow phase is built again without it
NO_MULTI_USE_FLAG = "--iree-dispatch-creation-fuse-multi-use=false"
# IREE 3.13's codegen fails on some dynamic-shape convs with the pad fused in: where convc
# declines one, the flow phase is built again without pad fusion
PAD_FUSION_FLAG = FLOW_FLAGS[0]


@dataclass(frozen=True)
class CompileOptions:
    target: str = "sm_90a"
    dump_dir: str | None = None
    no_fallback: bool = False
    extra_flags: tuple[str, ...] = ()
    tuning_cache: str | None = None     # None: default location; "none": no cache
    tuning_device: str | None = None
    candidate: int | None = None        # tuning rounds: force this candidate schedule
    precision: str = "tf32"             # f32 convs: tf32 | fp32; f16/bf16 demote the model
    input_layout: str = "nchw"          # "nhwc": the model's 4-D inputs taken channels-last
    output_layout: str = "nchw"         # "nhwc": its 4-D results returned channels-last
    record_once: str = "auto"           # convc-record-once: "auto" (CUDA targets), "on", "off"


@dataclass
class DispatchReport:
    dispatch: str
    path: str                  # "convc" | "IREE"
    reason: str
    problem: ConvProblem | None = None
    schedule: Schedule | None = None
    sites: int = 1             # flow.dispatch ops running this executable per inference
    gemm: bool = False         # a Linear layer's GEMM (convc-linear-weights), not a conv
    copy: CopyProblem | None = None   # an assembled tensor (convc-copy-chains)
    copies_merged: int = 0     # IREE copy dispatches the assembled tensor replaced

    @property
    def is_pool(self) -> bool:
        """A pooling window convc matched (taken, or declined by the planner)."""
        return self.problem is not None and bool(self.problem.pool) and not self.problem.is_map

    @property
    def is_map(self) -> bool:
        """An elementwise map convc matched (taken, or declined by the planner)."""
        return self.problem is not None and self.problem.is_map

    @property
    def is_conv(self) -> bool:
        """A conv dispatch (taken or declined), not a Linear layer's GEMM, a pooling window or
        an elementwise map."""
        if self.gemm or self.is_pool or self.is_map:
            return False
        return self.problem is not None or self.reason.startswith("conv")

    def line(self) -> str:
        shape = self.problem.shape_str() if self.problem else self.copy.shape_str() if self.copy else "-"
        if self.gemm:
            p = self.problem
            shape = f"Linear as GEMM M={'?' if p.dynamic_batch else p.gemm_m} K={p.C} F={p.F} {p.dtype}->{p.out_dtype}"
        kernel = f" [{self.schedule.describe()}]" if self.schedule else ""
        return f"{self.dispatch}: {shape}: {self.path}{kernel}: {self.reason}"


@dataclass
class CompileResult:
    output: str
    reports: list[DispatchReport] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    transposes: list[tuple[str, str]] = field(default_factory=list)   # (dispatch, why)
    tuning_cache: str | None = None     # the cache file the planner read, if any
    notes: list[str] = field(default_factory=list)   # flow-phase decisions the driver made
    structure: list[ProgramStructure] = field(default_factory=list)   # per exported async function
    model_convs: int | None = None      # conv ops in the model (after convc-channels-last)

    def by_kind(self) -> dict[str, list[DispatchReport]]:
        """The reports of convs, Linear-layer GEMMs, pooling windows and elementwise maps (other
        dispatches are IREE's alone)."""
        return {"convs": [r for r in self.reports if r.is_conv], "gemms": [r for r in self.reports if r.gemm],
                "pools": [r for r in self.reports if r.is_pool], "maps": [r for r in self.reports if r.is_map],
                "copies": [r for r in self.reports if r.copy is not None]}

    def counts(self) -> dict[str, int]:
        """Executables of each kind and how many of them convc took ("convs", "convs_on_convc", ...)."""
        out = {}
        for kind, rs in self.by_kind().items():
            out[kind] = len(rs)
            out[f"{kind}_on_convc"] = sum(r.path == "convc" for r in rs)
        return out

    def summary_lines(self) -> list[str]:
        """The counts a user checks a build by. IREE gives identical dispatches one executable,
        so executables, dispatches per inference and the model's conv ops are all stated."""
        kinds = self.by_kind()
        convs = kinds["convs"]
        on = [r for r in convs if r.path == "convc"]
        sites = sum(r.sites for r in convs)
        model = f" (the model has {self.model_convs} conv ops)" if self.model_convs is not None else ""
        lines = [f"{len(on)} of {len(convs)} conv executables on convc, running {sum(r.sites for r in on)} of "
                 f"{sites} conv dispatches per inference{model}"]
        for what, unit, rs in (("Linear-layer GEMM", "GEMM", kinds["gemms"]), ("pooling", "pooling", kinds["pools"]),
                               ("elementwise map", "map", kinds["maps"])):
            if rs:
                on_r = [r for r in rs if r.path == "convc"]
                lines.append(f"{len(on_r)} of {len(rs)} {what} executables on convc, running "
                             f"{sum(r.sites for r in on_r)} of {sum(r.sites for r in rs)} {unit} "
                             "dispatches per inference")
        if kinds["copies"]:
            rs = kinds["copies"]
            lines.append(f"{len(rs)} assembled tensor{'s' if len(rs) > 1 else ''} (channel concatenations and shuffles, "
                         f"sub-pixel interleaves) on convc's copy kernel: {sum(r.sites for r in rs)} "
                         f"dispatch{'es' if sum(r.sites for r in rs) > 1 else ''} per inference in place of "
                         f"{sum(r.sites * r.copies_merged for r in rs)} IREE copies")
        counts: dict = {}
        for name, why in self.transposes:
            counts[(name, why)] = counts.get((name, why), 0) + 1
        lines.append(f"{len(self.transposes)} transpose dispatch{'es' if len(self.transposes) != 1 else ''} left"
                     + (":" if self.transposes else ""))
        lines += [f"  {name}{f' (x{n})' if n > 1 else ''}: {why}" for (name, why), n in counts.items()]
        lines.append(f"tuning cache: {self.tuning_cache or 'none'}")
        lines += [s.line() for s in self.structure]
        return lines + self.notes

    def timing_line(self) -> str:
        t = self.timings
        n = sum(1 for r in self.reports if r.path == "convc")
        imported = f"onnx import {t['import']:.2f} s, " if "import" in t else ""
        return (f"compile time: total {t.get('total', 0):.2f} s ({imported}iree flow {t.get('iree_flow', 0):.2f} s, "
                f"convc passes {t.get('passes', 0):.3f} s, iree backend {t.get('iree_backend', 0):.2f} s)"
                + (f"; {t.get('total', 0) / n:.2f} s per convc dispatch" if n else ""))


def _one_line(msg: str) -> str:
    lines = [x.strip() for x in str(msg).splitlines() if x.strip()]
    for x in lines:
        if "error" in x.lower():
            return x
    return lines[0] if lines else "unknown error"


def one_by_one_signatures(module: ir.Module) -> frozenset:
    """(M, K, F) of every 1x1 linalg.conv_2d_nhwc_fhwc in the model (M = None where the batch
    or the image sizes are dynamic), and ("grouped", M, G, C/G, F/G) of every grouped 1x1 conv
    (match.grouped_1x1_signature; see PassOptions)."""
    sigs = set()
    for op in walk_ops(module.operation):
        sig = grouped_1x1_signature(op)
        if sig is not None:
            sigs.add(sig)
    for op in walk_ops(module.operation, "linalg.conv_2d_nhwc_fhwc"):
        fs = ir.ShapedType(op.operands[1].type)
        out = ir.ShapedType(op.results[0].type) if len(op.results) else ir.ShapedType(op.operands[2].type)
        if not fs.has_static_shape or out.is_dynamic_dim(out.rank - 1):
            continue
        f, r, s_, c = fs.shape
        if any(out.is_dynamic_dim(i) for i in range(out.rank - 1)):
            if r == 1 and s_ == 1:
                sigs.add((None, c, f))        # a dynamic batch or image: the GEMM has dynamic rows
            continue
        if r == 1 and s_ == 1:
            n, ho, wo, _ = out.shape
            sigs.add((n * ho * wo, c, f))
    return frozenset(sigs)


def prepare_input(text: str, target: Target, source: str = "-") -> str:
    """Parses the model (reporting malformed input at its file's name) and attaches the device
    target if IREE does not know it (sm_90a, sm_100a)."""
    ctx = ir.Context()
    try:
        module = ir.Module.parse(text, ctx)
    except Exception as e:  # MLIRError: diagnostics with locations, named "-" by the parser
        raise ConvcError(f"malformed input: {_one_line(e).replace(chr(34) + '-' + chr(34) + ':', source + ':')}") from None
    attr = device_targets_attr_text(target)
    if attr is not None:
        with ctx:
            module.operation.attributes["hal.device.targets"] = ir.Attribute.parse(attr)
    return str(module)


def _dispatch_sites(module: ir.Module) -> dict[str, int]:
    """flow.executable name -> the flow.dispatch ops that run it."""
    sites: dict[str, int] = {}
    for d in walk_ops(module.operation, "flow.dispatch"):
        for ep in d.attributes["entry_points"]:
            exe = str(ep).split("::")[0].lstrip("@")
            sites[exe] = sites.get(exe, 0) + 1
    return sites


def linear_signatures(module: ir.Module) -> frozenset:
    """(M, K, F) of every Linear layer: the [F, K] contractions convc-linear-weights made (the
    GEMM form of a 1x1 conv; a dynamic batch gives M = None)."""
    return frozenset(gemm_signature(op) for op in walk_ops(module.operation, "linalg.generic")
                     if is_gemm_1x1(op) and ir.ShapedType(op.operands[1].type).has_static_shape)


def _is_linear(p: ConvProblem | None, linears: frozenset) -> bool:
    """Whether a GEMM-form problem has a Linear layer's signature."""
    return p is not None and p.gemm_form and (None if p.dynamic_batch else p.gemm_m, p.C, p.F) in linears


def collect_reports(module: ir.Module, linears: frozenset = frozenset()) -> list[DispatchReport]:
    """One entry per flow.executable, read off the match/plan attributes; GEMM-form problems
    with a signature in `linears` (Linear layers that share none with a 1x1 conv) are marked
    as GEMMs."""
    out = []
    sites = _dispatch_sites(module)
    for exe in walk_ops(module.operation, "flow.executable"):
        name = ir.StringAttr(exe.attributes["sym_name"]).value
        prob = sched = None
        if PROBLEM_ATTR in exe.attributes:
            prob = ConvProblem.from_dict(attr_to_py(exe.attributes[PROBLEM_ATTR]))
        if SCHEDULE_ATTR in exe.attributes:
            sched = Schedule.from_dict(attr_to_py(exe.attributes[SCHEDULE_ATTR]))
        if COPY_ATTR in exe.attributes and sched is not None:
            copy = CopyProblem.from_dict(attr_to_py(exe.attributes[COPY_ATTR]))
            out.append(DispatchReport(name, "convc", sched.reason, None, sched, copy=copy,
                                      copies_merged=len(copy.pieces)))
        elif DECLINE_ATTR in exe.attributes:
            why = ir.StringAttr(exe.attributes[DECLINE_ATTR]).value
            reason = ("pool not taken: " + why[len(POOL_DECLINE):] if why.startswith(POOL_DECLINE)
                      else "map not taken: " + why[len(MAP_DECLINE):] if why.startswith(MAP_DECLINE)
                      else "conv not taken: " + why)
            out.append(DispatchReport(name, "IREE", reason, prob))
        elif sched is not None:
            out.append(DispatchReport(name, "convc", sched.reason, prob, sched))
        else:
            func = executable_function(exe)
            what = "not a convolution"
            if func is not None:
                ops = [o.name for o in walk_ops(func) if o.name.startswith("linalg.")]
                if ops:
                    what = f"not a convolution ({', '.join(sorted(set(ops)))})"
            out.append(DispatchReport(name, "IREE", what))
        out[-1].sites = sites.get(name, 0)
        out[-1].gemm = _is_linear(prob, linears)
    return out


def run_passes(module: ir.Module, opts: PassOptions, dump=None,
               linears: frozenset = frozenset()) -> tuple[ir.Module, list[DispatchReport]]:
    """The flow-phase pipeline; reports are read before splicing (`linears`: collect_reports)."""
    reports: list[DispatchReport] = []
    for name in PIPELINE:
        if name == "convc-splice-dispatch":
            reports = collect_reports(module, linears)
        module = get_pass(name)(module, opts)
        if dump:
            dump(name, module)
    return module, reports


def _flow_rebuilds(module: ir.Module, gemm_sigs, extra: list[str]) -> tuple[list[str], list[str], list[str]]:
    """What the first flow phase calls for: (flags to add, flags to drop, notes). Conv, pool and
    map dispatches the matcher declines only for having several results call for IREE's
    multi-use fusion off; a declined conv with a dynamic size, or a pad left in a dispatch of its own that
    convc-pad-copy cannot rewrite (IREE's GPU codegen computes it wrong), calls for pad fusion
    off: IREE then writes every pad as a fill and a copy into it."""
    match_conv(module, PassOptions(gemm_signatures=gemm_sigs))
    several, dynamic = [], []
    for exe in walk_ops(module.operation, "flow.executable"):
        if DECLINE_ATTR not in exe.attributes:
            continue
        name = ir.StringAttr(exe.attributes["sym_name"]).value
        why = ir.StringAttr(exe.attributes[DECLINE_ATTR]).value
        if why in (SEVERAL_RESULTS, POOL_DECLINE + SEVERAL_RESULTS, MAP_DECLINE + SEVERAL_RESULTS):
            several.append(name)
        func = executable_function(exe)
        # a declined map holds no conv and no pad: it leaves IREE's pad fusion alone; nor does a
        # declined pool (IREE's codegen builds a padded pool of runtime image sizes: the
        # csp_darknet e2e case's SPPF max pools)
        if (func is not None and "?x" in str(func.attributes["function_type"]) and not why.startswith(MAP_DECLINE)
                and not why.startswith(POOL_DECLINE)):
            dynamic.append(name)
    add, drop, notes = [], [], []
    if several and not any("fuse-multi-use" in x for x in extra):
        add.append(NO_MULTI_USE_FLAG)
        notes.append(f"flow phase built with {NO_MULTI_USE_FLAG}: IREE's multi-use fusion gave {len(several)} "
                     f"dispatch{'es' if len(several) > 1 else ''} convc would take several results ({', '.join(several)})")
    if dynamic:
        drop.append(PAD_FUSION_FLAG)
        notes.append(f"flow phase built without pad fusion: IREE compiles the dynamic-shape conv "
                     f"dispatch{'es' if len(dynamic) > 1 else ''} {', '.join(dynamic)}, and its codegen fails on "
                     "some with the pad fused in")
    copied = [p for p in pad_dispatches(module) if p not in uncopyable_pad_dispatches(module)]
    if copied:
        notes.append(f"{', '.join(copied)}: a pad in a dispatch of its own, written as a fill and a copy "
                     "(convc-pad-copy: IREE 3.13's GPU codegen drops the low padding of a stored pad)")
    pads = uncopyable_pad_dispatches(module)
    if pads and PAD_FUSION_FLAG not in drop:
        drop.append(PAD_FUSION_FLAG)
        notes.append(f"flow phase built without pad fusion: with it, {', '.join(pads)} "
                     f"write{'' if len(pads) > 1 else 's'} a padded tensor, which IREE 3.13's GPU codegen computes "
                     "wrong (it drops the low padding)")
    return add, drop, notes


# convc's kernels that compute on fp8 operands on CUDA: the sm_90a wgmma and sm_100a tcgen05 ones
FP8_KERNEL_PREFIXES = ("sm90_ws", "sm100_ws")


def _check_fp8(reports: list[DispatchReport], target: Target) -> None:
    """On CUDA only convc's fp8 tensor-core kernels (sm_90a wgmma, sm_100a tcgen05
    kind::f8f6f4) compute on fp8: stock iree-compile for CUDA fails
    on fp8 conversions both ways (an f8E4M3FN conv: an unrealized (i8) -> f8E4M3FN cast left in
    LLVM translation; an f32 -> f8E4M3FN truncf: "missing LLVMTranslationDialectInterface
    registration", docs/quantized.md), and so does the portable kernel's NVVM lowering. An fp8
    conv neither takes is an error that names it, not a failure deep in code generation."""
    if target.backend == "amd":
        _check_fp8_amd(reports, target)
        return
    if target.backend != "nvidia":
        return
    for r in reports:
        p = r.problem
        if p is not None and p.dtype in FP8_INPUT_DTYPES and (r.path != "convc" or not r.schedule.kernel.value.startswith(FP8_KERNEL_PREFIXES)):
            raise ConvcError(f"{r.dispatch}: {p.shape_str()}: fp8 conv not supported on {target.arch}: {r.reason} "
                             f"(IREE 3.13's CUDA code generation fails on fp8 conversions: no fallback)")


def _check_fp8_left_to_iree(module, reports: list[DispatchReport], target: Target) -> None:
    """A dispatch on fp8 values that convc did not take (a conv form its matcher declines, a
    conversion outside the convs) goes to IREE's code generation, which fails on fp8 for CUDA
    and gfx942 (see _check_fp8): an error naming the dispatch and why convc declined it,
    instead of IREE's "LLVM Translation failed" deep in code generation."""
    from ..passes.lower.amd.primitives import FP8_MFMA_ARCHS
    if target.backend not in ("nvidia", "amd") or target.arch in FP8_MFMA_ARCHS:
        return
    why = {r.dispatch: r.reason for r in reports}
    for op in module.body.operations:
        if op.operation.name != "flow.executable":
            continue
        text = str(op)
        if "f8E4M3FN" not in text and "f8E5M2" not in text:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        reason = why.get(name, "not a dispatch convc takes")
        raise ConvcError(f"{name}: fp8 values left to IREE's code generation, which cannot compile them for "
                         f"{target.arch} (convc: {reason})")


def _check_fp8_amd(reports: list[DispatchReport], target: Target) -> None:
    """gfx942's fp8 arithmetic takes the FNUZ encodings only: IREE 3.13's ROCm code generation
    refuses an OCP fp8 conv there ("F8E5M2 and F8E4M3FN types are not supported on gfx942"),
    so such a conv is an error that names it. gfx950 computes on OCP fp8 (its MFMAs and IREE's
    conversions)."""
    from ..passes.lower.amd.primitives import FP8_MFMA_ARCHS
    if target.arch in FP8_MFMA_ARCHS:
        return
    for r in reports:
        p = r.problem
        if p is not None and p.dtype in FP8_INPUT_DTYPES:
            raise ConvcError(f"{r.dispatch}: {p.shape_str()}: fp8 conv not supported on {target.arch}: its fp8 "
                             f"arithmetic takes the FNUZ encodings, not OCP {p.dtype} (IREE 3.13's ROCm code "
                             f"generation refuses them there too)")


def _check_output(path: str) -> None:
    """-o is checked before anything is compiled, by opening it for writing (os.access says
    yes to root under read-only mounts and /proc); a file the check creates is removed again."""
    d = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ConvcError(f"output {path} is a directory")
    if not os.path.isdir(d):
        raise ConvcError(f"output directory {d} does not exist")
    existed = os.path.exists(path)
    try:
        with open(path, "ab"):
            pass
    except OSError as e:
        raise ConvcError(f"cannot write the output {path}: {e.strerror}") from None
    if not existed:
        os.remove(path)


def _tuning_cache_path(option: str | None) -> str | None:
    """The cache file the planner will read: a named one must exist; the default location
    is used only when present."""
    if option is not None and option != "none":
        if not os.path.isfile(option):
            raise ConvcError(f"tuning cache not found: {option}")
        return option
    path = default_cache_path() if option is None else None
    return path if path and os.path.isfile(path) else None


RECORD_ONCE = ("auto", "on", "off")


def _records_once(options: CompileOptions, target) -> bool:
    """Whether convc-record-once runs: by default on CUDA targets, whose HAL replays a command
    buffer without a binding table as one CUDA graph (with --cuda_use_streams=false)."""
    if options.record_once not in RECORD_ONCE:
        raise ConvcError(f"unknown --record-once value {options.record_once!r} (one of {', '.join(RECORD_ONCE)})")
    if options.record_once == "auto":
        return target.arch.startswith("sm_")
    return options.record_once == "on"


def compile_file(input_path: str, output_path: str, options: CompileOptions) -> CompileResult:
    """model -> input phase -> convc-channels-last -> flow -> convc passes -> vmfb.

    IREE 3.13 fails to build a few models with the pad fusion convc asks for (a pad left in a
    dispatch of its own on llvm-cpu, found by convc-fuzz): when iree-compile fails, the model
    is compiled again without it (and the result says so); its error stands if that fails too."""
    if input_path == "-":
        return _compile_file(input_path, output_path, options, pad_fusion=True, keep_repro=True)
    try:
        return _compile_file(input_path, output_path, options, pad_fusion=True, keep_repro=False)
    except ConvcError as e:
        if not str(e).startswith("iree-compile failed"):
            raise
        first = str(e).split(" (repro: ")[0]
    result = _compile_file(input_path, output_path, options, pad_fusion=False, keep_repro=True)
    result.notes.insert(0, f"built without IREE's pad fusion: with it, {first}")
    return result


def _compile_file(input_path: str, output_path: str, options: CompileOptions, pad_fusion: bool,
                  keep_repro: bool) -> CompileResult:
    target = get_target(options.target)
    if options.precision not in PRECISIONS:
        raise ConvcError(f"unknown precision {options.precision!r} (one of {', '.join(PRECISIONS)})")
    t_start = time.perf_counter()
    result = CompileResult(output_path)
    stem = os.path.splitext(os.path.basename(input_path))[0] if input_path != "-" else "stdin"
    dump_dir = options.dump_dir
    if dump_dir:
        try:
            os.makedirs(dump_dir, exist_ok=True)
        except OSError as e:
            raise ConvcError(f"cannot create the dump directory {dump_dir}: {e.strerror}") from None
    _check_output(output_path)
    result.tuning_cache = _tuning_cache_path(options.tuning_cache)
    tflags = iree_target_flags(target)
    extra = list(options.extra_flags)

    tmp = tempfile.mkdtemp(prefix="convc-")
    try:
        work = dump_dir or tmp
        t0 = time.perf_counter()
        text = read_model(input_path, work)
        if input_path.lower().endswith(".onnx"):
            result.timings["import"] = time.perf_counter() - t0
        prepared = prepare_input(text, target, "<stdin>" if input_path == "-" else input_path)
        in_path = os.path.join(work, f"{stem}.input.mlir")
        with open(in_path, "w") as f:
            f.write(prepared)
        linalg_path = os.path.join(work, f"{stem}.linalg.mlir")
        t_in = iree_compile([in_path, "--compile-to=input", *tflags, *extra, "-o", linalg_path],
                            "the input phase")

        t0 = time.perf_counter()
        ctx = ir.Context()
        with open(linalg_path) as f:
            module = ir.Module.parse(f.read(), ctx)
        for name in INPUT_PHASE:           # the input-phase passes, in the registry's order
            module = get_pass(name)(module, PassOptions(target=target.arch, precision=options.precision,
                                                        input_layout=options.input_layout,
                                                        output_layout=options.output_layout))
        # channels-last convs, and the named convs left in another layout (a dynamic H/W keeps
        # its NCHW conv: convc declines it later, and it still counts as the model's)
        result.model_convs = sum(1 for op in walk_ops(module.operation)
                                 if is_nhwc_conv(op) or op.name.startswith(("linalg.conv_", "linalg.depthwise_conv_")))
        one_by_one = one_by_one_signatures(module)
        linears = linear_signatures(module) - one_by_one     # a shared signature counts as a conv
        gemm_sigs = one_by_one | linears
        cl_path = os.path.join(work, f"{stem}.convc-channels-last.mlir")
        with open(cl_path, "w") as f:
            f.write(str(module))
        t_layout = time.perf_counter() - t0
        flow_path = os.path.join(work, f"{stem}.flow.mlir")

        def flow_phase(flags):
            return iree_compile([cl_path, "--compile-from=input", "--compile-to=flow", *flags, *tflags, *extra,
                                 "-o", flow_path], "the flow phase")

        flow_flags = FLOW_FLAGS if pad_fusion else [x for x in FLOW_FLAGS if x != PAD_FUSION_FLAG]
        result.timings["iree_flow"] = t_in + flow_phase(flow_flags)
        t0 = time.perf_counter()
        with open(flow_path) as f:
            module = ir.Module.parse(f.read(), ctx)
        add, drop, result.notes = _flow_rebuilds(module, gemm_sigs, extra)
        if add or drop:
            t1 = time.perf_counter()
            result.timings["iree_flow"] += flow_phase([x for x in flow_flags if x not in drop] + add)
            t0 += time.perf_counter() - t1
            with open(flow_path) as f:
                module = ir.Module.parse(f.read(), ctx)

        def dump(name, m):
            with open(os.path.join(dump_dir, f"{stem}.{name}.mlir"), "w") as fo:
                fo.write(str(m))

        try:
            load_cache(options.tuning_cache)
        except TuningCacheError as e:
            raise ConvcError(str(e)) from None
        popts = PassOptions(target=target.arch, gemm_signatures=gemm_sigs, tuning_cache=options.tuning_cache,
                            tuning_device=options.tuning_device, candidate=options.candidate,
                            precision=options.precision)
        result.transposes = transpose_dispatches(module)
        module, reports = run_passes(module, popts, dump if dump_dir else None, linears)
        result.reports = reports
        result.timings["passes"] = time.perf_counter() - t0 + t_layout
        _check_fp8(reports, target)
        _check_fp8_left_to_iree(module, reports, target)
        declined = [r for r in reports if r.path == "IREE" and r.reason.startswith("conv")]
        if options.no_fallback and declined:
            raise ConvcError("--no-fallback: " + "; ".join(f"{r.dispatch}: {r.reason}" for r in declined))

        spliced_path = os.path.join(work, f"{stem}.spliced.mlir")
        with open(spliced_path, "w") as f:
            f.write(str(module))
        dump_flags = []
        if dump_dir:
            dump_flags = [f"--iree-hal-dump-executable-binaries-to={os.path.join(dump_dir, 'binaries')}",
                          f"--iree-hal-dump-executable-intermediates-to={os.path.join(dump_dir, 'intermediates')}"]
        if _records_once(options, target):
            hal_path = os.path.join(work, f"{stem}.hal.mlir")
            result.timings["iree_backend"] = iree_compile(
                [spliced_path, "--compile-from=flow", "--compile-to=hal", *tflags, *dump_flags, *extra,
                 "-o", hal_path], "code generation")
            t0 = time.perf_counter()
            with open(hal_path) as f:
                module = ir.Module.parse(f.read(), ctx)
            result.notes += [f"{fn}: command buffer not recorded against fixed buffers: {why}"
                             for fn, why in recordable_functions(module).items() if why]
            for name in HAL_PHASE:
                module = get_pass(name)(module, popts)
            ro_path = os.path.join(work, f"{stem}.convc-record-once.mlir")
            with open(ro_path, "w") as f:
                f.write(str(module))
            result.timings["passes"] += time.perf_counter() - t0
            result.timings["iree_backend"] += iree_compile(
                [ro_path, "--compile-from=hal", *tflags, *extra, "-o", output_path], "the VM phase")
        else:
            result.timings["iree_backend"] = iree_compile(
                [spliced_path, "--compile-from=flow", *tflags, *dump_flags, *extra, "-o", output_path],
                "code generation")
        result.structure = program_structure(output_path)
    except ConvcError as e:
        if "(repro: " in str(e) and not dump_dir and keep_repro:
            # the repro command names files in the work directory: keep them
            raise ConvcError(f"{e}; its files are kept in {tmp}") from None
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except BaseException:       # Ctrl-C, a bug: the work directory goes too
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(tmp, ignore_errors=True)
    result.timings["total"] = time.perf_counter() - t_start
    return result
