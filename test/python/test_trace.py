"""The per-phase trace build (CONVC_TRACE=1): stamps only when asked, records laid out as the
device-side reader expects."""

import glob
import os

from conftest import compile_layer
from convc.passes.trace_events import EVENTS, RECORD_BYTES
from convc.tools.layers import load_suite


def _ptx(tmp_path, sub, monkeypatch, trace: bool):
    if trace:
        monkeypatch.setenv("CONVC_TRACE", "1")
    else:
        monkeypatch.delenv("CONVC_TRACE", raising=False)
    layer = next(L for L in load_suite() if L.name == "r50_l3_1x1_256_1024")
    _, res = compile_layer(tmp_path / sub, layer, target="sm_90a", dump_dir=str(tmp_path / sub / "d"))
    assert res.reports[0].schedule.kernel.startswith("sm90_ws")
    return "".join(open(f).read() for f in glob.glob(str(tmp_path / sub / "d" / "binaries" / "*.ptx")))


def test_record_fits():
    assert len(EVENTS) * 8 <= RECORD_BYTES and len(set(EVENTS)) == len(EVENTS)


def test_trace_only_when_asked(tmp_path, monkeypatch):
    os.makedirs(tmp_path / "a"); os.makedirs(tmp_path / "b")
    assert "%globaltimer" not in _ptx(tmp_path, "a", monkeypatch, False)
    assert "%globaltimer" in _ptx(tmp_path, "b", monkeypatch, True)
