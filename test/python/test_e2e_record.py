"""How convc-e2e's record spreads cases over GPUs: cases sharing PyTorch's side stay together
(one measurement, reused through the GPU's cache), the load is balanced, manifest order kept."""

from convc.tools.gpu.e2e import _torch_key
import json

from convc.tools.gpu import e2e_record
from convc.tools.gpu.e2e_record import shards


def _case(name, model, batch, dtype="float16"):
    return {"name": name, "model": model, "seed": 0, "input_shape": [batch, 3, 224, 224], "dtype": dtype}


CASES = [_case("r50_b32", "resnet50", 32), _case("r50_b1", "resnet50", 1), _case("r50_nchw", "resnet50", 32),
         _case("r50_f32", "resnet50", 32, "float32"), _case("r50_dyn_b1", "resnet50", 1),
         _case("r50_dyn_b7", "resnet50", 7), _case("mnv2_b32", "mobilenet_v2", 32), _case("mnv2_b1", "mobilenet_v2", 1)]
BASELINES = ("eager", "compile", "reduce-overhead")


def test_shared_pytorch_side_stays_on_one_gpu():
    plan = shards(CASES, BASELINES, 4)
    where = {n: g for g, names in enumerate(plan) for n in names}
    assert where["r50_b32"] == where["r50_nchw"]
    assert where["r50_b1"] == where["r50_dyn_b1"]
    assert sorted(n for names in plan for n in names) == sorted(c["name"] for c in CASES)


def test_balanced_and_in_manifest_order():
    plan = shards(CASES, BASELINES, 3)
    keys = [len({_torch_key(c, BASELINES) for c in CASES if c["name"] in names}) for names in plan]
    assert max(keys) - min(keys) <= 1          # six distinct PyTorch sides over three GPUs: two each
    order = [c["name"] for c in CASES]
    for names in plan:
        assert names == sorted(names, key=order.index)


def test_one_gpu_takes_everything():
    assert shards(CASES, BASELINES, 1) == [[c["name"] for c in CASES]]


def test_cache_reuses_the_first_measurement(tmp_path, monkeypatch):
    import convc.tools.gpu.e2e as dev
    calls = []

    def fake(model, x, ref, iters, checks, times, row, which):
        calls.append(1)
        checks["torch_eager"] = 1e-3
        times["torch_eager_us"] = 100.0 + len(calls)
        row["torch_reduce_overhead_profile"] = {"kernels": 7}

    monkeypatch.setattr(dev, "_torch_baselines", fake)
    cache = str(tmp_path / "cache.json")
    first, second, other = ({}, {}, {}), ({}, {}, {}), ({}, {}, {})
    dev._cached_torch_baselines(None, None, None, 5, *first, BASELINES, CASES[0], cache)
    dev._cached_torch_baselines(None, None, None, 5, *second, BASELINES, CASES[2], cache)   # same PyTorch side
    dev._cached_torch_baselines(None, None, None, 5, *other, BASELINES, CASES[1], cache)    # another batch
    assert len(calls) == 2
    assert second[1] == first[1] and second[0] == first[0]
    assert second[2]["torch_baselines_from"] == "r50_b32" and second[2]["torch_reduce_overhead_profile"] == {"kernels": 7}
    assert other[1]["torch_eager_us"] == 102.0 and "torch_baselines_from" not in other[2]


def test_core_sets_are_disjoint_and_cover_the_cpus(monkeypatch):
    monkeypatch.setattr(e2e_record.os, "sched_getaffinity", lambda _: set(range(64)))
    sets = e2e_record.core_sets(4)
    assert [len(s) for s in sets] == [16, 16, 16, 16]
    assert set().union(*sets) == set(range(64)) and sum(map(len, sets)) == 64
    monkeypatch.setattr(e2e_record.os, "sched_getaffinity", lambda _: {0, 1})
    assert all(e2e_record.core_sets(4))          # fewer CPUs than workers: every worker gets some


def _case_dir(root, name, device="NVIDIA H200", correct=True):
    d = root / name
    d.mkdir(parents=True)
    (d / "e2e.json").write_text(json.dumps({"device": device, "torch": "2.11", "cases": [
        {"name": name, "correct": {"convc": correct}}]}))


def test_merge_takes_each_case_from_the_last_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(e2e_record, "write_result", lambda out, fields: captured.update(fields))
    captured = {}
    _case_dir(tmp_path / "a", "r50", correct=False)
    _case_dir(tmp_path / "a", "mnv2")
    _case_dir(tmp_path / "b", "r50")
    rc = e2e_record.main(["--merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "m")])
    assert rc == 0
    assert captured["device"] == "NVIDIA H200"
    assert sorted(c["name"] for c in captured["cases"]) == ["mnv2", "r50"]
    assert all(c["correct"]["convc"] for c in captured["cases"])


def test_merge_refuses_mixed_devices(tmp_path, capsys):
    _case_dir(tmp_path / "a", "r50")
    _case_dir(tmp_path / "b", "mnv2", device="NVIDIA H100")
    assert e2e_record.main(["--merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "m")]) == 1
    assert "different devices" in capsys.readouterr().err
