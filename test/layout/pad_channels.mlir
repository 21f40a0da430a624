// convc-pad-channels: a dense conv whose F is not a multiple of 8 computes F rounded up to a
// multiple of 8 with zero filters (the filter inserted into a zero tensor, the zero-fill
// accumulator re-made at the new width) and its result is sliced back to F channels; 1x1
// filters, F a multiple of 8 and non-NVIDIA targets are left alone.

// RUN: convc-opt --pass=convc-pad-channels %s | FileCheck %s
// RUN: convc-opt --pass=convc-pad-channels --target gfx942 %s | FileCheck %s --check-prefix=AMD

// CHECK-LABEL: func.func @rgb_out
// CHECK: %[[WZ:.*]] = linalg.fill ins(%{{.*}} : f16) outs(%{{.*}} : tensor<8x3x3x32xf16>)
// CHECK: %[[W:.*]] = tensor.insert_slice %arg1 into %[[WZ]][0, 0, 0, 0] [3, 3, 3, 32] [1, 1, 1, 1] : tensor<3x3x3x32xf16> into tensor<8x3x3x32xf16>
// CHECK: %[[C:.*]] = linalg.conv_2d_nhwc_fhwc {{.*}} ins(%arg0, %[[W]] : tensor<2x10x10x32xf16>, tensor<8x3x3x32xf16>) outs(%{{.*}} : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[C]][0, 0, 0, 0] [2, 8, 8, 3] [1, 1, 1, 1] : tensor<2x8x8x8xf32> to tensor<2x8x8x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]], %arg2 : tensor<2x8x8x3xf32>, tensor<3xf32>)
// CHECK-NOT: tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
// AMD-LABEL: func.func @rgb_out
// AMD-NOT: tensor.insert_slice
// AMD: linalg.conv_2d_nhwc_fhwc {{.*}} -> tensor<2x8x8x3xf32>
func.func @rgb_out(%x: tensor<2x10x10x32xf16>, %w: tensor<3x3x3x32xf16>, %b: tensor<3xf32>) -> tensor<2x8x8x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x10x10x32xf16>, tensor<3x3x3x32xf16>) outs(%f : tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n,h,w,c)->(n,h,w,c)>, affine_map<(n,h,w,c)->(c)>, affine_map<(n,h,w,c)->(n,h,w,c)>], iterator_types = ["parallel","parallel","parallel","parallel"]} ins(%c, %b : tensor<2x8x8x3xf32>, tensor<3xf32>) outs(%e : tensor<2x8x8x3xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8x3xf32>
  return %r : tensor<2x8x8x3xf32>
}

// hwcf filter, F = 13 -> 16, an accumulator that is not a zero fill (inserted into one), and a
// batch read at run time (the slice and the new tensors take it from tensor.dim).
// CHECK-LABEL: func.func @hwcf_dynamic
// CHECK: %[[N:.*]] = tensor.dim %arg2, %{{.*}} : tensor<?x6x6x13xf32>
// CHECK: %[[AE:.*]] = tensor.empty(%[[N]]) : tensor<?x6x6x16xf32>
// CHECK: %[[AZ:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[AE]] : tensor<?x6x6x16xf32>)
// CHECK: %[[A:.*]] = tensor.insert_slice %arg2 into %[[AZ]][0, 0, 0, 0] [%{{.*}}, 6, 6, 13] [1, 1, 1, 1] : tensor<?x6x6x13xf32> into tensor<?x6x6x16xf32>
// CHECK: %[[WZ:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x3x16x16xf32>)
// CHECK: %[[W:.*]] = tensor.insert_slice %arg1 into %[[WZ]][0, 0, 0, 0] [3, 3, 16, 13] [1, 1, 1, 1]
// CHECK: %[[C:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%arg0, %[[W]] : {{.*}}) outs(%[[A]] : tensor<?x6x6x16xf32>) -> tensor<?x6x6x16xf32>
// CHECK: tensor.extract_slice %[[C]][0, 0, 0, 0] [%{{.*}}, 6, 6, 13] [1, 1, 1, 1] : tensor<?x6x6x16xf32> to tensor<?x6x6x13xf32>
func.func @hwcf_dynamic(%x: tensor<?x8x8x16xf32>, %w: tensor<3x3x16x13xf32>, %acc: tensor<?x6x6x13xf32>) -> tensor<?x6x6x13xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x8x8x16xf32>, tensor<3x3x16x13xf32>) outs(%acc : tensor<?x6x6x13xf32>) -> tensor<?x6x6x13xf32>
  return %c : tensor<?x6x6x13xf32>
}

// Left alone: a 1x1 filter (IREE would move the slice back into its matmul) and F = 16.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} -> tensor<1x8x8x255xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} -> tensor<1x6x6x16xf32>
func.func @left_alone(%x: tensor<1x8x8x64xf16>, %w1: tensor<255x1x1x64xf16>, %w3: tensor<16x3x3x64xf16>, %a1: tensor<1x8x8x255xf32>, %a3: tensor<1x6x6x16xf32>) -> (tensor<1x8x8x255xf32>, tensor<1x6x6x16xf32>) {
  %c1 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x8x8x64xf16>, tensor<255x1x1x64xf16>) outs(%a1 : tensor<1x8x8x255xf32>) -> tensor<1x8x8x255xf32>
  %c3 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w3 : tensor<1x8x8x64xf16>, tensor<16x3x3x64xf16>) outs(%a3 : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  return %c1, %c3 : tensor<1x8x8x255xf32>, tensor<1x6x6x16xf32>
}

// A 45-channel conv whose result reaches another conv through its bias + ReLU: the channels
// are padded to 64 (the next conv's input: a whole 64-byte K step of 16-bit values) and carried
// on: the bias is widened with ones, the epilogue runs on 64 channels, and the next conv's filter
// gets 19 zero input channels; no slice is left.
// CHECK-LABEL: func.func @carried
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} -> tensor<2x8x8x64xf32>
// CHECK: tensor.insert_slice %arg3 into %{{.*}}[0] [45] [1] : tensor<45xf32> into tensor<64xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x8x64xf32>, tensor<64xf32>)
// CHECK: tensor.insert_slice %arg2 into %{{.*}}[0, 0, 0, 0] [16, 1, 1, 45] [1, 1, 1, 1] : tensor<16x1x1x45xf32> into tensor<16x1x1x64xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x8x64xf32>, tensor<16x1x1x64xf32>)
// CHECK-NOT: tensor.extract_slice
func.func @carried(%x: tensor<2x10x10x32xf32>, %w: tensor<45x3x3x32xf32>, %w2: tensor<16x1x1x45xf32>, %b: tensor<45xf32>) -> tensor<2x8x8x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x45xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x8x45xf32>) -> tensor<2x8x8x45xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x10x10x32xf32>, tensor<45x3x3x32xf32>) outs(%f : tensor<2x8x8x45xf32>) -> tensor<2x8x8x45xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n,h,w,c)->(n,h,w,c)>, affine_map<(n,h,w,c)->(c)>, affine_map<(n,h,w,c)->(n,h,w,c)>], iterator_types = ["parallel","parallel","parallel","parallel"]} ins(%c, %b : tensor<2x8x8x45xf32>, tensor<45xf32>) outs(%e : tensor<2x8x8x45xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<2x8x8x45xf32>
  %e2 = tensor.empty() : tensor<2x8x8x16xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r, %w2 : tensor<2x8x8x45xf32>, tensor<16x1x1x45xf32>) outs(%f2 : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  return %y : tensor<2x8x8x16xf32>
}
