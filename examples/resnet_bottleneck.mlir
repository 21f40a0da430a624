// A ResNet-50 bottleneck block (stage 3 shape, batch 2), NHWC / FHWC, f16 with f32 accumulation:
//   y = relu(conv1x1(relu(conv3x3(relu(conv1x1(x) + b1)) + b2)) + b3 + x)
// Every conv, with its padding and epilogue, is compiled by convc; the rest by IREE.
func.func @bottleneck(%x: tensor<2x14x14x256xf16>,
                      %w1: tensor<64x1x1x256xf16>, %b1: tensor<64xf16>,
                      %w2: tensor<64x3x3x64xf16>, %b2: tensor<64xf16>,
                      %w3: tensor<256x1x1x64xf16>, %b3: tensor<256xf16>) -> tensor<2x14x14x256xf16> {
  %zf = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : f16

  // conv1: 1x1, 256 -> 64, bias, relu
  %e1 = tensor.empty() : tensor<2x14x14x64xf32>
  %a1 = linalg.fill ins(%zf : f32) outs(%e1 : tensor<2x14x14x64xf32>) -> tensor<2x14x14x64xf32>
  %c1 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%x, %w1 : tensor<2x14x14x256xf16>, tensor<64x1x1x256xf16>) outs(%a1 : tensor<2x14x14x64xf32>) -> tensor<2x14x14x64xf32>
  %o1 = tensor.empty() : tensor<2x14x14x64xf16>
  %y1 = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c1, %b1 : tensor<2x14x14x64xf32>, tensor<64xf16>) outs(%o1 : tensor<2x14x14x64xf16>) {
  ^bb0(%v: f32, %b: f16, %o: f16):
    %bf = arith.extf %b : f16 to f32
    %s = arith.addf %v, %bf : f32
    %r = arith.maximumf %s, %zf : f32
    %t = arith.truncf %r : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x14x14x64xf16>

  // conv2: 3x3, pad 1, 64 -> 64, bias, relu
  %p2 = tensor.pad %y1 low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zh : f16
  } : tensor<2x14x14x64xf16> to tensor<2x16x16x64xf16>
  %a2 = linalg.fill ins(%zf : f32) outs(%e1 : tensor<2x14x14x64xf32>) -> tensor<2x14x14x64xf32>
  %c2 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%p2, %w2 : tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>) outs(%a2 : tensor<2x14x14x64xf32>) -> tensor<2x14x14x64xf32>
  %y2 = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c2, %b2 : tensor<2x14x14x64xf32>, tensor<64xf16>) outs(%o1 : tensor<2x14x14x64xf16>) {
  ^bb0(%v: f32, %b: f16, %o: f16):
    %bf = arith.extf %b : f16 to f32
    %s = arith.addf %v, %bf : f32
    %r = arith.maximumf %s, %zf : f32
    %t = arith.truncf %r : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x14x14x64xf16>

  // conv3: 1x1, 64 -> 256, bias, residual add, relu
  %e3 = tensor.empty() : tensor<2x14x14x256xf32>
  %a3 = linalg.fill ins(%zf : f32) outs(%e3 : tensor<2x14x14x256xf32>) -> tensor<2x14x14x256xf32>
  %c3 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%y2, %w3 : tensor<2x14x14x64xf16>, tensor<256x1x1x64xf16>) outs(%a3 : tensor<2x14x14x256xf32>) -> tensor<2x14x14x256xf32>
  %o3 = tensor.empty() : tensor<2x14x14x256xf16>
  %y3 = linalg.generic {indexing_maps = [affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>, affine_map<(n, h, w, f) -> (n, h, w, f)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c3, %b3, %x : tensor<2x14x14x256xf32>, tensor<256xf16>, tensor<2x14x14x256xf16>) outs(%o3 : tensor<2x14x14x256xf16>) {
  ^bb0(%v: f32, %b: f16, %res: f16, %o: f16):
    %bf = arith.extf %b : f16 to f32
    %s = arith.addf %v, %bf : f32
    %rf = arith.extf %res : f16 to f32
    %s2 = arith.addf %s, %rf : f32
    %r = arith.maximumf %s2, %zf : f32
    %t = arith.truncf %r : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x14x14x256xf16>
  return %y3 : tensor<2x14x14x256xf16>
}
