// convc-quantized-conv: a float conv of dequantized int8 operands (a QDQ model as IREE's ONNX
// import leaves it) becomes an int8 conv accumulating in i32, then
// init + float(acc - zx * filter_sum[f]) * (sx * sw[f]). The input's zero point pads it: 0 (a
// symmetric activation) keeps the pad fusable; 8 puts the pad between barriers (its own
// dispatch, fused neither into the conv nor into the producer). The
// (de)quantizes left become linalg.generics (convc-channels-last moves transposes through
// them). A weight zero point other than 0 leaves the float conv. uint8 activations run as q - 128.

// RUN: convc-opt --pass=convc-quantized-conv %s | FileCheck %s

// CHECK-LABEL: func.func @asymmetric
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x16x8x8xf32>) outs(%{{.*}} : tensor<2x16x8x8xi8>)
// CHECK: math.roundeven
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK: %[[QB:.*]] = util.optimization_barrier %[[Q]] : tensor<2x16x8x8xi8>
// CHECK: %[[P:.*]] = tensor.pad %[[QB]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tensor.yield %{{.*}} : i8
// CHECK: %[[B:.*]] = util.optimization_barrier %[[P]] : tensor<2x16x10x10xi8>
// CHECK: %[[ACC:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[B]], %{{.*}} : tensor<2x16x10x10xi8>, tensor<32x16x3x3xi8>) outs(%{{.*}} : tensor<2x32x8x8xi32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%{{.*}} : tensor<32x16x3x3xi8>) outs(%{{.*}} : tensor<32xi32>)
// CHECK: arith.extsi
// CHECK: %[[CORR:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<32xi32>)
// CHECK: arith.muli %{{.*}}, %c8_i32
// CHECK: %[[SCALE:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[ACC]], %[[CORR]], %[[SCALE]], %{{.*}} : tensor<2x32x8x8xi32>, tensor<32xi32>, tensor<32xf32>, tensor<2x32x8x8xf32>)
// CHECK: arith.subi
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return %[[Y]]
// CHECK-NOT: dequantize_affine

// CHECK-LABEL: func.func @symmetric
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK-NOT: util.optimization_barrier
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %{{.*}} : tensor<2x16x10x10xi8>, tensor<32x16x3x3xi8>) outs(%{{.*}} : tensor<2x32x8x8xi32>)
// CHECK-NOT: arith.subi

// CHECK-LABEL: func.func @weight_zero_point
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) outs(%{{.*}} : tensor<2x32x6x6xf32>)

// Three input channels: integer-valued f16 operands, the zero point subtracted before the pad.
// CHECK-LABEL: func.func @rgb
// CHECK: arith.subi %{{.*}}, %c5_i32
// CHECK: arith.sitofp %{{.*}} : i32 to f16
// CHECK: %[[P:.*]] = tensor.pad
// CHECK: tensor.yield %{{.*}} : f16
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %{{.*}} : tensor<1x3x10x10xf16>, tensor<8x3x3x3xf16>) outs(%{{.*}} : tensor<1x8x8x8xf32>)

func.func @asymmetric(%x: tensor<2x16x8x8xf32>, %b: tensor<32xf32>) -> tensor<2x32x8x8xf32> {
  %zp = arith.constant 8 : i64
  %sx = arith.constant 0.03 : f32
  %wq = arith.constant dense<3> : tensor<32x16x3x3xi8>
  %sw = arith.constant dense<0.004> : tensor<32xf32>
  %e8 = tensor.empty() : tensor<2x16x8x8xi8>
  %q = iree_linalg_ext.quantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%x, %sx, %zp : tensor<2x16x8x8xf32>, f32, i64) outs(%e8 : tensor<2x16x8x8xi8>) -> tensor<2x16x8x8xi8>
  %ef = tensor.empty() : tensor<2x16x8x8xf32>
  %dx = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%q, %sx, %zp : tensor<2x16x8x8xi8>, f32, i64) outs(%ef : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %ew = tensor.empty() : tensor<32x16x3x3xf32>
  %dw = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%wq, %sw : tensor<32x16x3x3xi8>, tensor<32xf32>) outs(%ew : tensor<32x16x3x3xf32>) -> tensor<32x16x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %dx low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x16x8x8xf32> to tensor<2x16x10x10xf32>
  %eo = tensor.empty() : tensor<2x32x8x8xf32>
  %init = linalg.broadcast ins(%b : tensor<32xf32>) outs(%eo : tensor<2x32x8x8xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %dw : tensor<2x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  return %y : tensor<2x32x8x8xf32>
}

