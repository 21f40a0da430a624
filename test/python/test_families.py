"""The sanitizers' bundle (tools/families.py): every kernel family and variant flag the planner
can produce on sm_90a is still produced for its layer and compiles (a variant the planner
stopped producing fails here, not silently on the GPU)."""

from convc.passes.schedule import Schedule
from convc.tools.families import VARIANTS, families_bundle


def test_every_variant_compiles_with_its_schedule(tmp_path):
    m = families_bundle(str(tmp_path), "sm_90a")
    assert [e["layer"]["name"] for e in m["layers"]] == [v.name for v in VARIANTS]
    for v, e in zip(VARIANTS, m["layers"]):
        assert e["ok"], e.get("error")
        assert e["path"] == "convc", e["dispatches"]
        assert v.wants(Schedule.from_dict(e["schedule"])), (v.name, e["schedule"])
