"""convc: implicit-GEMM convolution kernels spliced into IREE dispatches."""

__version__ = "0.1.0"
