"""Shared fixtures: compile small models with convc and run them on the CPU."""

import glob
import os
import subprocess

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.arrays import poison, random_input, storage_dtype, to_f32
from convc.runtime.module import LoadedModule
from convc.tools.gpu.reference import layer_reference_numpy
from convc.tools.layers import Layer, layer_mlir
from convc.tools.sm100_table import find_cuda_tool

PTXAS = find_cuda_tool("ptxas")     # None without a CUDA toolkit: ptxas tests skip
NVDISASM = find_cuda_tool("nvdisasm")

os.environ["CONVC_TUNING_CACHE"] = "none"     # hermetic planning: no tuning cache unless named

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def compile_layer(tmp_path, layer: Layer, target: str = "llvm-cpu", **kw):
    src = tmp_path / f"{layer.name}.mlir"
    src.write_text(layer_mlir(layer, output_arg=True))
    out = tmp_path / f"{layer.name}.{target}.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target=target, **kw))
    return out, res


def layer_ptx(tmp_path, layer: Layer, arch: str, candidate=None) -> str:
    """Compiles layer for arch (no tuning cache; `candidate`: a tuning round's index) and returns
    the path of its dumped PTX."""
    dump = tmp_path / f"dump_{layer.name}_{arch}_{candidate}"
    compile_layer(tmp_path, layer, target=arch, dump_dir=str(dump), tuning_cache="none", candidate=candidate)
    (path,) = glob.glob(str(dump / "binaries" / "*.ptx"))
    return path


def run_layer_cpu(vmfb, layer: Layer, seed: int):
    """Runs on fresh random inputs with a NaN-poisoned output; returns (output f32, reference)."""
    rng = np.random.default_rng(seed)
    inputs = [random_input(rng, s, t) for s, t in layer.input_shapes()]
    out = poison(layer.output_shape(), layer.out_dtype)
    got = LoadedModule(str(vmfb), "local-task").call(
        "main", list(zip(inputs, [t for _, t in layer.input_shapes()])), (out, layer.out_dtype))
    got = to_f32(got.view(storage_dtype(layer.out_dtype)), layer.out_dtype)
    return got, layer_reference_numpy(layer, inputs)


def assert_outputs_right(vmfb, layer: Layer, seeds=(0,), f32_tol: float = 1e-4, context=None):
    """Runs vmfb on fresh random inputs per seed: every output written (none poisoned or NaN),
    rel. L2 within 1e-2 of the numpy fp32 reference (f32_tol for f32 outputs)."""
    for seed in seeds:
        got, ref = run_layer_cpu(vmfb, layer, seed)
        assert got.shape == ref.shape and not np.isnan(got).any(), "unwritten (poisoned) or NaN outputs"
        err = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)
        assert err <= (1e-2 if layer.out_dtype != "f32" else f32_tol), (err, context)


def assert_right_on_cpu(tmp_path, layer: Layer, f32_tol: float = 1e-4, seed: int = 0):
    """Compiles layer for llvm-cpu and runs it (assert_outputs_right). Returns the compile result."""
    vmfb, res = compile_layer(tmp_path, layer)
    assert_outputs_right(vmfb, layer, (seed,), f32_tol, [r.line() for r in res.reports])
    return res


def run_cli(*args, check=False):
    """Runs a console script the way a user does; returns CompletedProcess."""
    return subprocess.run(list(args), capture_output=True, text=True, check=check)


def assert_one_line_error(proc, *needles):
    """A failed command that said why in one line of stderr holding every needle, no traceback."""
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def has_cuda_device() -> bool:
    """Whether IREE can create a CUDA device here (CI: no)."""
    from convc.runtime.module import ModuleError, require_driver
    try:
        require_driver("cuda")
    except ModuleError:
        return False
    return True


def grouped_conv_reference(p, x, w):
    """Grouped (and depthwise) conv in float64, independent of every kernel: x [N, H, W, C], w in
    the problem's filter layout ([F, R, S, C/G]; hwcf: [R, S, C/G, F]; hwf, depthwise: [R, S, C])."""
    cg, fg = p.C // p.groups, p.F // p.groups
    if p.filter_layout == "hwcf":
        w = w.reshape(p.R, p.S, cg, p.F).transpose(3, 0, 1, 2)         # -> [F, R, S, cg]
    elif p.filter_layout == "hwf":
        w = w.reshape(p.R, p.S, p.F).transpose(2, 0, 1)[..., None]      # -> [F, R, S, 1]
    w = w.reshape(p.F, p.R, p.S, cg)
    t, l, b, r = p.pad
    xp = np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)))
    out = np.zeros((x.shape[0], p.Ho, p.Wo, p.F))
    for ry in range(p.R):
        for sx in range(p.S):
            h0, w0 = ry * p.dilation[0], sx * p.dilation[1]
            win = xp[:, h0:h0 + (p.Ho - 1) * p.stride[0] + 1:p.stride[0], w0:w0 + (p.Wo - 1) * p.stride[1] + 1:p.stride[1], :]
            for gi in range(p.groups):
                out[..., gi * fg:(gi + 1) * fg] += win[..., gi * cg:(gi + 1) * cg] @ w[gi * fg:(gi + 1) * fg, ry, sx, :].T
    return out


def assert_ptxas(tmp_path, ptx_files, arch: str) -> None:
    """Every PTX file assembles with ptxas for `arch` (callers skip where PTXAS is None)."""
    assert ptx_files, "no PTX to assemble"
    for f in ptx_files:
        r = subprocess.run([PTXAS, f"-arch={arch}", str(f), "-o", str(tmp_path / "out.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def _sm100a_ptxas() -> bool:
    from convc.tools.sm100_table import ptxas_supports_sm100a
    return PTXAS is not None and ptxas_supports_sm100a(PTXAS)


# tests that assemble sm_100a kernels (compile-only: there is no Blackwell here)
needs_ptxas_sm100a = pytest.mark.skipif(not _sm100a_ptxas(),
                                        reason="no ptxas that knows sm_100a (pip install nvidia-cuda-nvcc)")


def assemble_sm100a(tmp_path, ptx_path) -> tuple[str, str | None]:
    """ptxas -arch=sm_100a -v of one PTX file (it must assemble): (ptxas's report, the
    cubin's SASS from nvdisasm, or None without nvdisasm)."""
    cubin = tmp_path / "k.cubin"
    r = subprocess.run([PTXAS, "-arch=sm_100a", "-v", str(ptx_path), "-o", str(cubin)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    sass = subprocess.run([NVDISASM, str(cubin)], capture_output=True, text=True).stdout if NVDISASM else None
    return r.stderr, sass
