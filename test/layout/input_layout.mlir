// convc-input-layout with input_layout=nhwc is driven by the driver's options; convc-opt runs it
// with the default (nchw), which leaves the module as it is.
// RUN: convc-opt --pass=convc-input-layout %s | FileCheck %s

// CHECK-LABEL: util.func public @main
// CHECK: hal.tensor.import %arg0 : !hal.buffer_view -> tensor<2x3x8x8xf32>
// CHECK-NOT: linalg.transpose
util.func public @main(%arg0: !hal.buffer_view) -> !hal.buffer_view {
  %0 = hal.tensor.import %arg0 : !hal.buffer_view -> tensor<2x3x8x8xf32>
  %1 = hal.tensor.export %0 : tensor<2x3x8x8xf32> -> !hal.buffer_view
  util.return %1 : !hal.buffer_view
}

// With nhwc the import is declared [N, H, W, C] and transposed back to the model's NCHW.
// RUN: convc-opt --pass=convc-input-layout --input-layout=nhwc %s | FileCheck %s --check-prefix=NHWC
// NHWC-LABEL: util.func public @main
// NHWC: %[[X:.*]] = hal.tensor.import %arg0 : !hal.buffer_view -> tensor<2x8x8x3xf32>
// NHWC: linalg.transpose ins(%[[X]] : tensor<2x8x8x3xf32>) outs(%{{.*}} : tensor<2x3x8x8xf32>) permutation = [0, 3, 1, 2]
// NHWC: hal.tensor.export
