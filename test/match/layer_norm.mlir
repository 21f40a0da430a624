// convc-match-conv and convc-plan-schedule on a channels-last LayerNorm (ONNX: conv -> NHWC
// transpose -> LayerNormalization(axis -1) -> transpose -> 1x1 conv; f32, 24 channels). IREE
// makes two dispatches of it, each a reduction of every pixel's channels and an elementwise
// generic reading it per pixel: maps with a row reduction (`row_combine`, its per-element
// program `row_reduce`: none for the mean, the square for the variance) on the row kernel.
// RUN: convc-opt --pass=convc-match-conv,convc-plan-schedule %inputs/layer_norm_f32.flow.mlir | FileCheck %s

// CHECK-LABEL: flow.executable private @ln$async_dispatch_2
// CHECK-SAME: broadcast = "row"
// CHECK-SAME: op = "arith.subf"
// CHECK-SAME: pool = "sum"
// CHECK-SAME: row_combine = "sum"
// CHECK-NOT: row_reduce
// CHECK-SAME: kernel = "row_map"
// CHECK-LABEL: flow.executable private @ln$async_dispatch_3
// CHECK-SAME: broadcast = "row"
// CHECK-SAME: math.rsqrt
// CHECK-SAME: row_combine = "sum", row_reduce = [{args = [0, 0], attrs = {}, dtype = "f32", op = "arith.mulf"}]
// CHECK-SAME: kernel = "row_map"
// CHECK-SAME: map reading a sum over each row's 24 channels
