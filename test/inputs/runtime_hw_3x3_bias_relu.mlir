func.func @main(%x: tensor<2x?x?x64xf16>, %w: tensor<128x3x3x64xf16>, %b: tensor<128xf16>) -> tensor<2x?x?x128xf16> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = tensor.dim %x, %c1 : tensor<2x?x?x64xf16>
  %wd = tensor.dim %x, %c2 : tensor<2x?x?x64xf16>
  %zero = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f16
  } : tensor<2x?x?x64xf16> to tensor<2x?x?x64xf16>
  %e = tensor.empty(%h, %wd) : tensor<2x?x?x128xf32>
  %f = linalg.fill ins(%zf : f32) outs(%e : tensor<2x?x?x128xf32>) -> tensor<2x?x?x128xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<2x?x?x64xf16>, tensor<128x3x3x64xf16>) outs(%f : tensor<2x?x?x128xf32>) -> tensor<2x?x?x128xf32>
  %eo = tensor.empty(%h, %wd) : tensor<2x?x?x128xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<2x?x?x128xf32>, tensor<128xf16>) outs(%eo : tensor<2x?x?x128xf16>) {
  ^bb0(%a: f32, %bb: f16, %o: f16):
    %be = arith.extf %bb : f16 to f32
    %s = arith.addf %a, %be : f32
    %m = arith.maximumf %s, %zf : f32
    %t = arith.truncf %m : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x?x?x128xf16>
  return %r : tensor<2x?x?x128xf16>
}