func.func @symmetric(%xq: tensor<2x16x8x8xi8>) -> tensor<2x32x8x8xf32> {
  %sx = arith.constant 0.03 : f32
  %wq = arith.constant dense<3> : tensor<32x16x3x3xi8>
  %sw = arith.constant dense<0.004> : tensor<32xf32>
  %ef = tensor.empty() : tensor<2x16x8x8xf32>
  %dx = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%xq, %sx : tensor<2x16x8x8xi8>, f32) outs(%ef : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %ew = tensor.empty() : tensor<32x16x3x3xf32>
  %dw = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%wq, %sw : tensor<32x16x3x3xi8>, tensor<32xf32>) outs(%ew : tensor<32x16x3x3xf32>) -> tensor<32x16x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %dx low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x16x8x8xf32> to tensor<2x16x10x10xf32>
  %eo = tensor.empty() : tensor<2x32x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %dw : tensor<2x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  return %y : tensor<2x32x8x8xf32>
}

func.func @weight_zero_point(%x: tensor<2x16x8x8xf32>) -> tensor<2x32x6x6xf32> {
  %wq = arith.constant dense<3> : tensor<32x16x3x3xi8>
  %sw = arith.constant dense<0.004> : tensor<32xf32>
  %zw = arith.constant dense<1> : tensor<32xi8>
  %ew = tensor.empty() : tensor<32x16x3x3xf32>
  %dw = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%wq, %sw, %zw : tensor<32x16x3x3xi8>, tensor<32xf32>, tensor<32xi8>) outs(%ew : tensor<32x16x3x3xf32>) -> tensor<32x16x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<2x32x6x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %dw : tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  return %y : tensor<2x32x6x6xf32>
}

func.func @rgb(%xq: tensor<1x3x8x8xi8>) -> tensor<1x8x8x8xf32> {
  %zp = arith.constant 5 : i64
  %sx = arith.constant 0.03 : f32
  %wq = arith.constant dense<3> : tensor<8x3x3x3xi8>
  %sw = arith.constant dense<0.004> : tensor<8xf32>
  %ef = tensor.empty() : tensor<1x3x8x8xf32>
  %dx = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%xq, %sx, %zp : tensor<1x3x8x8xi8>, f32, i64) outs(%ef : tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %ew = tensor.empty() : tensor<8x3x3x3xf32>
  %dw = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%wq, %sw : tensor<8x3x3x3xi8>, tensor<8xf32>) outs(%ew : tensor<8x3x3x3xf32>) -> tensor<8x3x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %dx low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %eo = tensor.empty() : tensor<1x8x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %dw : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%init : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

func.func @uint8(%xq: tensor<2x16x8x8xi8>) -> tensor<2x32x8x8xf32> {
  %zp = arith.constant 200 : i64
  %sx = arith.constant 0.03 : f32
  %wq = arith.constant dense<3> : tensor<32x16x3x3xi8>
  %sw = arith.constant dense<0.004> : tensor<32xf32>
  %ef = tensor.empty() : tensor<2x16x8x8xf32>
  %dx = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = 0, quant_max = 255, input_unsigned> ins(%xq, %sx, %zp : tensor<2x16x8x8xi8>, f32, i64) outs(%ef : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %ew = tensor.empty() : tensor<32x16x3x3xf32>
  %dw = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%wq, %sw : tensor<32x16x3x3xi8>, tensor<32xf32>) outs(%ew : tensor<32x16x3x3xf32>) -> tensor<32x16x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %dx low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x16x8x8xf32> to tensor<2x16x10x10xf32>
  %eo = tensor.empty() : tensor<2x32x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %dw : tensor<2x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  return %y : tensor<2x32x8x8xf32>
}

