"""convc-pad-channels: convs whose F is not a multiple of 8 compute F rounded up with zero
filters and slice the result back. The padded model must compute what the original does: the
pass is applied as for sm_90a, the result compiled for llvm-cpu (convc's CPU kernel on the
padded conv, IREE on the slice and epilogue) and run on random data against numpy's fp32
reference, with a NaN-poisoned output."""

import dataclasses
import pytest

from conftest import assert_outputs_right, compile_layer
from convc.compiler.driver import CompileOptions, compile_file
from convc.passes.layout.channel_pad import pad_channels
from convc.passes.ir import ir
from convc.passes.registry import PassOptions
from convc.tools.layers import Layer, layer_mlir

CASES = [
    Layer("rgb_out_f3", 2, 9, 8, 32, 3, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias"),
    Layer("f1_residual", 2, 9, 9, 16, 1, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias_residual_relu"),
    Layer("f13_bf16_s2", 3, 11, 13, 24, 13, 3, 5, (2, 1), (1, 2), (1, 0, 2, 3), "bf16", "bias_residual_relu"),
    Layer("f5_f32_relu", 1, 10, 7, 16, 5, 5, 3, (1, 1), (1, 1), (2, 2, 1, 1), "f32", "bias_relu"),
    Layer("f2_no_epilogue", 2, 12, 10, 8, 2, 7, 7, (1, 1), (1, 1), (3, 3, 3, 3), "f16", "none"),
]


def _padded_model(tmp_path, layer: Layer) -> str:
    """The layer's model after convc-pad-channels as run for sm_90a."""
    with ir.Context() as ctx:
        module = ir.Module.parse(layer_mlir(layer, output_arg=True), ctx)
        text = str(pad_channels(module, PassOptions(target="sm_90a")))
    assert "tensor.insert_slice" in text and "tensor.extract_slice" in text
    path = tmp_path / f"{layer.name}.padded.mlir"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("layer", CASES, ids=[c.name for c in CASES])
def test_padded_conv_matches_reference(tmp_path, layer):
    vmfb = tmp_path / f"{layer.name}.vmfb"
    res = compile_file(_padded_model(tmp_path, layer), str(vmfb), CompileOptions(target="llvm-cpu"))
    convs = [r for r in res.reports if r.problem is not None]
    assert len(convs) == 1 and convs[0].path == "convc", [r.line() for r in res.reports]
    assert convs[0].problem.F == -(-layer.F // 8) * 8
    assert_outputs_right(vmfb, layer, seeds=(0, 1), f32_tol=1e-5)


def test_sm90a_runs_narrow_outputs_on_tensor_cores(tmp_path):
    """F = 3 becomes an 8-channel conv on the grouped tensor-core kernel, F = 13 a 16-channel
    one on 32-channel persistent tiles; a 1x1 F = 255 head is left alone (IREE would move the
    slice back into its matmul)."""
    _, res = compile_layer(tmp_path, CASES[0], target="sm_90a", tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert (conv.problem.F, conv.schedule.kernel) == (8, "grouped_mma"), conv.line()
    layer = Layer("f13_3x3", 2, 16, 16, 64, 13, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f16", "bias_relu")
    _, res = compile_layer(tmp_path, layer, target="sm_90a", tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert (conv.problem.F, conv.schedule.kernel, conv.schedule.block_n) == (16, "sm90_ws_pingpong", 32), conv.line()
    head = Layer("head_1x1", 2, 20, 20, 256, 255, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), "f16", "bias")
    _, res = compile_layer(tmp_path, head, target="sm_90a", tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.problem.F == 255 and conv.path == "convc", conv.line()


def test_other_targets_keep_f(tmp_path):
    for target in ("llvm-cpu", "gfx942"):
        with ir.Context() as ctx:
            module = ir.Module.parse(layer_mlir(CASES[0], output_arg=True), ctx)
            assert "tensor.insert_slice" not in str(pad_channels(module, PassOptions(target=target)))


def test_dynamic_batch_narrow_output_runs_as_one_group():
    """A dynamic batch keeps the static rule for F <= 8 (f16/bf16): the grouped tensor-core
    kernel with its grid sized for the SMs; f32 stays on the persistent TF32 kernel."""
    import dataclasses
    from convc.passes.plan.plan_schedule import plan_schedule_for
    from convc.passes.target import get_target
    p = dataclasses.replace(CASES[0].expected_problem(), F=8, batch_constant=0)
    s = plan_schedule_for(p, get_target("sm_90a"))
    assert s.kernel == "grouped_mma" and "batch read at run time" in s.reason and "one group" in s.reason, s.reason
    s = plan_schedule_for(dataclasses.replace(p, dtype="f32"), get_target("sm_90a"))
    assert s.kernel == "sm90_ws_pingpong" and s.block_n == 32, s.reason


F32_STEMS = [
    Layer("stem_c3_7x7_f32", 2, 20, 18, 3, 16, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3), "f32", "bias_relu"),
    Layer("c5_3x3_f32", 1, 9, 11, 5, 8, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), "f32", "bias_residual_relu"),
]


@pytest.mark.parametrize("layer", F32_STEMS, ids=[c.name for c in F32_STEMS])
def test_f32_input_channels_padded_for_tf32(tmp_path, layer):
    """An f32 conv whose C no TF32 K step tiles (the RGB stem) reads C padded to 16 with zero
    filter channels (as run for sm_90a with TF32, the default); exact: the model still
    computes the original conv (checked on llvm-cpu against numpy). With --precision fp32 the
    input stays as it is (the exact portable kernel)."""
    with ir.Context() as ctx:
        module = ir.Module.parse(layer_mlir(layer, output_arg=True), ctx)
        text = str(pad_channels(module, PassOptions(target="sm_90a")))
    padded_input = f"x{layer.W}x16xf32>"
    assert padded_input in text
    path = tmp_path / f"{layer.name}.padded.mlir"
    path.write_text(text)
    vmfb = tmp_path / f"{layer.name}.vmfb"
    res = compile_file(str(path), str(vmfb), CompileOptions(target="llvm-cpu"))
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.path == "convc" and conv.problem.C == 16, conv.line()
    assert_outputs_right(vmfb, layer, seeds=(0, 1), f32_tol=1e-5)
    with ir.Context() as ctx:
        module = ir.Module.parse(layer_mlir(layer, output_arg=True), ctx)
        assert padded_input not in str(pad_channels(module, PassOptions(target="sm_90a", precision="fp32")))


def test_f32_stem_on_tf32_tensor_cores(tmp_path):
    """ResNet's f32 stem keeps its 3 channels: the row-slab kernel's TF32 register-A wgmmas
    read the input rows as they are (no zero fill, no copy into 16 channels, 5.3x fewer
    multiply-adds); a stem the row-slab kernel declines (F = 16: not a 64-channel block) is
    padded for the persistent TF32 kernel as before."""
    layer = Layer("r50_stem_f32", 2, 224, 224, 3, 64, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3), "f32", "bias_relu")
    _, res = compile_layer(tmp_path, layer, target="sm_90a", tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.problem.C == 3 and conv.schedule.kernel == "sm90_rows_wgmma", conv.line()
    assert "TF32" in conv.schedule.reason
    assert not [r for r in res.reports if r.copy is not None], [r.line() for r in res.reports]
    narrow = dataclasses.replace(layer, name="stem_f16_out", F=16)
    _, res = compile_layer(tmp_path, narrow, target="sm_90a", tuning_cache="none")
    (conv,) = [r for r in res.reports if r.problem is not None]
    assert conv.problem.C == 16 and conv.schedule.kernel.startswith("sm90_ws"), conv.line()
