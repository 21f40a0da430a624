"""convc-bench's host-side pieces: ratios/geomeans, the table, the chart, ncu CSV parsing."""

import json
import math

from convc.tools.gpu.bench_ncu import parse_ncu_csv
from convc.tools.gpu.bench_report import geomean, print_report, summarize
from convc.tools.bench import main as bench_main, parse_arguments

RESULTS = {
    "device": "test GPU", "date": "2026-11-21T00:00:00+00:00", "commit": "abc1234",
    "peak_tflops": 800.0, "bandwidth_tbs": 4.0, "timing_method": "synthetic",
    "layers": [
        {"name": "a", "group": "g", "convc_us": 10.0, "iree_us": 40.0, "cudnn_us": 5.0, "torch_eager_us": 20.0,
         "floor_us": 2.0, "correct": True, "convc_vs_cudnn": 2.0, "convc_vs_iree": 0.25,
         "convc_vs_torch_eager": 0.5, "convc_tflops": 100.0, "pct_of_floor": 20.0,
         "cudnn_fused_us": 12.5, "convc_vs_cudnn_fused": 0.8},
        {"name": "b", "group": "g", "convc_us": 8.0, "iree_us": 16.0, "cudnn_us": 16.0, "torch_eager_us": 32.0,
         "floor_us": 4.0, "correct": False, "convc_vs_cudnn": 0.5, "convc_vs_iree": 0.5,
         "convc_vs_torch_eager": 0.25, "convc_tflops": 400.0, "pct_of_floor": 50.0},
    ],
}


def test_geomean_ignores_missing_values():
    assert math.isclose(geomean([2.0, 0.5, None, float("nan")]), 1.0)
    assert math.isnan(geomean([None]))


def test_group_summary_and_table(capsys):
    s = summarize(RESULTS)["g"]
    assert math.isclose(s["convc_vs_cudnn"], 1.0) and math.isclose(s["convc_tflops"], 200.0)
    print_report(RESULTS)
    out = capsys.readouterr().out
    assert "FAIL" in out and "PASS" in out and "convc/cuDNN 1.00" in out
    # cuDNN's fused path exists for layer a only: its geomean covers that layer alone
    assert math.isclose(s["convc_vs_cudnn_fused"], 0.8) and "convc/cuDNN-fused 0.80" in out


def test_report_command_writes_a_chart(tmp_path):
    res = tmp_path / "bench.json"
    res.write_text(json.dumps(RESULTS))
    png = tmp_path / "chart.png"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert bench_main(parse_arguments(["report", str(res)])) == 0
        return
    assert bench_main(parse_arguments(["report", str(res), "--png", str(png)])) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_ncu_csv_parsing():
    text = ('==PROF== Connected\n"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","conv_x","gpu__time_duration.sum","ns","21,504"\n'
            '"1","conv_x","gpu__time_duration.sum","usecond","22.5"\n')
    assert parse_ncu_csv(text) == [21.504, 22.5]