// uint8 activations (input_unsigned, 0..255, zero point 200): the int8 values q - 128 (the top
// bit flipped) with the zero point 72, which pads them and corrects the sums.
// CHECK-LABEL: func.func @uint8
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x16x8x8xi8>) outs(%{{.*}} : tensor<2x16x8x8xi8>)
// CHECK: arith.xori %{{.*}}, %c-128_i8 : i8
// CHECK: %[[SB:.*]] = util.optimization_barrier %[[S]] : tensor<2x16x8x8xi8>
// CHECK: %[[P:.*]] = tensor.pad %[[SB]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %c72_i8 : i8
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} : tensor<2x16x10x10xi8>, tensor<32x16x3x3xi8>) outs(%{{.*}} : tensor<2x32x8x8xi32>)
// CHECK: arith.muli %{{.*}}, %c72_i32

// A conv with zero-point operands (IREE's ConvInteger: input zero point -121, the pad holding
// it, filter zero point 0): the plain int8 conv of the padded input between barriers, less
// -121 * colsum(w)[f].
// CHECK-LABEL: func.func @conv_q
// CHECK: %[[XB:.*]] = util.optimization_barrier %arg0 : tensor<1x16x8x8xi8>
// CHECK: %[[P:.*]] = tensor.pad %[[XB]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %c-121_i8 : i8
// CHECK: %[[PB:.*]] = util.optimization_barrier %[[P]] : tensor<1x16x10x10xi8>
// CHECK: %[[ACC:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[PB]], %{{.*}} : tensor<1x16x10x10xi8>, tensor<32x16x3x3xi8>) outs(%{{.*}} : tensor<1x32x8x8xi32>)
// CHECK: arith.muli %{{.*}}, %c-121_i32
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[ACC]], %{{.*}} : tensor<1x32x8x8xi32>, tensor<32xi32>)
// CHECK: arith.subi
// CHECK: return %[[Y]]
// CHECK-NOT: _q
func.func @conv_q(%x: tensor<1x16x8x8xi8>) -> tensor<1x32x8x8xi32> {
  %w = arith.constant dense<3> : tensor<32x16x3x3xi8>
  %zp = arith.constant -121 : i8
  %izp = arith.constant -121 : i32
  %fzp = arith.constant 0 : i32
  %c0 = arith.constant 0 : i32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zp : i8
  } : tensor<1x16x8x8xi8> to tensor<1x16x10x10xi8>
  %e = tensor.empty() : tensor<1x32x8x8xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x32x8x8xi32>) -> tensor<1x32x8x8xi32>
  %y = linalg.conv_2d_nchw_fchw_q {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w, %izp, %fzp : tensor<1x16x10x10xi8>, tensor<32x16x3x3xi8>, i32, i32) outs(%init : tensor<1x32x8x8xi32>) -> tensor<1x32x8x8xi32>
  return %y : tensor<1x32x8x8xi32>
}

