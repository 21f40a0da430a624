// convc-subpixel-conv: a transposed conv as PyTorch's and ONNX's imports lower it (the input
// scattered into a zero tensor with insert strides 2, then a stride-1 conv with the flipped
// filter) becomes four sub-pixel convs over the real input: a 3x3 filter, pad 1, output
// padding 1 splits into 1x1, 1x2, 2x1 and 2x2 phase filters (strided slices of the
// channels-last filter, each behind a barrier), each phase conv reads the transposed input
// through its own zero pad; the bias add (the conv's broadcast init, which convc-channels-last
// made an add after it) moves onto each phase's output, the bias broadcast to the phase's
// shape, so IREE fuses it into the phase conv's dispatch; each phase is inserted into the
// output with strides (2, 2) at its offset, with no elementwise op after it.

// RUN: convc-opt --pass=convc-channels-last,convc-subpixel-conv %s | FileCheck %s

// CHECK-LABEL: func.func @up
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg0 : tensor<2x16x8x8xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: %[[XB:.*]] = util.optimization_barrier %[[XT]] : tensor<2x8x8x16xf32>
// CHECK: %[[W0:.*]] = tensor.extract_slice %{{.*}}[0, 1, 1, 0] [8, 1, 1, 16] [1, 2, 2, 1]
// CHECK: util.optimization_barrier %[[W0]] : tensor<8x1x1x16xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} ins(%[[XB]], {{.*}} -> tensor<2x8x8x8xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 1, 0, 0] [8, 1, 2, 16] [1, 2, 2, 1]
// CHECK: tensor.pad %[[XB]] low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} -> tensor<2x8x8x8xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 1, 0] [8, 2, 1, 16] [1, 2, 2, 1]
// CHECK: tensor.pad %[[XB]] low[0, 0, 0, 0] high[0, 1, 0, 0]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [8, 2, 2, 16] [1, 2, 2, 1]
// CHECK: tensor.pad %[[XB]] low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: %[[B0:.*]] = linalg.broadcast ins(%arg2 : tensor<8xf32>) {{.*}} dimensions = [0, 1, 2]
// CHECK: %[[P0:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[B0]] : tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>)
// CHECK: %[[P1:.*]] = linalg.generic
// CHECK: %[[P2:.*]] = linalg.generic
// CHECK: %[[P3:.*]] = linalg.generic
// CHECK: tensor.insert_slice %[[P0]] into {{.*}}[0, 0, 0, 0] [2, 8, 8, 8] [1, 2, 2, 1] : tensor<2x8x8x8xf32> into tensor<2x16x16x8xf32>
// CHECK: tensor.insert_slice %[[P1]] into {{.*}}[0, 0, 1, 0] [2, 8, 8, 8] [1, 2, 2, 1]
// CHECK: tensor.insert_slice %[[P2]] into {{.*}}[0, 1, 0, 0] [2, 8, 8, 8] [1, 2, 2, 1]
// CHECK: tensor.insert_slice %[[P3]] into {{.*}}[0, 1, 1, 0] [2, 8, 8, 8] [1, 2, 2, 1]
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor<2x16x18x18xf32>
// CHECK-NOT: tensor<2x18x18x16xf32>
func.func @up(%x: tensor<2x16x8x8xf32>, %w: tensor<8x16x3x3xf32>, %b: tensor<8xf32>) -> tensor<2x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x18x18xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x18x18xf32>) -> tensor<2x16x18x18xf32>
  %ins = tensor.insert_slice %x into %z[0, 0, 1, 1] [2, 16, 8, 8] [1, 1, 2, 2] : tensor<2x16x8x8xf32> into tensor<2x16x18x18xf32>
  %oe = tensor.empty() : tensor<2x8x16x16xf32>
  %bias = linalg.broadcast ins(%b : tensor<8xf32>) outs(%oe : tensor<2x8x16x16xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%ins, %w : tensor<2x16x18x18xf32>, tensor<8x16x3x3xf32>) outs(%bias : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  return %y : tensor<2x8x16x16xf32>
}

// A 2x2 stride-2 transposed conv (a U-Net's up-conv): every phase is a 1x1 conv with the same
// pads, so one conv of 4 * F channels (the four 1x1 sub-filters concatenated) runs, then
// depth-to-space: each phase's F channels inserted into the output with strides (2, 2).
// CHECK-LABEL: func.func @up2x2
// CHECK: tensor.concat dim(0) {{.*}} -> tensor<32x1x1x16xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} -> tensor<2x8x8x32xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 8, 8, 8] [1, 1, 1, 1] : tensor<2x8x8x32xf32> to tensor<2x8x8x8xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0, 0, 0] [2, 8, 8, 8] [1, 2, 2, 1] : tensor<2x8x8x8xf32> into tensor<2x16x16x8xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 8] [2, 8, 8, 8]
// CHECK: tensor.insert_slice {{.*}}[0, 0, 1, 0] [2, 8, 8, 8] [1, 2, 2, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 16] [2, 8, 8, 8]
// CHECK: tensor.insert_slice {{.*}}[0, 1, 0, 0] [2, 8, 8, 8] [1, 2, 2, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 24] [2, 8, 8, 8]
// CHECK: tensor.insert_slice {{.*}}[0, 1, 1, 0] [2, 8, 8, 8] [1, 2, 2, 1]
// CHECK-NOT: tensor<2x16x17x17xf32>
func.func @up2x2(%x: tensor<2x16x8x8xf32>, %w: tensor<8x16x2x2xf32>) -> tensor<2x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x17x17xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x17x17xf32>) -> tensor<2x16x17x17xf32>
  %ins = tensor.insert_slice %x into %z[0, 0, 1, 1] [2, 16, 8, 8] [1, 1, 2, 2] : tensor<2x16x8x8xf32> into tensor<2x16x17x17xf32>
  %oe = tensor.empty() : tensor<2x8x16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%ins, %w : tensor<2x16x17x17xf32>, tensor<8x16x2x2xf32>) outs(%acc : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  return %y : tensor<2x8x16x16xf32>
}
