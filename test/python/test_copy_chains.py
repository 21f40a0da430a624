"""Assembled tensors on convc's copy kernel (passes/match/copy_chains.py, convc-copy-chains).

Channel concatenations of channels-last tensors (DenseNet's dense blocks, U-Net skips,
Inception branches) reach IREE's flow as one copy dispatch per piece; convc runs each
concatenation as one dispatch of its copy kernel. ONNX models compiled for llvm-cpu (the same
passes and planner as the GPU targets, the same emitter) run through the IREE runtime on random
data against numpy (an element the kernel left unwritten would not match); channel counts and offsets that are not
multiples of a 16-byte vector take narrower vectors.
"""

import numpy as np
import pytest

from convc.compiler.driver import CompileOptions, compile_file
from convc.passes.match.copy_chains import MAX_PIECES
from convc.passes.copy_problem import CopyPiece, CopyProblem, exact_cover
from convc.runtime.module import LoadedModule

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _dense_block(C, growth, layers, N, H, W, dtype):
    """x -> layers x (concat everything so far -> relu -> 1x1 conv to `growth` channels), the
    output the concatenation of all: DenseNet's pattern (every layer's concat a new tensor)."""
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    rng = np.random.default_rng(C * 7 + growth)
    nodes, inits, feats, ws = [], [], ["x"], []
    for i in range(layers):
        cin = C + i * growth
        w = (rng.standard_normal((growth, cin, 1, 1)) * 0.3).astype(dtype)
        ws.append(w)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        nodes += [helper.make_node("Concat", feats, [f"cat{i}"], axis=1),
                  helper.make_node("Relu", [f"cat{i}"], [f"r{i}"]),
                  helper.make_node("Conv", [f"r{i}", f"w{i}"], [f"f{i}"])]
        feats = feats + [f"f{i}"]
    nodes.append(helper.make_node("Concat", feats, ["y"], axis=1))
    g = helper.make_graph(nodes, "dense", [helper.make_tensor_value_info("x", t, [N, C, H, W])],
                          [helper.make_tensor_value_info("y", t, None)], inits)
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])), ws


def _dense_reference(x, ws):
    feats = [x.astype(np.float64)]
    for w in ws:
        cat = np.maximum(np.concatenate(feats, axis=1), 0)
        feats.append(np.einsum("nchw,fc->nfhw", cat, w[:, :, 0, 0].astype(np.float64)))
    return np.concatenate(feats, axis=1)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 3e-3)], ids=["f32", "f16"])
@pytest.mark.parametrize("C,growth,layers,N,H,W", [(16, 8, 3, 2, 5, 6), (5, 3, 3, 1, 4, 7), (8, 12, 2, 3, 3, 3),
                                                   (8, 4, 15, 1, 2, 3)],
                         ids=["aligned", "odd_channels", "mixed", "past_the_bindings"])