// Two int8 convs whose requantized outputs meet in an add (a projection shortcut): the
// second operand's int8 tensor goes behind a layout-free barrier, so IREE keeps each
// requantize in its own conv's dispatch (neither writes raw i32 sums for the other).
// CHECK-LABEL: func.func @meeting
// CHECK: %[[Q1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x32x8x8xi8>)
// CHECK: %[[Q2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x32x8x8xi8>)
// CHECK: %[[D1:.*]] = linalg.generic {{.*}} ins(%[[Q1]] : tensor<2x32x8x8xi8>)
// CHECK: %[[B:.*]] = util.optimization_barrier {convc.layout_free} %[[Q2]] : tensor<2x32x8x8xi8>
// CHECK: %[[D2:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<2x32x8x8xi8>)
// CHECK: linalg.generic {{.*}} ins(%[[D1]], %[[D2]] : tensor<2x32x8x8xf32>, tensor<2x32x8x8xf32>)
// CHECK-NOT: util.optimization_barrier
func.func @meeting(%xq: tensor<2x16x8x8xi8>) -> tensor<2x32x8x8xf32> {
  %sx = arith.constant 0.03 : f32
  %sy = arith.constant 0.05 : f32
  %wq = arith.constant dense<3> : tensor<32x16x1x1xi8>
  %sw = arith.constant dense<0.004> : tensor<32xf32>
  %ef = tensor.empty() : tensor<2x16x8x8xf32>
  %dx = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%xq, %sx : tensor<2x16x8x8xi8>, f32) outs(%ef : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %ew = tensor.empty() : tensor<32x16x1x1xf32>
  %dw = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%wq, %sw : tensor<32x16x1x1xi8>, tensor<32xf32>) outs(%ew : tensor<32x16x1x1xf32>) -> tensor<32x16x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<2x32x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%dx, %dw : tensor<2x16x8x8xf32>, tensor<32x16x1x1xf32>) outs(%init : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%dx, %dw : tensor<2x16x8x8xf32>, tensor<32x16x1x1xf32>) outs(%init : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %e8 = tensor.empty() : tensor<2x32x8x8xi8>
  %q1 = iree_linalg_ext.quantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%y1, %sy : tensor<2x32x8x8xf32>, f32) outs(%e8 : tensor<2x32x8x8xi8>) -> tensor<2x32x8x8xi8>
  %q2 = iree_linalg_ext.quantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%y2, %sy : tensor<2x32x8x8xf32>, f32) outs(%e8 : tensor<2x32x8x8xi8>) -> tensor<2x32x8x8xi8>
  %d1 = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%q1, %sy : tensor<2x32x8x8xi8>, f32) outs(%eo : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %d2 = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], quant_min = -128, quant_max = 127> ins(%q2, %sy : tensor<2x32x8x8xi8>, f32) outs(%eo : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%d1, %d2 : tensor<2x32x8x8xf32>, tensor<2x32x8x8xf32>) outs(%eo : tensor<2x32x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x32x8x8xf32>
  return %sum : tensor<2x32x8x8xf32>
}

// A ReLU between a dequantize and a quantize of the same scale and zero point: max(q, zp) on
// the int8 tensor (exact: q * s / s rounds back to q).
// CHECK-LABEL: func.func @integer_relu
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<2x8xi8>) outs(%{{.*}} : tensor<2x8xi8>)
// CHECK: arith.maxsi %{{.*}}, %c3_i8 : i8
// CHECK-NOT: arith.select
func.func @integer_relu(%q: tensor<2x8xi8>) -> tensor<2x8xi8> {
  %s = arith.constant 0.05 : f32
  %zp = arith.constant 3 : i8
  %zero = arith.constant 0.0 : f32
  %ef = tensor.empty() : tensor<2x8xf32>
  %d = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], quant_min = -128, quant_max = 127> ins(%q, %s, %zp : tensor<2x8xi8>, f32, i8) outs(%ef : tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<2x8xf32>) outs(%ef : tensor<2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.cmpf ugt, %a, %zero : f32
    %v = arith.select %c, %a, %zero : f32
    linalg.yield %v : f32
  } -> tensor<2x8xf32>
  %e8 = tensor.empty() : tensor<2x8xi8>
  %y = iree_linalg_ext.quantize_affine <indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], quant_min = -128, quant_max = 127> ins(%r, %s, %zp : tensor<2x8xf32>, f32, i8) outs(%e8 : tensor<2x8xi8>) -> tensor<2x8xi8>
  return %y : tensor<2x8xi8>
}

