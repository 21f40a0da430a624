"""The convc CLI as a user meets it: reports, dumps, fallbacks and one-line errors."""

import os
import subprocess

import pytest

from conftest import REPO, run_cli

EXAMPLE = os.path.join(REPO, "examples", "resnet_bottleneck.mlir")
INPUTS = os.path.join(REPO, "test", "inputs")

PADVAL = """func.func @main(%x: tensor<2x9x9x16xf16>, %w: tensor<24x3x3x16xf16>) -> tensor<2x9x9x24xf32> {
  %one = arith.constant 1.0 : f16
  %fz = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f16
  } : tensor<2x9x9x16xf16> to tensor<2x11x11x16xf16>
  %e = tensor.empty() : tensor<2x9x9x24xf32>
  %acc = linalg.fill ins(%fz : f32) outs(%e : tensor<2x9x9x24xf32>) -> tensor<2x9x9x24xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<2x11x11x16xf16>, tensor<24x3x3x16xf16>) outs(%acc : tensor<2x9x9x24xf32>) -> tensor<2x9x9x24xf32>
  return %c : tensor<2x9x9x24xf32>
}
"""


def test_example_report_shows_every_conv_on_convc(tmp_path):
    r = run_cli("convc", EXAMPLE, "-o", str(tmp_path / "x.vmfb"), "--report")
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stdout.splitlines() if l.startswith("bottleneck_dispatch")]
    assert len(lines) == 3 and all(": convc [" in l for l in lines), r.stdout
    assert "compile time:" in r.stdout
    assert os.path.getsize(tmp_path / "x.vmfb") > 0


def test_dump_dir_has_each_stage_and_the_ptx(tmp_path):
    d = tmp_path / "dump"
    r = run_cli("convc", EXAMPLE, "-o", str(tmp_path / "x.vmfb"), "--dump-dir", str(d))
    assert r.returncode == 0, r.stderr
    names = os.listdir(d)
    for stage in ("flow", "convc-match-conv", "convc-plan-schedule", "convc-lower-kernel", "convc-splice-dispatch"):
        assert f"resnet_bottleneck.{stage}.mlir" in names
    ptx = [f for f in os.listdir(d / "binaries") if f.endswith(".ptx")]
    text = "".join((d / "binaries" / f).read_text() for f in ptx)
    assert ".target sm_90a" in text
    assert text.count(".entry conv_") == 3     # one convc kernel per conv of the block


