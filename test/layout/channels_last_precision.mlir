// convc-channels-last with --precision f16: every f32 conv reads f16 activations and filters,
// the depthwise and grouped ones too (f32 accumulation and output), the pad re-created on the
// demoted activation.

// RUN: convc-opt --pass=convc-channels-last --precision f16 %s | FileCheck %s

// CHECK-LABEL: func.func @depthwise
// CHECK: } : tensor<2x6x6x8xf16> to tensor<2x8x8x8xf16>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x8x8xf16>, tensor<3x3x8xf16>) outs(%{{.*}} : tensor<2x6x6x8xf32>)
func.func @depthwise(%x: tensor<2x8x6x6xf32>, %w: tensor<8x3x3xf32>) -> tensor<2x8x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x8x6x6xf32> to tensor<2x8x8x8xf32>
  %e = tensor.empty() : tensor<2x8x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
       ins(%p, %w : tensor<2x8x8x8xf32>, tensor<8x3x3xf32>) outs(%acc : tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  return %y : tensor<2x8x6x6xf32>
}

// CHECK-LABEL: func.func @grouped
// CHECK: } : tensor<2x6x6x2x4xf16> to tensor<2x8x8x2x4xf16>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x8x2x4xf16>, tensor<3x3x4x2x8xf16>) outs(%{{.*}} : tensor<2x6x6x2x8xf32>) attrs =  {convc.grouped_conv}
// CHECK: arith.extf
// CHECK: arith.extf
func.func @grouped(%x: tensor<2x8x6x6xf32>, %w: tensor<2x8x4x3x3xf32>) -> tensor<2x16x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x8x6x6xf32> to tensor<2x8x8x8xf32>
  %x5 = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 8, 8] : tensor<2x8x8x8xf32> into tensor<2x2x4x8x8xf32>
  %e = tensor.empty() : tensor<2x2x8x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x8x6x6xf32>) -> tensor<2x2x8x6x6xf32>
  %y5 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
        ins(%x5, %w : tensor<2x2x4x8x8xf32>, tensor<2x8x4x3x3xf32>) outs(%acc : tensor<2x2x8x6x6xf32>) -> tensor<2x2x8x6x6xf32>
  %y = tensor.collapse_shape %y5 [[0], [1, 2], [3], [4]] : tensor<2x2x8x6x6xf32> into tensor<2x16x6x6xf32>
  return %y : tensor<2x16x6x6xf32>
}