// A QDQ Gemm (dequantized int8 activation, per-channel int8 weight [F, K] through a
// transpose) becomes the i32 contraction out[m, f] += x[m, c] * w[f, c] and the accumulator's
// dequantization; its quantize-dequantize pair at the model output one f32 op.
// CHECK-LABEL: func.func @gemm
// CHECK-NOT: linalg.transpose
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %{{.*}} : tensor<4x64xi8>, tensor<16x64xi8>) outs(%{{.*}} : tensor<4x16xi32>)
// CHECK: arith.extsi
// CHECK: arith.muli
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %{{.*}}, %{{.*}} : tensor<4x16xi32>, tensor<16xf32>, tensor<4x16xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: math.roundeven
// CHECK-NOT: arith.fptosi
// CHECK: return %{{.*}} : tensor<4x16xf32>
func.func @gemm(%xq: tensor<4x64xi8>) -> tensor<4x16xf32> {
  %sx = arith.constant 0.03 : f32
  %sy = arith.constant 0.05 : f32
  %wq = arith.constant dense<3> : tensor<16x64xi8>
  %sw = arith.constant dense<0.004> : tensor<16xf32>
  %ex = tensor.empty() : tensor<4x64xf32>
  %dx = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], quant_min = -128, quant_max = 127> ins(%xq, %sx : tensor<4x64xi8>, f32) outs(%ex : tensor<4x64xf32>) -> tensor<4x64xf32>
  %ew = tensor.empty() : tensor<16x64xf32>
  %dw = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], quant_min = -128, quant_max = 127> ins(%wq, %sw : tensor<16x64xi8>, tensor<16xf32>) outs(%ew : tensor<16x64xf32>) -> tensor<16x64xf32>
  %et = tensor.empty() : tensor<64x16xf32>
  %wt = linalg.transpose ins(%dw : tensor<16x64xf32>) outs(%et : tensor<64x16xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%dx, %wt : tensor<4x64xf32>, tensor<64x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e8 = tensor.empty() : tensor<4x16xi8>
  %q = iree_linalg_ext.quantize_affine <indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], quant_min = -128, quant_max = 127> ins(%y, %sy : tensor<4x16xf32>, f32) outs(%e8 : tensor<4x16xi8>) -> tensor<4x16xi8>
  %d = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], quant_min = -128, quant_max = 127> ins(%q, %sy : tensor<4x16xi8>, f32) outs(%eo : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %d : tensor<4x16xf32>
}

// A Clip(0, 6) between a dequantize and a quantize of one scale (ReLU6, as the ONNX import
// writes it): max(q, zp) and min(q, zp + round(6 / s)) on the int8 tensor (6 / 0.05 = 120).
// CHECK-LABEL: func.func @integer_relu6
// CHECK: arith.maxsi %{{.*}}, %c3_i8 : i8
// CHECK: arith.minsi %{{.*}}, %c123_i8 : i8
// CHECK-NOT: arith.select
func.func @integer_relu6(%q: tensor<2x8xi8>) -> tensor<2x8xi8> {
  %s = arith.constant 0.05 : f32
  %zp = arith.constant 3 : i8
  %lo = arith.constant dense<0.0> : tensor<f32>
  %hi = arith.constant dense<6.0> : tensor<f32>
  %ef = tensor.empty() : tensor<2x8xf32>
  %d = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], quant_min = -128, quant_max = 127> ins(%q, %s, %zp : tensor<2x8xi8>, f32, i8) outs(%ef : tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%d, %lo, %hi : tensor<2x8xf32>, tensor<f32>, tensor<f32>) outs(%ef : tensor<2x8xf32>) {
  ^bb0(%a: f32, %l: f32, %h: f32, %o: f32):
    %c1 = arith.cmpf ult, %a, %l : f32
    %v1 = arith.select %c1, %l, %a : f32
    %c2 = arith.cmpf ugt, %v1, %h : f32
    %v2 = arith.select %c2, %h, %v1 : f32
    linalg.yield %v2 : f32
  } -> tensor<2x8xf32>
  %e8 = tensor.empty() : tensor<2x8xi8>
  %y = iree_linalg_ext.quantize_affine <indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], quant_min = -128, quant_max = 127> ins(%r, %s, %zp : tensor<2x8xf32>, f32, i8) outs(%e8 : tensor<2x8xi8>) -> tensor<2x8xi8>
  return %y : tensor<2x8xi8>
}