def test_dense_block_concatenations_run_on_the_copy_kernel(tmp_path, C, growth, layers, N, H, W, dtype, tol):
    model, ws = _dense_block(C, growth, layers, N, H, W, dtype)
    src, out = tmp_path / "dense.onnx", tmp_path / "dense.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    x = np.random.default_rng(3).standard_normal((N, C, H, W)).astype(dtype)
    got = LoadedModule(str(out), "local-task").call(None, [(x, "f32" if dtype == np.float32 else "f16")])
    ref = _dense_reference(x, ws)
    assert got.shape == ref.shape and np.isfinite(got).all()
    assert np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref) < tol
    copies = res.by_kind()["copies"]
    lines = [r.line() for r in res.reports]
    # every concatenation of two or more pieces (layers 2.. and the output's) is one copy
    # dispatch, or (past MAX_PIECES pieces: IREE's CUDA runtime loads no export of more than 16
    # bindings) a first one and others writing their pieces in place; no IREE copy is left
    splits = sum((k - 1) // MAX_PIECES for k in range(2, layers + 2))
    assert len(copies) == layers + splits and all(r.path == "convc" for r in copies), lines
    assert sum(len(r.copy.pieces) for r in copies) == sum(range(2, layers + 2)), lines
    assert all(len(r.copy.pieces) <= MAX_PIECES for r in copies) and sum(r.copy.into for r in copies) == splits
    assert not [r for r in res.reports if "slow_memcpy" in r.dispatch], lines
    if C % 4 or growth % 4:
        assert any(min(r.copy.vector_widths()) < 4 for r in copies), lines


def test_copy_problem_vectors_and_cover():
    """Vector widths follow the alignment of each piece's runs; the cover check refuses gaps
    and overlaps (a chain that leaves part of the empty tensor unwritten stays IREE's)."""
    shape = (2, 4, 4, 24)
    a = CopyPiece(0, (0, 0, 0, 0), (2, 4, 4, 16), (1, 1, 1, 1))
    b = CopyPiece(1, (0, 0, 0, 16), (2, 4, 4, 8), (1, 1, 1, 1))
    p = CopyProblem(shape, "f16", (a, b))
    assert p.vector_widths() == [8, 8] and exact_cover(shape, (a, b)) is None
    odd = CopyProblem((2, 3, 13), "f32", (CopyPiece(0, (0, 0, 0), (2, 3, 10), (1, 1, 1)),
                                          CopyPiece(1, (0, 0, 10), (2, 3, 3), (1, 1, 1))))
    assert odd.vector_widths() == [1, 1]
    assert exact_cover(shape, (a,)) is not None
    assert exact_cover(shape, (a, CopyPiece(1, (0, 0, 0, 8), (2, 4, 4, 16), (1, 1, 1, 1)))) is not None
    # sub-pixel phases: strided along H and W, contiguous channels
    phases = [CopyPiece(i, (0, 0, i // 2, 0, i % 2, 0), (1, 3, 1, 3, 1, 8), (1, 1, 1, 1, 1, 1)) for i in range(4)]
    assert exact_cover((1, 3, 2, 3, 2, 8), phases) is None
    assert CopyProblem((1, 3, 2, 3, 2, 8), "f16", tuple(phases)).vector_widths() == [8] * 4
    with pytest.raises(ValueError):
        CopyProblem(shape, "f16", (CopyPiece(0, (0, 0, 0, 20), (2, 4, 4, 8), (1, 1, 1, 1)),))


@pytest.mark.parametrize("seed", range(6))
def test_random_concatenations(tmp_path, seed):
    """Random draws: 2 to 18 pieces (past MAX_PIECES: split dispatches), channel counts 1 to 24,
    a piece repeated, f16 or f32, the concatenation feeding a 1x1 conv and also returned; every
    element against numpy (the concatenation bit for bit)."""
    import random
    rng = random.Random(seed)
    dtype = rng.choice([np.float32, np.float16])
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    n, h, w = rng.randint(1, 3), rng.randint(1, 6), rng.randint(1, 7)
    inputs = [rng.randint(1, 24) for _ in range(rng.randint(2, 6))]
    order = [rng.randrange(len(inputs)) for _ in range(rng.randint(2, 18))]
    ctot = sum(inputs[i] for i in order)
    wts = (np.random.default_rng(seed).standard_normal((5, ctot, 1, 1)) * 0.2).astype(dtype)
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"r{i}"]) for i in range(len(inputs))]
    nodes += [helper.make_node("Concat", [f"r{i}" for i in order], ["cat"], axis=1),
              helper.make_node("Conv", ["cat", "w"], ["y"])]
    g = helper.make_graph(nodes, "cat", [helper.make_tensor_value_info(f"x{i}", t, [n, c, h, w]) for i, c in enumerate(inputs)],
                          [helper.make_tensor_value_info("cat", t, None), helper.make_tensor_value_info("y", t, None)],
                          [numpy_helper.from_array(wts, "w")])
    model = onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    src, out = tmp_path / "cat.onnx", tmp_path / "cat.vmfb"
    onnx.save(model, str(src))
    res = compile_file(str(src), str(out), CompileOptions(target="llvm-cpu"))
    xs = [np.random.default_rng(seed * 10 + i).standard_normal((n, c, h, w)).astype(dtype) for i, c in enumerate(inputs)]
    et = "f32" if dtype == np.float32 else "f16"
    got_cat, got_y = LoadedModule(str(out), "local-task").call(None, [(x, et) for x in xs], all_results=True)
    cat = np.concatenate([np.maximum(xs[i], 0).astype(np.float64) for i in order], axis=1)
    y = np.einsum("nchw,fc->nfhw", cat, wts[:, :, 0, 0].astype(np.float64))
    assert np.array_equal(got_cat.astype(np.float64), cat.astype(dtype).astype(np.float64)), (inputs, order)
    assert np.linalg.norm(got_y.astype(np.float64) - y) / np.linalg.norm(y) < (1e-5 if dtype == np.float32 else 3e-3)
    lines = [r.line() for r in res.reports]
    copies = res.by_kind()["copies"]
    # no IREE copy dispatch is left; where the concatenation is not contiguous-only (IREE
    # makes contiguous pieces queue updates), every piece is on the copy kernel
    assert not [r for r in res.reports if "slow_memcpy" in r.dispatch], lines
    if copies:
        assert sum(len(r.copy.pieces) for r in copies) == len(order), lines
        assert len(copies) == -(-len(order) // MAX_PIECES), lines


def test_a_concatenation_that_is_a_piece_of_the_next_one(tmp_path):
    """y = cat(a, b) feeds a conv and is itself a piece of z = cat(y, c): merging y's chain
    replaces the value z's chain reads, which the merge must read afresh (it once kept the
    replaced value and crashed in building z's dispatch: a YOLO-style neck at 640 px)."""
    torch = pytest.importorskip("torch")
    from convc.compiler.pytorch import export_mlir

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Conv2d(8, 16, 1), torch.nn.Conv2d(8, 8, 3, 1, 1)
            self.c, self.d = torch.nn.Conv2d(24, 8, 1), torch.nn.Conv2d(32, 16, 1)

        def forward(self, x):
            y = torch.cat([self.a(x), self.b(x)], 1)
            z = torch.cat([y, self.c(torch.relu(y))], 1)
            return self.d(z) + self.c(y).sum(1, keepdim=True)

    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(2, 8, 6, 10)
    (tmp_path / "m.mlir").write_text(export_mlir(net, (x,)))
    res = compile_file(str(tmp_path / "m.mlir"), str(tmp_path / "m.vmfb"), CompileOptions(target="llvm-cpu"))
    copies = res.by_kind()["copies"]
    assert len(copies) >= 2 and all(r.path == "convc" for r in copies), [r.line() for r in copies]
    with torch.no_grad():
        ref = net(x).numpy()
    got = LoadedModule(str(tmp_path / "m.vmfb"), "local-task").call("main", [(x.numpy(), "f32")])
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
