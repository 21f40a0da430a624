func.func @main(%x: tensor<2x8x8x64xf16>, %w: tensor<128x3x3x64xf16>, %b: tensor<128xf16>, %res: tensor<2x8x8x128xf16>) -> tensor<2x8x8x128xf16> {
  %zero = arith.constant 0.0 : f16
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f16
  } : tensor<2x8x8x64xf16> to tensor<2x10x10x64xf16>
  %fz = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x128xf32>
  %acc = linalg.fill ins(%fz : f32) outs(%e : tensor<2x8x8x128xf32>) -> tensor<2x8x8x128xf32>
  %conv = linalg.conv_2d_nhwc_fhwc {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[1, 1]> : tensor<2xi64>} ins(%xp, %w : tensor<2x10x10x64xf16>, tensor<128x3x3x64xf16>) outs(%acc : tensor<2x8x8x128xf32>) -> tensor<2x8x8x128xf32>
  %e2 = tensor.empty() : tensor<2x8x8x128xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv, %b, %res : tensor<2x8x8x128xf32>, tensor<128xf16>, tensor<2x8x8x128xf16>) outs(%e2 : tensor<2x8x8x128xf16>) {
  ^bb0(%a: f32, %bb: f16, %rr: f16, %o: f16):
    %b32 = arith.extf %bb : f16 to f32
    %v0 = arith.addf %a, %b32 : f32
    %r32 = arith.extf %rr : f16 to f32
    %v1 = arith.addf %v0, %r32 : f32
    %v2 = arith.maximumf %v1, %fz : f32
    %v3 = arith.truncf %v2 : f32 to f16
    linalg.yield %v3 : f16
  } -> tensor<2x8x8x128xf16>
  return %y : tensor<2x8x8x128xf16>
}
