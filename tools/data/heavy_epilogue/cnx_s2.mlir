func.func @main(%x: tensor<25088x192xf16>, %w: tensor<768x192xf16>, %b0: tensor<768xf16>) -> tensor<25088x768xf16> {
  %z = arith.constant 0.0 : f32
  %c2 = arith.constant 2.0 : f16
  %c1 = arith.constant 1.0 : f16
  %ch = arith.constant 0.5 : f16
  %c1f = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<25088x768xf32>
  %f = linalg.fill ins(%z : f32) outs(%e0 : tensor<25088x768xf32>) -> tensor<25088x768xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<25088x192xf16>, tensor<768x192xf16>) outs(%f : tensor<25088x768xf32>) {
        ^bb0(%p0: f16, %p1: f16, %acc: f32):
          %q0 = arith.extf %p0 : f16 to f32
          %q1 = arith.extf %p1 : f16 to f32
          %pr = arith.mulf %q0, %q1 : f32
          %sm = arith.addf %acc, %pr : f32
          linalg.yield %sm : f32
  } -> tensor<25088x768xf32>
  %o = tensor.empty() : tensor<25088x768xf16>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b0, %mm : tensor<768xf16>, tensor<25088x768xf32>) outs(%o : tensor<25088x768xf16>) {
        ^bb0(%in: f16, %in_1: f32, %out: f16):
          %t = arith.truncf %in_1 : f32 to f16
          %a = arith.addf %in, %t : f16
          %s = math.sqrt %c2 : f16
          %u = arith.divf %a, %s : f16
          %e = math.erf %u : f16
          %p = arith.addf %e, %c1 : f16
          %h = arith.mulf %p, %ch : f16
          %y = arith.mulf %a, %h : f16
          linalg.yield %y : f16
  } -> tensor<25088x768xf16>
  return %g : tensor<25088x768xf16>
}
