// convc-channels-last on the grouped forms PyTorch/ONNX imports produce: a depthwise NCHW conv
// becomes linalg.depthwise_conv_2d_nhwc_hwc (filter [R, S, C]); a grouped one on
// [N, G, C/G, H, W] views becomes a grouped linalg.generic (marked convc.grouped_conv) on
// [N, H, W, G, C/G] views, the pad re-created after the view (so IREE fuses it into the conv's
// dispatch), filter [R, S, C/G, G, F/G]; with one input channel per group and a multiplier, hwcm.

// RUN: convc-opt --pass=convc-channels-last %s | FileCheck %s

// CHECK-LABEL: func.func @depthwise
// CHECK: linalg.transpose ins(%arg1 : tensor<8x3x3xf32>) {{.*}} permutation = [1, 2, 0]
// CHECK: linalg.transpose ins(%arg0 : tensor<2x8x6x6xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: tensor.pad {{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} -> tensor<2x6x6x8xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
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
// CHECK: linalg.transpose ins(%arg1 : tensor<2x8x4x3x3xf32>) {{.*}} permutation = [3, 4, 2, 0, 1]
// CHECK: linalg.transpose ins(%arg0 : tensor<2x8x6x6xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK-NEXT: util.optimization_barrier
// CHECK-NEXT: tensor.expand_shape {{.*}} {{\[}}[0], [1], [2], [3, 4]] {{.*}} into tensor<2x6x6x2x4xf32>
// CHECK-NEXT: tensor.pad {{.*}} low[0, 1, 1, 0, 0] high[0, 1, 1, 0, 0]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x8x2x4xf32>, tensor<3x3x4x2x8xf32>) outs(%{{.*}} : tensor<2x6x6x2x8xf32>) attrs =  {convc.grouped_conv}
// CHECK: tensor.collapse_shape {{.*}} into tensor<2x6x6x16xf32>
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
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

// CHECK-LABEL: func.func @multiplier
// CHECK: linalg.transpose {{.*}} permutation = [2, 3, 0, 1]
// CHECK: linalg.depthwise_conv_2d_nhwc_hwcm {{.*}} -> tensor<2x3x3x4x2xf32>
func.func @multiplier(%x: tensor<2x4x6x6xf32>, %w: tensor<4x2x1x3x3xf32>) -> tensor<2x8x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x4x6x6xf32> to tensor<2x4x7x7xf32>
  %x5 = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [2, 4, 1, 7, 7] : tensor<2x4x7x7xf32> into tensor<2x4x1x7x7xf32>
  %e = tensor.empty() : tensor<2x4x2x3x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x2x3x3xf32>) -> tensor<2x4x2x3x3xf32>
  %y5 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
        ins(%x5, %w : tensor<2x4x1x7x7xf32>, tensor<4x2x1x3x3xf32>) outs(%acc : tensor<2x4x2x3x3xf32>) -> tensor<2x4x2x3x3xf32>
  %y = tensor.collapse_shape %y5 [[0], [1, 2], [3], [4]] : tensor<2x4x2x3x3xf32> into tensor<2x8x3x3xf32>
  return %y : tensor<2x8x3x3xf32>
}

// The PyTorch import collapses a grouped conv's [N, G, F/G, H, W] result straight back to NCHW
// before its epilogue (a BatchNorm shift read at (0, d1, 0, 0) from [1, F, 1, 1]): the
// expand/collapse pair folds away, so the back-transpose sinks through the epilogue to the
// function's result (no transpose between the conv and its epilogue), and the broadcast
// operand is read as [F] at (d3), a map IREE can move the conv's result view through.
// CHECK-LABEL: func.func @grouped_then_epilogue
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6x6x2x8xf32>) attrs =  {convc.grouped_conv}
// CHECK: %[[C:.*]] = tensor.collapse_shape {{.*}} into tensor<2x6x6x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : tensor<1x16x1x1xf32> into tensor<16xf32>
// CHECK: linalg.generic {{.*}} ins(%[[C]], %[[B]] : tensor<2x6x6x16xf32>, tensor<16xf32>)
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// CHECK-NOT: tensor.expand_shape {{.*}} into tensor<2x2x8x6x6xf32>
func.func @grouped_then_epilogue(%x: tensor<2x8x6x6xf32>, %w: tensor<2x8x4x3x3xf32>, %b: tensor<1x16x1x1xf32>) -> tensor<2x16x6x6xf32> {
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
  %e2 = tensor.empty() : tensor<2x16x6x6xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y, %b : tensor<2x16x6x6xf32>, tensor<1x16x1x1xf32>) outs(%e2 : tensor<2x16x6x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x16x6x6xf32>
  return %z : tensor<2x16x6x6xf32>
}

// A channel shuffle between two convs (ShuffleNet: view as [N, G, C/G, H, W], swap G and C/G,
// view back) happens on the channels-last tensor ([N, H, W, G, C/G], swap the last two): no
// transpose back to NCHW and forth; a barrier before it keeps IREE from fusing the
// permutation into the grouped conv's epilogue (a kernel writes its channels in order).
// CHECK-LABEL: func.func @shuffle_between_convs
// CHECK: %[[G:.*]] = linalg.generic {{.*}} attrs =  {convc.grouped_conv}
// CHECK: %[[B:.*]] = util.optimization_barrier %[[G]]
// CHECK-NEXT: tensor.collapse_shape %[[B]] {{.*}} into tensor<2x6x6x16xf32>
// CHECK-NEXT: tensor.expand_shape {{.*}} into tensor<2x6x6x2x8xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 1, 2, 4, 3]
// CHECK-NOT: permutation = [0, 3, 1, 2]
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// CHECK-NOT: linalg.transpose
func.func @shuffle_between_convs(%x: tensor<2x8x6x6xf32>, %w: tensor<2x8x4x3x3xf32>, %dw: tensor<16x3x3xf32>) -> tensor<2x16x4x4xf32> {
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
  %s5 = tensor.expand_shape %y [[0], [1, 2], [3], [4]] output_shape [2, 2, 8, 6, 6] : tensor<2x16x6x6xf32> into tensor<2x2x8x6x6xf32>
  %se = tensor.empty() : tensor<2x8x2x6x6xf32>
  %st = linalg.transpose ins(%s5 : tensor<2x2x8x6x6xf32>) outs(%se : tensor<2x8x2x6x6xf32>) permutation = [0, 2, 1, 3, 4]
  %s = tensor.collapse_shape %st [[0], [1, 2], [3], [4]] : tensor<2x8x2x6x6xf32> into tensor<2x16x6x6xf32>
  %e2 = tensor.empty() : tensor<2x16x4x4xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32>
  %z = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
       ins(%s, %dw : tensor<2x16x6x6xf32>, tensor<16x3x3xf32>) outs(%acc2 : tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32>
  return %z : tensor<2x16x4x4xf32>
}
