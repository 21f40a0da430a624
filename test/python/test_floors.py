"""tools/floors.py: a kernel's floor from the problem convc planned for it, and which kernels an
audit flags (20 us or more per launch below half their floor, or with no floor)."""

from convc.passes.copy_problem import CopyPiece, CopyProblem
from convc.passes.problem import ConvProblem, EpilogueStep
from convc.tools.floors import audit, copy_cost, flagged, problem_cost


def test_conv_cost_counts_every_operand_once():
    p = ConvProblem(N=2, H=8, W=8, C=64, F=32, R=3, S=3, pad=(1, 1, 1, 1), dtype="f16", out_dtype="f16",
                    epilogue=(EpilogueStep("add", "f16", operand=2, broadcast="channel"),
                              EpilogueStep("add", "f16", operand=3, broadcast="full")), num_operands=4)
    c = problem_cost(p)
    out = 2 * 8 * 8 * 32
    assert c["flops"] == 2 * out * 9 * 64
    assert c["bytes"] == 2 * (2 * 8 * 8 * 64 + 32 * 9 * 64 + out + 32 + out)
    assert c["kind"] == "conv"


def test_copy_cost_reads_and_writes_each_piece():
    pieces = (CopyPiece(0, (0, 0), (4, 8), (1, 1)), CopyPiece(1, (0, 8), (4, 8), (1, 1)))
    assert copy_cost(CopyProblem((4, 16), "f16", pieces))["bytes"] == 2 * 64 * 2


def test_audit_flags_slow_and_unknown_kernels():
    costs = {"fast": {"kind": "conv", "flops": 0, "bytes": 100e6, "dtype": "f16"},    # 25 us floor at 4 TB/s
             "slow": {"kind": "map", "flops": 0, "bytes": 100e6, "dtype": "f16"}}
    kernels = [{"name": "fast", "us": 60.0, "launches": 2}, {"name": "slow", "us": 60.0, "launches": 1},
               {"name": "iree_dispatch", "us": 30.0, "launches": 1}, {"name": "tiny", "us": 5.0, "launches": 1}]
    rows = audit(kernels, costs, 800.0, 4.0)
    assert [r["name"] for r in flagged(rows)] == ["slow", "iree_dispatch"]
    fast = next(r for r in rows if r["name"] == "fast")
    assert fast["floor_us"] == 25.0 and fast["share"] == round(25 / 30, 3) and fast["bound"] == "memory"


def test_concurrent_kernels_are_judged_with_their_group():
    """Two launches IREE ran side by side (a CUDA graph's parallel nodes): each one's CUPTI
    duration is the shared span, so the audit takes their floors together against the span."""
    costs = {"conv3x3": {"kind": "conv", "flops": 0, "bytes": 200e6, "dtype": "f16"},   # 50 us floor
             "skip1x1": {"kind": "conv", "flops": 0, "bytes": 40e6, "dtype": "f16"}}    # 10 us floor
    group = {"span_us": 72.0, "launches": {"conv3x3": 1, "skip1x1": 1}}
    kernels = [{"name": "conv3x3", "us": 56.0, "launches": 1, "concurrent": dict(group, **{"with": ["skip1x1"]})},
               {"name": "skip1x1", "us": 71.5, "launches": 1, "concurrent": dict(group, **{"with": ["conv3x3"]})}]
    rows = audit(kernels, costs, 800.0, 4.0)
    skip = next(r for r in rows if r["name"] == "skip1x1")
    assert skip["share"] == round(60 / 72, 3) and skip["share_basis"] == "concurrent group"
    assert skip["concurrent_with"] == ["conv3x3"] and not flagged(rows)


def test_breakdown_finds_overlapping_launches():
    from types import SimpleNamespace
    from convc.tools.gpu.e2e import _concurrent

    def ev(name, start, end):
        return SimpleNamespace(name=name, time_range=SimpleNamespace(start=start, end=end))

    evs = []
    for i in range(2):                   # two inferences: a then (b beside c) then d
        t = 1000 * i
        evs += [ev("a", t, t + 10), ev("b", t + 12, t + 60), ev("c", t + 15, t + 80), ev("d", t + 81, t + 90)]
    got = _concurrent(evs, 2)
    assert set(got) == {"b", "c"}
    assert got["b"] == {"with": ["c"], "span_us": 68.0, "launches": {"b": 1.0, "c": 1.0}}