def test_unsupported_conv_falls_back_with_reason_and_no_fallback_errors(tmp_path):
    src = tmp_path / "padval.mlir"
    src.write_text(PADVAL)
    r = run_cli("convc", str(src), "-o", str(tmp_path / "a.vmfb"), "--report", "--target", "llvm-cpu")
    assert r.returncode == 0, r.stderr
    assert ": IREE: conv not taken: padding value is not zero" in r.stdout
    assert "0 of 1 conv executables on convc, running 0 of 1 conv dispatches per inference (the model has 1 conv ops)" in r.stdout
    assert "per convc dispatch" not in r.stdout                 # no convc dispatch, no per-dispatch time
    r = run_cli("convc", str(src), "-o", str(tmp_path / "b.vmfb"), "--no-fallback", "--target", "llvm-cpu")
    assert r.returncode != 0
    assert r.stderr.count("\n") == 1 and "--no-fallback" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["/nonexistent/model.mlir"], "input file not found"),
    (["{malformed}"], "malformed input"),
    (["{example}", "--target", "sm_75"], "unknown target 'sm_75'"),
])
def test_errors_are_one_line(tmp_path, args, needle):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( -> {\n")
    args = [a.replace("{malformed}", str(bad)).replace("{example}", EXAMPLE) for a in args]
    r = run_cli("convc", *args, "-o", str(tmp_path / "o.vmfb"))
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and needle in r.stderr, r.stderr


def test_extra_iree_flags_are_passed_through(tmp_path):
    r = run_cli("convc", EXAMPLE, "-o", str(tmp_path / "o.vmfb"), "--", "--iree-no-such-flag")
    assert r.returncode != 0 and "iree-no-such-flag" in r.stderr and "repro" in r.stderr
    # the repro command's input file is kept
    import re
    import shlex
    import shutil
    repro = shlex.split(re.search(r"\(repro: ([^)]*)\)", r.stderr).group(1))
    kept = re.search(r"files are kept in (\S+)", r.stderr).group(1)
    assert os.path.isfile(repro[1]) and repro[1].startswith(kept)
    shutil.rmtree(kept)


def test_convc_opt_runs_one_pass_and_rejects_unknown_ones():
    r = run_cli("convc-opt", "--pass=convc-match-conv", os.path.join(INPUTS, "padded_3x3_bias_relu.flow.mlir"))
    assert r.returncode == 0 and "convc.problem" in r.stdout and "convc.schedule" not in r.stdout
    r = run_cli("convc-opt", "--pass=convc-nope", os.path.join(INPUTS, "padded_3x3_bias_relu.flow.mlir"))
    assert r.returncode != 0 and "unknown pass" in r.stderr


def test_suite_compile_reads_a_tuning_cache(tmp_path):
    """convc-suite compile --tuning-cache: the cache's winner replaces the default schedule (the
    way trace and check bundles of a non-default schedule are built)."""
    import json
    from convc.passes.plan.plan_schedule import candidate_schedules, knobs_of
    from convc.passes.target import get_target
    from convc.tools.layers import load_suite
    layer = next(L for L in load_suite() if L.name == "n1_3x3_512_7x7")
    p = layer.expected_problem()
    cands = candidate_schedules(p, get_target("sm_90a"))
    assert cands[0].kernel == "sm90_ws_streamk"
    pick = next(c for c in cands if c.kernel == "sm90_ws_pingpong")
    cache = tmp_path / "cache.json"
    cache.write_text(json.dumps({"format": "convc-tuning-1", "entries": {
        f"sm_90a|GPU|{p.name}": {"knobs": list(knobs_of(pick)), "us": 1.0, "tried": 2, "date": "2026-01-01"}}}))
    out = tmp_path / "bundle"
    for extra, kernel in (([], cands[0].describe()), (["--tuning-cache", str(cache)], pick.describe())):
        r = run_cli("convc-suite", "compile", "--only", layer.name, "--out", str(out), *extra)
        assert r.returncode == 0, r.stderr
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["layers"][0]["dispatches"][0]["kernel"] == kernel


def test_stdin_output_and_cache_edges(tmp_path):
    with open(EXAMPLE) as f:
        r = subprocess.run(["convc", "-", "-o", str(tmp_path / "s.vmfb"), "--report"], stdin=f,
                           capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "3 of 3 conv executables on convc, running 3 of 3 conv dispatches per inference (the model has 3 conv ops)" in r.stdout and "tuning cache: none" in r.stdout
    for args, needle in ((["-o", str(tmp_path / "no" / "x.vmfb")], "output directory"),
                         (["-o", str(tmp_path)], "is a directory"),
                         (["-o", str(tmp_path / "x.vmfb"), "--tuning-cache", str(tmp_path / "nope.json")],
                          "tuning cache not found")):
        r = run_cli("convc", EXAMPLE, *args)
        assert r.returncode != 0 and "Traceback" not in r.stderr and needle in r.stderr, r.stderr


def test_dump_dir_error_and_help_pass_through(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = run_cli("convc", EXAMPLE, "-o", str(tmp_path / "x.vmfb"), "--dump-dir", str(blocker / "d"))
    assert r.returncode != 0 and "Traceback" not in r.stderr and "dump directory" in r.stderr, r.stderr
    r = run_cli("convc", "--help")
    assert r.returncode == 0 and "`--`" in r.stdout and "--precision" in r.stdout
