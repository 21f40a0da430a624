"""convc-record-once on real programs, run on the CPU (llvm-cpu, local-task): the rewritten host
program (fixed buffers, copies in and out, calls ordered by a module fence; on CPU targets each
submission waits on the one before) gives the same numbers as IREE's own program and as an
independent reference, call after call, with every result still valid after later calls."""

import os

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.runtime.module import LoadedModule, records_once


def _build(src, out, record_once, **kw):
    res = compile_file(src, out, CompileOptions(target="llvm-cpu", tuning_cache="none", record_once=record_once, **kw))
    assert all(s.fixed_buffers == (record_once == "on") for s in res.structure), [s.line() for s in res.structure]
    assert records_once(out) == (record_once == "on")
    return res


@pytest.fixture(scope="module")
def light_resnet50(tmp_path_factory):
    """The ONNX light ResNet-50 built for llvm-cpu with and without convc-record-once."""
    pytest.importorskip("onnx")
    from convc.tools.models import light_dir
    src = os.path.join(light_dir(), "light_resnet50.onnx")
    d = tmp_path_factory.mktemp("r50")
    _build(src, str(d / "on.vmfb"), "on")
    _build(src, str(d / "off.vmfb"), "off")
    return str(d / "on.vmfb"), str(d / "off.vmfb")


def test_onnx_light_resnet50_matches_iree_program(light_resnet50):
    on, off = LoadedModule(light_resnet50[0]), LoadedModule(light_resnet50[1])
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(3)]
    f = on.function()
    held = [f(on.to_device(x, "f32")) for x in xs]          # every call made before any is read
    for x, r in zip(xs, held):
        want = off.function()(off.to_device(x, "f32")).to_host()
        assert np.array_equal(r.to_host(), want)


def test_pytorch_block_against_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from torch import nn
    from convc.compiler.pytorch import export_mlir

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(8, 32, 3, padding=1)
            self.c2 = nn.Conv2d(32, 16, 1)
            self.fc = nn.Linear(16, 5)

        def forward(self, x):
            y = self.c2(torch.relu(self.c1(x)))
            return self.fc(y.mean((2, 3)))

    torch.manual_seed(3)
    model = Block().eval()
    src = tmp_path / "block.mlir"
    src.write_text(export_mlir(model, (torch.zeros(2, 8, 12, 12),)))
    _build(str(src), str(tmp_path / "b.vmfb"), "on")
    lm = LoadedModule(str(tmp_path / "b.vmfb"))
    f = lm.function()
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 8, 12, 12)).astype(np.float32) for _ in range(4)]
    held = [f(lm.to_device(x, "f32")) for x in xs]
    with torch.no_grad():
        for x, r in zip(xs, held):
            want = model(torch.from_numpy(x)).numpy()
            got = r.to_host()
            assert np.linalg.norm(got - want) <= 1e-4 * np.linalg.norm(want), (got, want)


def test_calls_chained_by_fences_never_block(light_resnet50):
    """The async function returns at once: six calls, each waiting on the one before and the
    first on a gate the host has not signalled, are all queued before any runs; released, each
    result is IREE's own program's."""
    import iree.runtime as rt
    m, off = LoadedModule(light_resnet50[0]), LoadedModule(light_resnet50[1])
    fn = m.vm_module.lookup_function("resnet50$async")
    gate, done = m.device.create_semaphore(0), m.device.create_semaphore(0)
    rng = np.random.default_rng(11)
    xs = [rng.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(6)]
    rets = []
    for i, x in enumerate(xs):
        args = rt.VmVariantList(3)
        args.push_ref(m.to_device(x, "f32"))
        args.push_ref(rt.HalFence.create_at(gate, 1) if i == 0 else rt.HalFence.create_at(done, i))
        args.push_ref(rt.HalFence.create_at(done, i + 1))
        rets.append(rt.VmVariantList(1))
        m.context.vm_context.invoke(fn, args, rets[-1])
    assert gate.query() == 0 and done.query() == 0       # queued, nothing ran
    gate.signal(1)
    rt.HalFence.create_at(done, len(xs)).wait()
    for x, r in zip(xs, rets):
        got = rt.DeviceArray(m.device, r.get_as_object(0, rt.HalBufferView)).to_host()
        assert np.array_equal(got, off.function()(off.to_device(x, "f32")).to_host())


