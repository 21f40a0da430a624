// convc-conv3d: 3-D convs as 2-D convs over views of the channels-last volume. A 1x3x3 conv
// (the spatial half of an R(2+1)D block) reads the frames [N*D, H, W, C] with its spatial pad
// behind a barrier (so that IREE fuses the pad into the conv's dispatch); a 3x1x1 conv (the
// temporal half) reads [N, D, H*W, C] as a 3x1 window with the depth pad as rows; a 3x3x3 conv
// reads a depth im2col: each tap's valid frames inserted into its channel slice of a zero fill
// (the first and last taps meet the depth padding), then a 3x3 window over 3*C channels with
// the filter's depth taps next to its channels. Each conv's NDHWC result goes back to NCDHW
// through a transpose that convc-channels-last sinks and cancels.

// RUN: convc-opt --pass=convc-conv3d %s | FileCheck %s
// RUN: convc-opt --pass=convc-conv3d,convc-channels-last %s | FileCheck %s --check-prefix=CL

// CHECK-LABEL: func.func @spatial
// CHECK: %[[X:.*]] = linalg.transpose ins(%arg0 : tensor<2x16x4x8x8xf32>) {{.*}} permutation = [0, 2, 3, 4, 1]
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2], [3], [4]] : tensor<2x4x8x8x16xf32> into tensor<8x8x8x16xf32>
// CHECK: %[[B:.*]] = util.optimization_barrier %[[V]]
// CHECK: %[[P:.*]] = tensor.pad %[[B]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.transpose ins(%arg1 : tensor<24x16x1x3x3xf32>) {{.*}} permutation = [0, 3, 4, 2, 1]
// CHECK: %[[Y:.*]] = linalg.conv_2d_nhwc_fhwc {{.*}} ins(%[[P]], %{{.*}} : tensor<8x10x10x16xf32>, tensor<24x3x3x16xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2], [3], [4]] {{.*}} : tensor<8x8x8x24xf32> into tensor<2x4x8x8x24xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 4, 1, 2, 3]
// CHECK-NOT: linalg.conv_3d
func.func @spatial(%x: tensor<2x16x4x8x8xf32>, %w: tensor<24x16x1x3x3xf32>) -> tensor<2x24x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 1, 1] high[0, 0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index, %e: index):
    tensor.yield %zero : f32
  } : tensor<2x16x4x8x8xf32> to tensor<2x16x4x10x10xf32>
  %e = tensor.empty() : tensor<2x24x4x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x24x4x8x8xf32>) -> tensor<2x24x4x8x8xf32>
  %y = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>}
       ins(%p, %w : tensor<2x16x4x10x10xf32>, tensor<24x16x1x3x3xf32>) outs(%acc : tensor<2x24x4x8x8xf32>) -> tensor<2x24x4x8x8xf32>
  return %y : tensor<2x24x4x8x8xf32>
}

// CHECK-LABEL: func.func @temporal
// CHECK: %[[V:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3], [4]] : tensor<2x4x8x8x16xf32> into tensor<2x4x64x16xf32>
// CHECK: %[[B:.*]] = util.optimization_barrier %[[V]]
// CHECK: %[[P:.*]] = tensor.pad %[[B]] low[0, 1, 0, 0] high[0, 1, 0, 0]
// CHECK: %[[Y:.*]] = linalg.conv_2d_nhwc_fhwc {{.*}} ins(%[[P]], %{{.*}} : tensor<2x6x64x16xf32>, tensor<24x3x1x16xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0], [1], [2, 3], [4]] {{.*}} : tensor<2x4x64x24xf32> into tensor<2x4x8x8x24xf32>
func.func @temporal(%x: tensor<2x16x4x8x8xf32>, %w: tensor<24x16x3x1x1xf32>) -> tensor<2x24x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 0, 0] high[0, 0, 1, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index, %e: index):
    tensor.yield %zero : f32
  } : tensor<2x16x4x8x8xf32> to tensor<2x16x6x8x8xf32>
  %e = tensor.empty() : tensor<2x24x4x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x24x4x8x8xf32>) -> tensor<2x24x4x8x8xf32>
  %y = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>}
       ins(%p, %w : tensor<2x16x6x8x8xf32>, tensor<24x16x3x1x1xf32>) outs(%acc : tensor<2x24x4x8x8xf32>) -> tensor<2x24x4x8x8xf32>
  return %y : tensor<2x24x4x8x8xf32>
}

// CHECK-LABEL: func.func @full
// CHECK: %[[X:.*]] = linalg.transpose ins(%arg0 : tensor<2x16x4x8x8xf32>)
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<2x4x8x8x48xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [2, 3, 8, 8, 16] [1, 1, 1, 1, 1]
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[S0]] into %[[Z]][0, 1, 0, 0, 0] [2, 3, 8, 8, 16] [1, 1, 1, 1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [2, 4, 8, 8, 16] [1, 1, 1, 1, 1]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[S1]] into %[[I0]][0, 0, 0, 0, 16] [2, 4, 8, 8, 16] [1, 1, 1, 1, 1]
// CHECK: %[[S2:.*]] = tensor.extract_slice %[[X]][0, 1, 0, 0, 0] [2, 3, 8, 8, 16] [1, 1, 1, 1, 1]
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[S2]] into %[[I1]][0, 0, 0, 0, 32] [2, 3, 8, 8, 16] [1, 1, 1, 1, 1]
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[I2]] {{\[}}[0, 1], [2], [3], [4]] : tensor<2x4x8x8x48xf32> into tensor<8x8x8x48xf32>
// CHECK: linalg.transpose ins(%arg1 : tensor<24x16x3x3x3xf32>) {{.*}} permutation = [0, 3, 4, 2, 1]
// CHECK: tensor.collapse_shape {{.*}} : tensor<24x3x3x3x16xf32> into tensor<24x3x3x48xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x10x10x48xf32>, tensor<24x3x3x48xf32>)
// CL-LABEL: func.func @full
// CL: linalg.transpose ins(%arg0 : tensor<2x16x4x8x8xf32>)
// CL: util.optimization_barrier
// CL: linalg.conv_2d_nhwc_fhwc
// CL: util.optimization_barrier
// CL: linalg.transpose {{.*}} permutation = [0, 4, 1, 2, 3]
// CL-NOT: linalg.transpose
func.func @full(%x: tensor<2x16x4x8x8xf32>, %w: tensor<24x16x3x3x3xf32>, %b: tensor<24xf32>) -> tensor<2x24x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1, 1] high[0, 0, 1, 1, 1] {
  ^bb0(%a: index, %b0: index, %c: index, %d: index, %e: index):
    tensor.yield %zero : f32
  } : tensor<2x16x4x8x8xf32> to tensor<2x16x6x10x10xf32>
  %e = tensor.empty() : tensor<2x24x4x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x24x4x8x8xf32>) -> tensor<2x24x4x8x8xf32>
  %y = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>}
       ins(%p, %w : tensor<2x16x6x10x10xf32>, tensor<24x16x3x3x3xf32>) outs(%acc : tensor<2x24x4x8x8xf32>) -> tensor<2x24x4x8x8xf32>
  %e2 = tensor.empty() : tensor<2x24x4x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, f, d, h, w) -> (n, f, d, h, w)>, affine_map<(n, f, d, h, w) -> (f)>,
                                        affine_map<(n, f, d, h, w) -> (n, f, d, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
       ins(%y, %b : tensor<2x24x4x8x8xf32>, tensor<24xf32>) outs(%e2 : tensor<2x24x4x8x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x24x4x8x8xf32>
  return %r : tensor<2x24x4x8x8xf32>
}
