// convc-linear-weights: a Linear layer's matmul reads its weight as [F, K] (a 1x1 conv's
// filter form), so convc-match-conv takes it as a GEMM. A transposed weight is read
// untransposed; a [K, F] weight through a transpose IREE runs at load; a matmul of two
// activations is left to IREE.

// RUN: convc-opt --pass=convc-linear-weights --split-input-file %s | FileCheck %s

// CHECK-DAG: #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: util.func public @classifier
// CHECK-NOT: linalg.transpose
// CHECK: %[[W0:.*]] = util.global.load @fc_weight : tensor<10x64xf16>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%arg0, %[[W0]] : tensor<4x64xf16>, tensor<10x64xf16>) outs({{.*}} : tensor<4x10xf32>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.matmul
util.global private @fc_weight = dense<1.0> : tensor<10x64xf16>
util.func public @classifier(%x: tensor<4x64xf16>) -> tensor<4x10xf32> {
  %w = util.global.load @fc_weight : tensor<10x64xf16>
  %e = tensor.empty() : tensor<64x10xf16>
  %t = linalg.transpose ins(%w : tensor<10x64xf16>) outs(%e : tensor<64x10xf16>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<4x10xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4x10xf32>) -> tensor<4x10xf32>
  %y = linalg.matmul ins(%x, %t : tensor<4x64xf16>, tensor<64x10xf16>) outs(%acc : tensor<4x10xf32>) -> tensor<4x10xf32>
  util.return %y : tensor<4x10xf32>
}

// -----

// A [K, F] weight (an ONNX MatMul initializer): transposed to [F, K] (evaluated at load).
// CHECK-LABEL: util.func public @kf_weight
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<4x3xf32>) outs(%{{.*}} : tensor<3x4xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[T]] : tensor<8x4xf32>, tensor<3x4xf32>)
// CHECK-NOT: arith.extf
// CHECK: arith.mulf
// CHECK-NOT: linalg.matmul
util.func public @kf_weight(%x: tensor<8x4xf32>) -> tensor<8x3xf32> {
  %w = arith.constant dense<[[0.5, 1.0, -1.0], [2.0, 0.25, 3.0], [-0.5, 1.5, 0.75], [1.0, -2.0, 0.5]]> : tensor<4x3xf32>
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<8x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<8x3xf32>) -> tensor<8x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%acc : tensor<8x3xf32>) -> tensor<8x3xf32>
  util.return %y : tensor<8x3xf32>
}

// -----

// A splat weight (stripped test models): IREE would fold it into the contraction's body and
// fail to distribute the reduction left; it stays a matmul.
// CHECK-LABEL: util.func public @splat_weight
// CHECK: linalg.matmul
// CHECK-NOT: linalg.generic
util.func public @splat_weight(%x: tensor<8x32xf32>) -> tensor<8x16xf32> {
  %w = arith.constant dense<0.5> : tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  util.return %y : tensor<8x16xf32>
}

// -----

// Two activations (attention-like): left to IREE.
// CHECK-LABEL: util.func public @activations
// CHECK: linalg.matmul
// CHECK-NOT: linalg.generic
util.func public @activations(%x: tensor<8x32xf32>, %y: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.matmul ins(%x, %y : tensor<8x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  util.return %r : tensor<8x16xf32>
}

// -----

// An activation seen through a transpose (x @ y^T) is no weight either: left to IREE.
// CHECK-LABEL: util.func public @transposed_activation
// CHECK: linalg.transpose
// CHECK: linalg.matmul
// CHECK-NOT: linalg.generic
util.func public @transposed_activation(%x: tensor<8x32xf32>, %y: tensor<16x32xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<32x16xf32>
  %t = linalg.transpose ins(%y : tensor<16x32xf32>) outs(%e : tensor<32x16xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.matmul ins(%x, %t : tensor<8x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  util.return %r : tensor<8x16xf32>
}
