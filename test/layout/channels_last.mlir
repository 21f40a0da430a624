// convc-channels-last: NCHW convs and pools become NHWC x FHWC ones; the back-transposes
// sink through elementwise ops (BatchNorm, relu, residual add) and channel concats until
// they cancel, so only the model's input and output keep a transpose.

// RUN: convc-opt --pass=convc-channels-last %s | FileCheck %s

// CHECK-LABEL: func.func @block
// The input: one transpose to NHWC, the pad re-created in NHWC.
// CHECK: linalg.transpose ins(%arg0 : tensor<2x8x10x10xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: tensor.pad {{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.transpose ins(%arg1 : tensor<16x8x3x3xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} -> tensor<2x10x10x16xf32>
// The import's bias init is added after the conv, channels-last.
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<2x10x10x16xf32>, tensor<2x10x10x16xf32>)
// BatchNorm + relu run on NHWC values with per-channel operands indexed by the last dim.
// CHECK: linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[CH:map[0-9]*]], #[[ID]]]
// CHECK: linalg.pooling_nhwc_max
// CHECK: linalg.conv_2d_nhwc_fhwc
// CHECK: tensor.concat dim(3)
// The only back-transpose: at the function's result.
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// CHECK-NEXT: return
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @block(%x: tensor<2x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>,
                 %scale: tensor<1x16x1x1xf32>, %w2: tensor<16x16x1x1xf32>) -> tensor<2x32x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x8x10x10xf32> to tensor<2x8x12x12xf32>
  %e = tensor.empty() : tensor<2x16x10x10xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<16xf32>) outs(%e : tensor<2x16x10x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x16x10x10xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<2x8x12x12xf32>, tensor<16x8x3x3xf32>) outs(%init : tensor<2x16x10x10xf32>) -> tensor<2x16x10x10xf32>
  %bn = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (0, c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %scale : tensor<2x16x10x10xf32>, tensor<1x16x1x1xf32>) outs(%e : tensor<2x16x10x10xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x16x10x10xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x16x5x5xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x16x5x5xf32>) -> tensor<2x16x5x5xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%bn, %win : tensor<2x16x10x10xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x16x5x5xf32>) -> tensor<2x16x5x5xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x16x5x5xf32>) -> tensor<2x16x5x5xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%pool, %w2 : tensor<2x16x5x5xf32>, tensor<16x16x1x1xf32>) outs(%zf : tensor<2x16x5x5xf32>) -> tensor<2x16x5x5xf32>
  %cat = tensor.concat dim(1) %pool, %c2 : (tensor<2x16x5x5xf32>, tensor<2x16x5x5xf32>) -> tensor<2x32x5x5xf32>
  return %cat : tensor<2x32x5x5xf32>
}
