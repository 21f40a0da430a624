// convc-trim-window: a conv with one output pixel along an axis gets its input trimmed to the
// window's reach (IREE's unit-dim folding fails on rows past it); one whose window reads only
// zero padding along an axis becomes its accumulator; a grouped or depthwise one is widened to
// two output pixels along it; other convs are left alone.

// RUN: convc-opt --pass=convc-trim-window %s | FileCheck %s

// The trailing pad past the reach goes: H 1 + 3 + 3 = 7 rows for a 5-row window.
// CHECK-LABEL: func.func @pad_past_reach
// CHECK: tensor.pad %arg0 low[0, 3, 1, 0] high[0, 1, 0, 0]
// CHECK: } : tensor<3x1x2x7xf16> to tensor<3x5x3x7xf16>
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} ins(%{{.*}}, %arg1 : tensor<3x5x3x7xf16>, tensor<128x5x3x7xf16>)
func.func @pad_past_reach(%x: tensor<3x1x2x7xf16>, %w: tensor<128x5x3x7xf16>) -> tensor<3x1x1x128xf32> {
  %z = arith.constant 0.0 : f16
  %xp = tensor.pad %x low[0, 3, 1, 0] high[0, 3, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f16
  } : tensor<3x1x2x7xf16> to tensor<3x7x3x7xf16>
  %fz = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x1x1x128xf32>
  %acc = linalg.fill ins(%fz : f32) outs(%e : tensor<3x1x1x128xf32>) -> tensor<3x1x1x128xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<[3, 2]> : tensor<2xi64>} ins(%xp, %w : tensor<3x7x3x7xf16>, tensor<128x5x3x7xf16>) outs(%acc : tensor<3x1x1x128xf32>) -> tensor<3x1x1x128xf32>
  return %c : tensor<3x1x1x128xf32>
}

// Input rows past the reach are sliced off (no pad: 5 rows for a 3-row window; 6 columns, two outputs at stride 3).
// CHECK-LABEL: func.func @rows_past_reach
// CHECK: %[[S:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 3, 6, 8] [1, 1, 1, 1] : tensor<2x5x6x8xf32> to tensor<2x3x6x8xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} ins(%[[S]], %arg1 : tensor<2x3x6x8xf32>, tensor<16x3x3x8xf32>)
func.func @rows_past_reach(%x: tensor<2x5x6x8xf32>, %w: tensor<16x3x3x8xf32>) -> tensor<2x1x2x16xf32> {
  %fz = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x1x2x16xf32>
  %acc = linalg.fill ins(%fz : f32) outs(%e : tensor<2x1x2x16xf32>) -> tensor<2x1x2x16xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>} ins(%x, %w : tensor<2x5x6x8xf32>, tensor<16x3x3x8xf32>) outs(%acc : tensor<2x1x2x16xf32>) -> tensor<2x1x2x16xf32>
  return %c : tensor<2x1x2x16xf32>
}

// The one output column's window (a 1x1 filter at column 0) reads the left pad only: the conv
// is its zero accumulator.
// CHECK-LABEL: func.func @reads_only_pad
// CHECK-NOT: tensor.pad
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK-NOT: linalg.conv_2d_nhwc_fhwc
// CHECK: return %[[ACC]]
func.func @reads_only_pad(%x: tensor<8x1x1x64xf16>, %w: tensor<33x1x1x64xf16>) -> tensor<8x2x1x33xf32> {
  %z = arith.constant 0.0 : f16
  %xp = tensor.pad %x low[0, 0, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f16
  } : tensor<8x1x1x64xf16> to tensor<8x2x3x64xf16>
  %fz = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x2x1x33xf32>
  %acc = linalg.fill ins(%fz : f32) outs(%e : tensor<8x2x1x33xf32>) -> tensor<8x2x1x33xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<[1, 3]> : tensor<2xi64>} ins(%xp, %w : tensor<8x2x3x64xf16>, tensor<33x1x1x64xf16>) outs(%acc : tensor<8x2x1x33xf32>) -> tensor<8x2x1x33xf32>
  return %c : tensor<8x2x1x33xf32>
}

