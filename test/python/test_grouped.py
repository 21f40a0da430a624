"""Grouped and depthwise convs reach convc's direct kernel, with their pads and epilogues.

Models as users have them (ONNX `group > 1`, PyTorch `groups=`, TensorFlow-style NHWC
depthwise MLIR) are compiled for llvm-cpu and run through the IREE runtime on random inputs,
against an independent reference (ONNX's reference evaluator, PyTorch or numpy on the CPU, in
fp32). The light ONNX networks with grouped convs compile for sm_90a with every conv on convc.
"""

import dataclasses
import json
import os

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402


def _rel_err(got, ref):
    got, ref = got.astype(np.float64), ref.astype(np.float64)
    return np.linalg.norm(got - ref) / np.linalg.norm(ref)


def _conv_reports(res):
    return [r for r in res.reports if r.is_conv]


def _onnx_grouped(shape, F, R, S, group, strides=(1, 1), dilations=(1, 1), pads=(0, 0, 0, 0), relu=False, seed=0):
    """One ONNX Conv (bias) [+ Relu], NCHW; pads are ONNX's (top, left, bottom, right)."""
    rng = np.random.default_rng(seed)
    N, C, H, W = shape
    inits = [numpy_helper.from_array(rng.uniform(-1, 1, (F, C // group, R, S)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.uniform(-1, 1, (F,)).astype(np.float32), "b")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if relu else "y"], group=group, strides=list(strides),
                              dilations=list(dilations), pads=list(pads))]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    ho = (H + pads[0] + pads[2] - dilations[0] * (R - 1) - 1) // strides[0] + 1
    wo = (W + pads[1] + pads[3] - dilations[1] * (S - 1) - 1) // strides[1] + 1
    t = TensorProto.FLOAT
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", t, list(shape))],
                              [helper.make_tensor_value_info("y", t, [N, F, ho, wo])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# (input NCHW, F, R, S, group, strides, dilations, pads): depthwise with and without a channel
# multiplier, narrow and wide groups, odd channel counts, asymmetric pads, dilation, a grouped
# 1x1 (IREE's contraction form) and a one-pixel output
CASES = [
    ((2, 16, 9, 9), 16, 3, 3, 16, (1, 1), (1, 1), (1, 1, 1, 1)),
    ((1, 24, 12, 10), 24, 5, 5, 24, (2, 2), (1, 1), (2, 2, 2, 2)),
    ((1, 16, 10, 11), 16, 3, 3, 16, (1, 2), (2, 1), (2, 1, 2, 0)),
    ((2, 8, 8, 8), 24, 3, 3, 8, (2, 1), (1, 1), (0, 1, 2, 1)),
    ((2, 15, 7, 9), 10, 3, 3, 5, (1, 1), (2, 2), (2, 2, 2, 2)),
    ((1, 32, 10, 10), 64, 3, 3, 4, (1, 1), (1, 1), (1, 0, 1, 2)),
    ((2, 24, 6, 6), 48, 1, 1, 3, (1, 1), (1, 1), (0, 0, 0, 0)),
    ((1, 12, 8, 8), 12, 7, 7, 12, (1, 1), (1, 1), (0, 0, 0, 0)),
]


@pytest.mark.parametrize("case", CASES, ids=[f"g{c[4]}_{c[0][1]}to{c[1]}_{c[2]}x{c[3]}" for c in CASES])
def test_onnx_grouped_conv_matches_the_reference(tmp_path, case):
    shape, F, R, S, group, strides, dilations, pads = case
    model = _onnx_grouped(shape, F, R, S, group, strides, dilations, pads, relu=True)
    path = tmp_path / "g.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "g.vmfb"
    res = compile_file(str(path), str(out), CompileOptions(target="llvm-cpu"))
    convs = _conv_reports(res)
    assert [r.path for r in convs] == ["convc"], [r.line() for r in res.reports]
    assert convs[0].schedule.kernel == "direct_grouped" and convs[0].problem.groups == group
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    got = LoadedModule(str(out), "local-task").call("g", [(x, "f32")])
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert got.shape == ref.shape
    assert _rel_err(got, ref) <= 1e-5, _rel_err(got, ref)


def _onnx_grouped_bn_chain(seed=0):
    """Two grouped 3x3 convs (32 -> 32 channels, 4 groups), each followed by BatchNormalization
    and Relu (a ResNeXt block's middle), NCHW."""
    rng = np.random.default_rng(seed)
    inits, nodes, x = [], [], "x"
    for i in range(2):
        inits += [numpy_helper.from_array(rng.uniform(-0.5, 0.5, (32, 8, 3, 3)).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(rng.uniform(0.5, 1.5, (32,)).astype(np.float32), f"s{i}"),
                  numpy_helper.from_array(rng.uniform(-0.5, 0.5, (32,)).astype(np.float32), f"b{i}"),
                  numpy_helper.from_array(rng.uniform(-0.5, 0.5, (32,)).astype(np.float32), f"m{i}"),
                  numpy_helper.from_array(rng.uniform(0.5, 2.0, (32,)).astype(np.float32), f"v{i}")]
        nodes += [helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], group=4, pads=[1, 1, 1, 1]),
                  helper.make_node("BatchNormalization", [f"c{i}", f"s{i}", f"b{i}", f"m{i}", f"v{i}"], [f"n{i}"]),
                  helper.make_node("Relu", [f"n{i}"], [f"y{i}"])]
        x = f"y{i}"
    t = TensorProto.FLOAT
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", t, [2, 32, 8, 8])],
                              [helper.make_tensor_value_info("y1", t, [2, 32, 8, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_grouped_convs_keep_channels_last_with_their_epilogues(tmp_path):
    """The import views a grouped conv's result as [N, G, F/G, H, W] and collapses it straight
    back; convc-channels-last folds that pair, so no transpose is left between grouped convs
    (ResNeXt-50 kept 17 per inference) and each conv's BatchNorm + Relu fuses into its
    dispatch (f32: the direct kernel on both targets; checked against ONNX's reference)."""
    model = _onnx_grouped_bn_chain()
    path = tmp_path / "g.onnx"
    onnx.save(model, str(path))
    for target in ("sm_90a", "llvm-cpu"):
        out = tmp_path / f"g_{target}.vmfb"
        res = compile_file(str(path), str(out), CompileOptions(target=target))
        convs = _conv_reports(res)
        assert [(r.path, r.schedule.kernel) for r in convs] == [("convc", "direct_grouped")] * 2, \
            [r.line() for r in res.reports]
        assert all(len(r.problem.operand_loads) >= 1 for r in convs), [r.line() for r in convs]
        between = [w for _, w in res.transposes if w.startswith("between")]
        assert not between, between
    x = np.random.default_rng(1).standard_normal((2, 32, 8, 8)).astype(np.float32)
    got = LoadedModule(str(tmp_path / "g_llvm-cpu.vmfb"), "local-task").call("g", [(x, "f32")])
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert _rel_err(got, ref) <= 1e-5, _rel_err(got, ref)


def test_precision_f16_demotes_grouped_and_depthwise_convs(tmp_path):
    """--precision f16 on an f32 model: grouped and depthwise convs read f16 too (f32
    accumulation and output), so sm_90a takes the tensor-core grouped kernel; numerics on
    llvm-cpu against ONNX's fp32 reference."""
    cases = [(_onnx_grouped_bn_chain(), (2, 32, 8, 8), "grouped_mma"),
             (_onnx_grouped((2, 16, 9, 9), 16, 3, 3, 16, pads=(1, 1, 1, 1), relu=True), (2, 16, 9, 9), "direct_grouped"),
             (_onnx_grouped((2, 8, 8, 8), 24, 3, 3, 8, pads=(1, 1, 1, 1), relu=True), (2, 8, 8, 8), "direct_grouped")]
    for i, (model, shape, gpu_kernel) in enumerate(cases):
        path = tmp_path / f"m{i}.onnx"
        onnx.save(model, str(path))
        for target, kernel in (("sm_90a", gpu_kernel), ("llvm-cpu", "direct_grouped")):
            res = compile_file(str(path), str(tmp_path / f"m{i}_{target}.vmfb"), CompileOptions(target=target, precision="f16"))
            convs = _conv_reports(res)
            assert convs and all(r.path == "convc" and r.schedule.kernel == kernel and r.problem.dtype == "f16"
                                 for r in convs), [r.line() for r in res.reports]
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        got = LoadedModule(str(tmp_path / f"m{i}_llvm-cpu.vmfb"), "local-task").call("g", [(x, "f32")])
        ref = ReferenceEvaluator(model).run(None, {"x": x})[0]
        assert _rel_err(got, ref) <= 2e-3, _rel_err(got, ref)


def test_pytorch_mobile_block_f16(tmp_path):
    """An inverted-residual block (1x1 expand, 3x3 depthwise, BN, ReLU6, 1x1 project, residual)
    and a grouped 3x3 with channel shuffle, exported from PyTorch in f16."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import compile_module

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(16, 16, 3, padding=1)
            self.expand = torch.nn.Conv2d(16, 48, 1, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(48)
            self.dw = torch.nn.Conv2d(48, 48, 3, padding=1, groups=48, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(48)
            self.project = torch.nn.Conv2d(48, 16, 1)
            self.grouped = torch.nn.Conv2d(16, 32, 3, padding=1, groups=4)

        def forward(self, x):
            x = torch.relu(self.stem(x))
            y = torch.nn.functional.relu6(self.bn1(self.expand(x)))
            y = torch.nn.functional.relu6(self.bn2(self.dw(y)))
            y = self.project(y) + x
            z = torch.sigmoid(self.grouped(y))
            n, c, h, w = z.shape
            return z.view(n, 4, c // 4, h, w).transpose(1, 2).reshape(n, c, h, w)

    torch.manual_seed(0)
    net = Block().eval()
    with torch.no_grad():
        for bn in (net.bn1, net.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2)
    x = torch.randn(2, 16, 10, 10)
    out = tmp_path / "b.vmfb"
    res = compile_module(net.half(), (x.half(),), str(out), target="llvm-cpu")
    convs = _conv_reports(res)
    assert len(convs) == 5 and all(r.path == "convc" for r in convs), [r.line() for r in res.reports]
    assert sorted(r.schedule.kernel for r in convs).count("direct_grouped") == 2
    got = LoadedModule(str(out), "local-task").call("main", [(x.half().numpy(), "f16")])
    with torch.no_grad():
        ref = net.float()(x).numpy()
    assert _rel_err(got, ref) <= 1e-2, _rel_err(got, ref)


NHWC_DEPTHWISE = """
func.func @main(%x: tensor<2x9x9x8xf32>, %w: tensor<3x3x8x2xf32>, %b: tensor<16xf32>) -> tensor<2x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4x8x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4x8x2xf32>) -> tensor<2x4x4x8x2xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<2x9x9x8xf32>, tensor<3x3x8x2xf32>) outs(%acc : tensor<2x4x4x8x2xf32>) -> tensor<2x4x4x8x2xf32>
  %flat = tensor.collapse_shape %c [[0], [1], [2], [3, 4]] : tensor<2x4x4x8x2xf32> into tensor<2x4x4x16xf32>
  %e2 = tensor.empty() : tensor<2x4x4x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (f)>,
                                        affine_map<(n, h, w, f) -> (n, h, w, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%flat, %b : tensor<2x4x4x16xf32>, tensor<16xf32>) outs(%e2 : tensor<2x4x4x16xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<2x4x4x16xf32>
  return %y : tensor<2x4x4x16xf32>
}
"""


def test_nhwc_depthwise_multiplier_mlir(tmp_path):
    """A TensorFlow-style NHWC depthwise conv with a channel multiplier, written in linalg."""
    src = tmp_path / "dw.mlir"
    src.write_text(NHWC_DEPTHWISE)
    out = tmp_path / "dw.vmfb"
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    convs = _conv_reports(res)
    assert [r.path for r in convs] == ["convc"] and convs[0].problem.depthwise, [r.line() for r in res.reports]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 9, 9, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 2)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    got = LoadedModule(str(out), "local-task").call("main", [(x, "f32"), (w, "f32"), (b, "f32")])
    ref = np.zeros((2, 4, 4, 8, 2))
    for r in range(3):
        for s in range(3):
            ref += x[:, r:r + 8:2, s:s + 8:2, :, None].astype(np.float64) * w[r, s]
    ref = np.tanh(ref.reshape(2, 4, 4, 16) + b)
    assert _rel_err(got, ref) <= 1e-5


@pytest.mark.parametrize("name", ["shufflenet", "bvlc_alexnet"])
def test_light_grouped_networks_take_convc(tmp_path, name):
    """The ONNX light networks with grouped convs (ShuffleNet: grouped 1x1 and depthwise 3x3;
    AlexNet: two groups) have every conv on convc for sm_90a (compile-only here; the GPU model
    check runs them)."""
    path = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", f"light_{name}.onnx")
    if not os.path.exists(path):
        pytest.skip("this onnx wheel ships no light models")
    res = compile_file(path, str(tmp_path / "m.vmfb"), CompileOptions(target="sm_90a"))
    convs = _conv_reports(res)
    assert convs and all(r.path == "convc" for r in convs), [r.line() for r in convs if r.path != "convc"]
    assert any(r.problem.grouped for r in convs)


@pytest.mark.parametrize("target", ["gfx942", "gfx950", "sm_100a"])
def test_grouped_convs_compile_for_other_targets(tmp_path, target):
    """AMD and Blackwell take the same direct kernel (compile-only here)."""
    for i, case in enumerate(CASES[:3] + CASES[4:6]):
        shape, F, R, S, group, strides, dilations, pads = case
        path = tmp_path / f"g{i}.onnx"
        onnx.save(_onnx_grouped(shape, F, R, S, group, strides, dilations, pads), str(path))
        res = compile_file(str(path), str(tmp_path / f"g{i}.vmfb"), CompileOptions(target=target))
        convs = _conv_reports(res)
        assert [r.path for r in convs] == ["convc"] and convs[0].schedule.kernel == "direct_grouped", \
            [r.line() for r in res.reports]


def _random_layers():
    from convc.tools.layers import load_suite
    path = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "data", "grouped_random.json")
    return load_suite(path)


@pytest.mark.parametrize("layer", _random_layers()[:16], ids=lambda L: L.name)
def test_random_grouped_layers_on_cpu(tmp_path, layer):
    """The first randomized grouped/depthwise layers (tools/data/grouped_random.json, the GPU
    check runs all) as linalg models: NaN-poisoned outputs against the numpy fp32 reference,
    on convc or (named) on IREE's fallback."""
    from conftest import compile_layer, run_layer_cpu
    vmfb, res = compile_layer(tmp_path, layer)
    convs = _conv_reports(res)
    assert len(convs) == 1, [r.line() for r in res.reports]
    if convs[0].path == "convc":
        got, want = convs[0].problem, layer.expected_problem()
        if got.pad != want.pad:      # IREE padded in a dispatch of its own (a strided view follows)
            pt, pl, pb, pr = want.pad
            assert got.pad == (0, 0, 0, 0) and (got.H, got.W) == (want.H + pt + pb, want.W + pl + pr)
            got = dataclasses.replace(got, H=want.H, W=want.W, pad=want.pad)
        assert got == want
    else:
        # one-tap axes IREE folds into other forms stay with IREE (dense convs too); the
        # fallback must still be right
        assert 1 in (layer.R, layer.S), convs[0].line()
    got, ref = run_layer_cpu(vmfb, layer, 0)
    assert not np.isnan(got).any(), "unwritten (poisoned) or NaN outputs"
    assert _rel_err(got, ref) <= (1e-2 if layer.out_dtype != "f32" else 1e-5), _rel_err(got, ref)


def test_dynamic_batch_grouped_and_depthwise(tmp_path):
    """A dynamic batch reaches the direct kernel (its grid and item count from the batch): one
    vmfb run at several N against PyTorch."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import compile_module

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.mult = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=16)
            self.grouped = torch.nn.Conv2d(32, 32, 3, padding=1, groups=4)

        def forward(self, x):
            return self.grouped(torch.relu(self.mult(torch.relu(self.dw(x)))))

    torch.manual_seed(0)
    net = Net().eval()
    out = tmp_path / "d.vmfb"
    res = compile_module(net, (torch.randn(2, 16, 9, 9),), str(out), dynamic_batch=True, target="llvm-cpu")
    convs = _conv_reports(res)
    assert len(convs) == 3 and all(r.path == "convc" and r.problem.dynamic_batch for r in convs), \
        [r.line() for r in res.reports]
    mod = LoadedModule(str(out), "local-task")
    for n in (1, 3, 6):
        x = torch.randn(n, 16, 9, 9)
        got = mod.call("main", [(x.numpy(), "f32")])
        with torch.no_grad():
            ref = net(x).numpy()
        assert got.shape == ref.shape and _rel_err(got, ref) <= 1e-5, (n, _rel_err(got, ref))


def test_random_wide_depthwise_layers():
    """convc-suite random-grouped --wide: depthwise convs (multiplier 1) with 7-9 column windows,
    the same layers for the same seed, and the committed suite is the seed it names."""
    from convc.tools.layers import load_suite, random_grouped_layers
    a, b = random_grouped_layers(7, 12, wide=True), random_grouped_layers(7, 12, wide=True)
    assert a == b and len(a) == 12
    assert all(L.groups == L.C == L.F and L.S >= 7 and L.group == "depthwise_wide_random" for L in a)
    assert random_grouped_layers(7, 12) != a
    path = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "data", "depthwise_wide_random.json")
    with open(path) as f:
        about = json.load(f)["about"]
    assert about == "convc-suite random-grouped --seed 2050 --count 32 --wide"
    assert load_suite(path) == random_grouped_layers(2050, 32, wide=True)
