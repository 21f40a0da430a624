// f32 convs are taken; until the tensor-core kernels read f32 operands they run exact f32 math
// on the portable kernel, and the reason says which precision mode asked for what.

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/f32_conv.flow.mlir | FileCheck %s
// CHECK: convc.problem = {{.*}}dtype = "f32"
// CHECK: convc.schedule = {{.*}}kernel = "portable_igemm"
// CHECK-SAME: reason = "portable implicit GEMM (f32 inputs: no TF32 tensor-core kernel yet, exact f32 math instead)"

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule --precision fp32 %inputs/f32_conv.flow.mlir | FileCheck %s --check-prefix=FP32
// FP32: reason = "portable implicit GEMM (f32 inputs, --precision fp32: exact f32 math)"