// More than one output pixel along both axes: untouched, though the last pad row is unread.
// CHECK-LABEL: func.func @strided_untouched
// CHECK: tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK-NOT: tensor.extract_slice
func.func @strided_untouched(%x: tensor<1x8x8x16xf16>, %w: tensor<32x3x3x16xf16>) -> tensor<1x4x4x32xf32> {
  %z = arith.constant 0.0 : f16
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f16
  } : tensor<1x8x8x16xf16> to tensor<1x10x10x16xf16>
  %fz = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x32xf32>
  %acc = linalg.fill ins(%fz : f32) outs(%e : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%xp, %w : tensor<1x10x10x16xf16>, tensor<32x3x3x16xf16>) outs(%acc : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  return %c : tensor<1x4x4x32xf32>
}

// A grouped conv in the generic form convc-channels-last makes, one output row: widened
// instead (IREE's GPU codegen computes folded grouped windows wrong): the input padded by one
// stride (3) more along H, the accumulator by one row, the result sliced back to the first
// row; W (two output columns) is left alone.
// CHECK-LABEL: func.func @grouped_generic
// CHECK: tensor.pad %arg0 low[0, 1, 2, 0, 0] high[0, 5, 3, 0, 0]
// CHECK: } : tensor<3x1x1x2x8xf16> to tensor<3x7x6x2x8xf16>
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0, 0] high[0, 1, 0, 0, 0]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<3x7x6x2x8xf16>, tensor<3x3x8x2x12xf16>) outs(%{{.*}} : tensor<3x2x2x2x12xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [3, 1, 2, 2, 12] [1, 1, 1, 1, 1] : tensor<3x2x2x2x12xf32> to tensor<3x1x2x2x12xf32>
func.func @grouped_generic(%x: tensor<3x1x1x2x8xf16>, %w: tensor<3x3x8x2x12xf16>) -> tensor<3x1x2x2x12xf32> {
  %z = arith.constant 0.0 : f16
  %xp = tensor.pad %x low[0, 1, 2, 0, 0] high[0, 2, 3, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %z : f16
  } : tensor<3x1x1x2x8xf16> to tensor<3x4x6x2x8xf16>
  %fz = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x1x2x2x12xf32>
  %acc = linalg.fill ins(%fz : f32) outs(%e : tensor<3x1x2x2x12xf32>) -> tensor<3x1x2x2x12xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(n, oh, ow, g, f, kh, kw, c) -> (n, oh * 3 + kh, ow * 2 + kw, g, c)>, affine_map<(n, oh, ow, g, f, kh, kw, c) -> (kh, kw, c, g, f)>, affine_map<(n, oh, ow, g, f, kh, kw, c) -> (n, oh, ow, g, f)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xp, %w : tensor<3x4x6x2x8xf16>, tensor<3x3x8x2x12xf16>) outs(%acc : tensor<3x1x2x2x12xf32>) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %af = arith.extf %a : f16 to f32
    %bf = arith.extf %b : f16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x1x2x2x12xf32>
  return %c : tensor<3x1x2x2x12xf32>
}

// A dilated window along the one-pixel axis: IREE's folded index (tap * 3) verifies against a
// longer input, so the unread pad row stays.
// CHECK-LABEL: func.func @dilated_untouched
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 2, 0, 0]
// CHECK-NOT: tensor.extract_slice
func.func @dilated_untouched(%x: tensor<1x3x4x8xf32>, %w: tensor<16x2x1x8xf32>) -> tensor<1x1x4x16xf32> {
  %z = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 0, 0] high[0, 2, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x3x4x8xf32> to tensor<1x5x4x8xf32>
  %e = tensor.empty() : tensor<1x1x4x16xf32>
  %acc = linalg.fill ins(%z : f32) outs(%e : tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<[3, 1]> : tensor<2xi64>, strides = dense<[3, 1]> : tensor<2xi64>} ins(%xp, %w : tensor<1x5x4x8xf32>, tensor<16x2x1x8xf32>) outs(%acc : tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32>
  return %c : tensor<1x1x4x16xf32>
}
