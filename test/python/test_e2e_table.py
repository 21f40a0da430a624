"""convc-e2e's table pairs like with like: convc per call over PyTorch synchronized after every
call, convc pipelined over PyTorch back to back."""

from convc.tools.e2e import table


def test_table_pairs_per_call_and_pipelined():
    row = {"name": "m_b32", "correct": {"convc": True},
           "convc_breakdown": {"kernels_us": 500.0, "conv_launches": 40, "other_launches": 10},
           "convc_benchmark_module": {"median_ms": 0.6}, "convc_benchmark_module_chained": {"median_ms": 0.52},
           "torch_compile_reduce_overhead_us": 800.0, "torch_compile_reduce_overhead_synchronized_us": 1000.0,
           "torch_reduce_overhead_profile": {"kernels": 90, "kernel_us": 700.0}}
    line = table({"cases": [row]}).splitlines()[-1]
    assert line == "| m_b32 | 50 | 500 | 600 / 520 | 90 | 700 | 1000 / 800 | 0.60 / 0.65 | yes |"


def test_table_marks_missing_numbers():
    line = table({"cases": [{"name": "x", "convc_us": 300.0}]}).splitlines()[-1]
    assert line == "| x | - | - | 300 / - | - | - | - / - | - / - | NO |"
