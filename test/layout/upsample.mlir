// convc-nearest-upsample: PyTorch's interpolate(scale_factor=2, mode="nearest") as imported (a
// gather: the source pixel computed from the output indices in f32, floored and clamped, read
// with tensor.extract) becomes the source transposed channels-last, inserted four times with
// strides (2, 2) at phases (0, 0), (0, 1), (1, 0), (1, 1) of an empty NHWC tensor, and
// transposed back to NCHW (convc-channels-last cancels both transposes between convs). A gather
// that rounds up (reads row ceil(y / 2), clamped) is not a nearest upsample and stays.

// RUN: convc-opt --pass=convc-nearest-upsample %s | FileCheck %s

// CHECK-LABEL: func.func @nearest
// CHECK: %[[X:.*]] = linalg.transpose ins(%arg0 : tensor<2x8x4x5xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[X]] into %{{.*}}[0, 0, 0, 0] [2, 4, 5, 8] [1, 2, 2, 1] : tensor<2x4x5x8xf32> into tensor<2x8x10x8xf32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[X]] into %[[I0]][0, 0, 1, 0] [2, 4, 5, 8] [1, 2, 2, 1]
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[X]] into %[[I1]][0, 1, 0, 0] [2, 4, 5, 8] [1, 2, 2, 1]
// CHECK: %[[I3:.*]] = tensor.insert_slice %[[X]] into %[[I2]][0, 1, 1, 0] [2, 4, 5, 8] [1, 2, 2, 1]
// CHECK: %[[Y:.*]] = linalg.transpose ins(%[[I3]] : tensor<2x8x10x8xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK: return %[[Y]]
// CHECK-NOT: tensor.extract
func.func @nearest(%x: tensor<2x8x4x5xf32>) -> tensor<2x8x8x10xf32> {
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %hmax = arith.constant 3.0 : f32
  %wmax = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<2x8x8x10xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<2x8x8x10xf32>) {
  ^bb0(%out: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %y = linalg.index 2 : index
    %xx = linalg.index 3 : index
    %yi = arith.index_cast %y : index to i64
    %yf = arith.sitofp %yi : i64 to f32
    %yd = arith.divf %yf, %two : f32
    %yfl = math.floor %yd : f32
    %yc0 = arith.maximumf %yfl, %zero : f32
    %yc = arith.minimumf %yc0, %hmax : f32
    %ys = arith.fptosi %yc : f32 to i64
    %ysrc = arith.index_cast %ys : i64 to index
    %xi = arith.index_cast %xx : index to i64
    %xf = arith.sitofp %xi : i64 to f32
    %xd = arith.divf %xf, %two : f32
    %xfl = math.floor %xd : f32
    %xc0 = arith.maximumf %xfl, %zero : f32
    %xc = arith.minimumf %xc0, %wmax : f32
    %xs = arith.fptosi %xc : f32 to i64
    %xsrc = arith.index_cast %xs : i64 to index
    %v = tensor.extract %x[%n, %c, %ysrc, %xsrc] : tensor<2x8x4x5xf32>
    linalg.yield %v : f32
  } -> tensor<2x8x8x10xf32>
  return %u : tensor<2x8x8x10xf32>
}

// CHECK-LABEL: func.func @rounds_up
// CHECK: tensor.extract
// CHECK-NOT: tensor.insert_slice
func.func @rounds_up(%x: tensor<1x8x4x10xf32>) -> tensor<1x8x8x10xf32> {
  %two = arith.constant 2.0 : f32
  %hmax = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<1x8x8x10xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x8x8x10xf32>) {
  ^bb0(%out: f32):
    %c = linalg.index 1 : index
    %y = linalg.index 2 : index
    %xx = linalg.index 3 : index
    %c0 = arith.constant 0 : index
    %yi = arith.index_cast %y : index to i64
    %yf = arith.sitofp %yi : i64 to f32
    %yd = arith.divf %yf, %two : f32
    %ycl = math.ceil %yd : f32
    %yfl = arith.minimumf %ycl, %hmax : f32
    %ys = arith.fptosi %yfl : f32 to i64
    %ysrc = arith.index_cast %ys : i64 to index
    %v = tensor.extract %x[%c0, %c, %ysrc, %xx] : tensor<1x8x4x10xf32>
    linalg.yield %v : f32
  } -> tensor<1x8x8x10xf32>
  return %u : tensor<1x8x8x10xf32>
}