def test_benchmark_tool_chains_calls(light_resnet50):
    """The rewritten function says it takes fences (its reflection), so iree-benchmark-module
    runs it with --batch_size N as N calls chained by their fences (PyTorch's back-to-back
    timing); IREE's own build of the function does not say so."""
    from convc.tools.gpu.e2e import _benchmark_module
    r = _benchmark_module(light_resnet50[0], {}, (1, 3, 224, 224), "f32", reps=2, batch=4, device="local-task",
                          function="resnet50")
    assert r.get("median_ms", 0) > 0, r
    r = _benchmark_module(light_resnet50[1], {}, (1, 3, 224, 224), "f32", reps=2, batch=4, device="local-task",
                          function="resnet50")
    assert "error" in r, r


def test_synchronous_function_matches_iree_program(tmp_path):
    """The bundled example (a linalg model: one synchronous function, seven inputs, no fences)
    recorded once: its host wait follows the copy out; numbers equal IREE's program's and an
    f32 NumPy reference of the block's math within f16 rounding."""
    src = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "resnet_bottleneck.mlir")
    res = _build(src, str(tmp_path / "on.vmfb"), "on")
    (s,) = res.structure
    assert (s.submissions, s.host_waits, s.allocations) == (3, 1, 1), s.line()
    _build(src, str(tmp_path / "off.vmfb"), "off")
    on, off = LoadedModule(str(tmp_path / "on.vmfb")), LoadedModule(str(tmp_path / "off.vmfb"))
    rng = np.random.default_rng(5)
    shapes = [(2, 14, 14, 256), (64, 1, 1, 256), (64,), (64, 3, 3, 64), (64,), (256, 1, 1, 64), (256,)]
    calls = [[(0.1 * rng.standard_normal(sh)).astype(np.float16) for sh in shapes] for _ in range(3)]
    f = on.function()
    held = [f(*[on.to_device(a, "f16") for a in args]) for args in calls]
    for args, r in zip(calls, held):
        want = off.call(off.entry, [(a, "f16") for a in args])
        assert np.array_equal(r.to_host(), want)
        assert np.linalg.norm(r.to_host().astype(np.float32) - _bottleneck(*args)) <= \
            2e-2 * np.linalg.norm(_bottleneck(*args))


def _bottleneck(x, w1, b1, w2, b2, w3, b3):
    """1x1 -> ReLU -> 3x3 (pad 1) -> ReLU -> 1x1, + x, ReLU: NHWC x FHWC in f32."""
    x, w1, b1, w2, b2, w3, b3 = (a.astype(np.float32) for a in (x, w1, b1, w2, b2, w3, b3))
    y = np.maximum(np.einsum("nhwc,fc->nhwf", x, w1[:, 0, 0, :]) + b1, 0)
    p = np.pad(y, ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, w = y.shape[1:3]
    z = sum(np.einsum("nhwc,fc->nhwf", p[:, i:i + h, j:j + w, :], w2[:, i, j, :]) for i in range(3) for j in range(3))
    z = np.maximum(z + b2, 0)
    return np.maximum(np.einsum("nhwc,fc->nhwf", z, w3[:, 0, 0, :]) + b3 + x, 0)


def test_output_storage_handed_in_is_written(tmp_path):
    """A layer as convc's benchmarks build it: the output storage is an argument
    (`iree.abi.output`) the call returns. Recorded once, that caller's buffer is copied out
    to as well as in: poisoned with NaN, it holds the conv's result after the call."""
    from convc.tools.gpu.reference import layer_reference_numpy, rel_l2
    from convc.tools.layers import Layer, layer_mlir
    import iree.runtime as rt
    L = Layer(name="inout", N=2, H=9, W=9, C=16, F=24, R=3, S=3, stride=(1, 1), dilation=(1, 1),
              pad=(1, 1, 1, 1), dtype="f32", epilogue="bias_relu", groups=1)
    src = tmp_path / "layer.mlir"
    src.write_text(layer_mlir(L, output_arg=True))
    res = _build(str(src), str(tmp_path / "l.vmfb"), "on")
    assert res.structure[0].allocations == 0, res.structure[0].line()
    m = LoadedModule(str(tmp_path / "l.vmfb"))
    rng = np.random.default_rng(2)
    for _ in range(2):
        ins = [rng.standard_normal((2, 9, 9, 16)).astype(np.float32),
               (0.1 * rng.standard_normal((24, 3, 3, 16))).astype(np.float32),
               rng.standard_normal(24).astype(np.float32)]
        out = m.to_device(np.full((2, 9, 9, 24), np.nan, np.float32), "f32")
        r = m.function()(*[m.to_device(a, "f32") for a in ins], out)
        got = rt.DeviceArray(m.device, out).to_host()
        assert rel_l2(got, layer_reference_numpy(L, ins)) < 1e-5
        assert np.array_equal(got, rt.DeviceArray(m.device, r).to_host() if isinstance(r, rt.HalBufferView)
                              else r.to_host())
