// convc-lower-kernel: the direct grouped/depthwise kernel (passes/lower/common/direct_grouped.py).

// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule,convc-lower-kernel --target sm_90a %inputs/grouped_f32.flow.mlir | FileCheck %s

// Depthwise (filter [R, S, C]): per tap one input and one filter vector, one fma.
// CHECK-LABEL: hal.executable.source private @conv_n2h16w16c32_f32r3s3_g32hwf_st1x1_dl1x1_p1x1x1x1_f32_add_bias_relu
// CHECK: hal.return %c16
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>)
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>)
// CHECK: vector.load {{.*}} : memref<288xf32>, vector<4xf32>
// CHECK: vector.load {{.*}} : memref<16384xf32>, vector<4xf32>
// CHECK: math.fma {{.*}} : vector<4xf32>
// The shared epilogue: the bias slice, relu.
// CHECK: vector.load {{.*}} : memref<32xf32>, vector<4xf32>
// CHECK: arith.maximumf

// Grouped (filter [F, R, S, C/G]): 4 output channels per item, each a dot product over
// 4-channel input vectors, reduced at the end.
// CHECK-LABEL: hal.executable.source private @conv_n2h16w16c32_f64r3s3_g4fhwc_st1x1_dl1x1_p1x1x1x1_f32_add_bias
// CHECK: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %c4
// CHECK-COUNT-4: math.fma {{.*}} : vector<4xf32>
// CHECK-COUNT-4: vector.reduction <add>
// CHECK: vector.from_elements

// Depthwise with a channel multiplier (2): each output channel reads input channel f / 2.
// CHECK-LABEL: hal.executable.source private @conv_n2h16w16c64_f128r3s3_g64hwf_st2x2_dl1x1_p1x1x1x1_f32_add_bias
// CHECK: vector.load {{.*}} : memref<1152xf32>, vector<4xf32>
// CHECK-COUNT-4: vector.load {{.*}} : memref<32768xf32>, vector<1xf32>
// CHECK: math.fma
