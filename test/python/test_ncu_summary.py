"""convc.tools.ncu_summary on small tables in the layout ncu_tables writes (details: one row per
metric; source: a kernel-name line, then one row per SASS line with stall-sample columns)."""

import csv
import io

from convc.tools.ncu_summary import main, opcode, read_details, read_source, summarize_source


def _details() -> str:
    f = io.StringIO()
    w = csv.DictWriter(f, ["ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
    w.writeheader()
    for name, unit, value in (("Duration", "us", "24.83"), ("Issue Slots Busy", "%", "24.76"), ("Duration", "us", "1")):
        w.writerow({"ID": 0, "Kernel Name": "conv_k", "Section Name": "s", "Metric Name": name, "Metric Unit": unit,
                    "Metric Value": value})
    return f.getvalue()


def _source() -> str:
    f = io.StringIO()
    f.write('"Kernel Name","conv_k",\n')
    cols = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed", "stall_wait",
            "stall_mio", "stall_wait (Not Issued)"]
    w = csv.DictWriter(f, cols)
    w.writeheader()
    for i, (src, n, ex, wait, mio) in enumerate((("FFMA R1, R2, R3, R4", 3, "1,000", 3, 0),
                                                 ("@!P0 BRA 0x10", 5, "10", 1, 4),
                                                 ("MUFU.EX2 R1, R2", 2, "500", 0, 2))):
        w.writerow({"Address": hex(i * 16), "Source": src, "Warp Stall Sampling (All Samples)": n,
                    "Instructions Executed": ex, "stall_wait": wait, "stall_mio": mio, "stall_wait (Not Issued)": 9})
    return f.getvalue()


def test_reads_the_tables():
    kernel, metrics = read_details(_details())
    assert kernel == "conv_k" and metrics["Duration"] == "24.83 us" and metrics["Issue Slots Busy"] == "24.76 %"
    sass = read_source(_source())
    assert [s.opcode for s in sass] == ["FFMA", "BRA", "MUFU.EX2"] and opcode("@!P0 BRA 0x10") == "BRA"
    assert [s.executed for s in sass] == [1000, 10, 500] and sass[1].stalls == {"wait": 1, "mio": 4}
    text = "\n".join(summarize_source(sass, block=2))
    assert "samples 10" in text and "wait 40%" in text and "mio 60%" in text and "BRA 50%" in text
    assert "0-1" in text and "80.0%" in text and "2-2" in text


def test_cli_on_a_directory(tmp_path, capsys):
    (tmp_path / "k1.details.csv").write_text(_details())
    (tmp_path / "k1.source.csv").write_text(_source())
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "== k1: conv_k" in out and "Duration" in out and "stalls:" in out
    assert main([str(tmp_path / "none")]) == 1
