// Epilogues beyond bias/residual/relu/casts become one "program" step per generic: its ops by
// name and attributes over numbered values (0: the conv value, 1..L: the step's loads, then
// one per op). Inlined dense constants are hoisted into kernel operands (convc.constants);
// splat ones and scalars from the function become arith.constant instructions.

// exp(-x) (once declined: "epilogue op arith.negf not supported").
// RUN: convc-opt --pass=convc-match-conv %inputs/exp_neg.flow.mlir | FileCheck %s --check-prefix=EXP
// EXP: epilogue = [{dtype = "f16", loads = [], op = "program", program = [{args = [0], attrs = {}, dtype = "f32", op = "arith.negf"}, {args = [1], attrs = {}, dtype = "f32", op = "math.exp"}, {args = [2], attrs = {}, dtype = "f16", op = "arith.truncf"}]}]
// EXP-SAME: num_operands = 2 : i64

// BatchNorm: two per-channel dispatch operands, a dense constant IREE inlined (hoisted as
// operand 4, after the dispatch's four) and a splat IREE folded into a function scalar.
// RUN: convc-opt --pass=convc-match-conv %inputs/batchnorm_consts.flow.mlir | FileCheck %s --check-prefix=BN
// BN: convc.constants = [dense<[0.591394365, {{.*}}, 1.16657937]> : tensor<24xf32>]
// BN-SAME: epilogue = [{dtype = "f16", loads = [{broadcast = "channel", dtype = "f32", operand = 2 : i64}, {broadcast = "channel", dtype = "f16", operand = 3 : i64}, {broadcast = "channel", dtype = "f32", operand = 4 : i64}], op = "program", program = [
// BN-SAME: {args = [0, 1], attrs = {}, dtype = "f32", op = "arith.subf"}, {args = [4, 3], attrs = {}, dtype = "f32", op = "arith.mulf"}, {args = [2], attrs = {}, dtype = "f32", op = "arith.extf"}, {args = [5, 6], attrs = {}, dtype = "f32", op = "arith.mulf"}, {args = [], attrs = {value = "0.964486896 : f32"}, dtype = "f32", op = "arith.constant"}, {args = [7, 8], attrs = {}, dtype = "f32", op = "arith.addf"}, {args = [9], attrs = {}, dtype = "f16", op = "arith.truncf"}]}]
// BN-SAME: num_operands = 5 : i64

// The splice pass passes the hoisted constant as the dispatch's last operand, loaded from an
// immutable global IREE never inlines (uploaded once at module load, not on every call).
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel,convc-splice-dispatch --target sm_90a %inputs/batchnorm_consts.flow.mlir | FileCheck %s --check-prefix=SPLICE
// SPLICE: util.global private @[[G:__convc_constant_0]] <inlining_policy = #util.inline.never> = dense<[0.591394365, {{.*}}]> : tensor<24xf32>
// SPLICE: hal.executable.source private @[[K:conv_n2h9w7c16_f24r3s3_st1x1_dl1x1_p1x1x1x1_f16_fx[0-9a-f]{8}]]
// SPLICE-NOT: arith.constant dense<[0.591394365
// SPLICE: %[[C:.+]] = util.global.load immutable @[[G]] : tensor<24xf32>
// SPLICE-NEXT: flow.dispatch @[[K]]::@[[K]](%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[C]]) : (tensor<2x9x7x16xf16>, tensor<24x3x3x16xf16>, tensor<24xf32>, tensor<24xf16>, tensor<24xf32>) -> (tensor<2x9x7x24xf16>, tensor<128xi8>)

// Leaky ReLU: cmpf keeps its predicate (ugt = 9), select reads the comparison.
// RUN: convc-opt --pass=convc-match-conv %inputs/leaky_relu.flow.mlir | FileCheck %s --check-prefix=LEAKY
// LEAKY: program = [{args = [], attrs = {value = "0.000000e+00 : f32"}, dtype = "f32", op = "arith.constant"}, {args = [0, 1], attrs = {predicate = "9 : i64"}, dtype = "i1", op = "arith.cmpf"}, {args = [], attrs = {value = "0.00999999977 : f32"}, dtype = "f32", op = "arith.constant"}, {args = [0, 3], attrs = {}, dtype = "f32", op = "arith.mulf"}, {args = [2, 0, 4], attrs = {}, dtype = "f32", op = "arith.select"}, {args = [5], attrs = {}, dtype = "f16", op = "arith.truncf"}]

// Bias + residual + SiLU: a DAG (the sum feeds negf and divf); the residual is a full load.
// RUN: convc-opt --pass=convc-match-conv %inputs/residual_silu.flow.mlir | FileCheck %s --check-prefix=SILU
// SILU: loads = [{broadcast = "channel", dtype = "f16", operand = 2 : i64}, {broadcast = "full", dtype = "f16", operand = 3 : i64}]
// SILU-SAME: {args = [5, 4], attrs = {}, dtype = "f32", op = "arith.addf"}, {args = [6], attrs = {}, dtype = "f32", op = "arith.negf"}
// SILU-SAME: {args = [6, 10], attrs = {}, dtype = "f32", op = "arith.divf"}

// RUN: convc-opt --pass=convc-match-conv --split-input-file %inputs/epilogue_cases.flow.mlir | FileCheck %s --check-prefix=CASES
// A splat tensor read per channel is folded into a scalar constant.
// CASES: program = [{args = [], attrs = {value = "2.000000e+00 : f32"}, dtype = "f32", op = "arith.constant"}, {args = [0, 1], attrs = {}, dtype = "f32", op = "arith.mulf"}
// The conv value read through two operands of one generic.
// CASES: program = [{args = [0, 0], attrs = {}, dtype = "f32", op = "arith.mulf"}
// What cannot be expressed declines, naming the op and why.
// CASES: convc.decline = "epilogue op arith.fptosi computes on i64: only f16/bf16/f32 and i8/i16/i32 values (and comparison results) are fused"
// CASES: convc.decline = "epilogue op linalg.index reads the iteration index: only math on each output element is fused"
// CASES: convc.decline = "epilogue op arith.extf computes on f64: only f16/bf16/f32 and i8/i16/i32 values (and comparison results) are fused"
// CASES: convc.decline = "epilogue op arith.addf reads the output buffer's previous value"
// CASES: convc.decline = "epilogue is not elementwise (it reduces)"
// select(x > 0, x, 0) keeps relu's fixed encoding; select(x < 0, x, 0) is min(x, 0), a program.
// CASES: epilogue = [{broadcast = "", dtype = "f32", op = "max0", operand = -1 : i64}, {broadcast = "", dtype = "f16", op = "cast", operand = -1 : i64}]
// CASES: program = [{args = [], attrs = {value = "0.000000e+00 : f32"}, dtype = "f32", op = "arith.constant"}, {args = [0, 1], attrs = {predicate = "4 : i64"}, dtype = "i1", op = "arith.cmpf"}
