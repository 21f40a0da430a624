// convc-match-conv reads each conv dispatch into a ConvProblem (one CHECK-SAME per field).

// RUN: convc-opt --pass=convc-match-conv %inputs/padded_3x3_bias_relu.flow.mlir | FileCheck %s --check-prefix=PAD
// PAD-LABEL: flow.executable private @main_dispatch_0
// PAD-SAME: C = 16 : i64, F = 24 : i64, H = 9 : i64, N = 2 : i64, R = 3 : i64, S = 3 : i64, W = 7 : i64
// PAD-SAME: dtype = "f16"
// PAD-SAME: epilogue = [{broadcast = "channel", dtype = "f16", op = "add", operand = 2 : i64}, {broadcast = "", dtype = "f32", op = "max0", operand = -1 : i64}, {broadcast = "", dtype = "f16", op = "cast", operand = -1 : i64}]
// PAD-SAME: out_dtype = "f16", pad = [1, 1, 1, 1], stride = [1, 1]

// RUN: convc-opt --pass=convc-match-conv %inputs/valid_strided_dilated_f32.flow.mlir | FileCheck %s --check-prefix=VALID
// VALID-LABEL: flow.executable private @main_dispatch_0
// VALID-SAME: C = 8 : i64, F = 16 : i64, H = 11 : i64, N = 2 : i64, R = 3 : i64, S = 3 : i64, W = 13 : i64
// VALID-SAME: dilation = [1, 2]
// VALID-SAME: epilogue = []
// VALID-SAME: out_dtype = "f32", pad = [0, 0, 0, 0], stride = [2, 1]

// Asymmetric padding, a residual read and bf16; N = 1 is folded away by IREE.
// RUN: convc-opt --pass=convc-match-conv %inputs/asym_pad_residual_bf16.flow.mlir | FileCheck %s --check-prefix=ASYM
// ASYM-LABEL: flow.executable private @main_dispatch_0
// ASYM-SAME: C = 16 : i64, F = 32 : i64, H = 8 : i64, N = 1 : i64
// ASYM-SAME: dtype = "bf16"
// ASYM-SAME: {broadcast = "full", dtype = "bf16", op = "add", operand = 3 : i64}
// ASYM-SAME: pad = [0, 0, 1, 1]

// IREE turns 1x1 convs into GEMM-form contractions; they are 1x1 convs with M = N*H*W.
// RUN: convc-opt --pass=convc-match-conv %inputs/gemm_form_1x1.flow.mlir | FileCheck %s --check-prefix=GEMM
// GEMM-LABEL: flow.executable private @main_dispatch_0
// GEMM-SAME: C = 32 : i64, F = 64 : i64, H = 128 : i64, N = 1 : i64, R = 1 : i64, S = 1 : i64, W = 1 : i64

// A strided 1x1 conv reads its input through a strided load.
// RUN: convc-opt --pass=convc-match-conv %inputs/strided_1x1.flow.mlir | FileCheck %s --check-prefix=S2
// S2-LABEL: flow.executable private @main_dispatch_0
// S2-SAME: C = 32 : i64, F = 64 : i64, H = 8 : i64, N = 2 : i64, R = 1 : i64, S = 1 : i64, W = 8 : i64
// S2-SAME: stride = [2, 2]
