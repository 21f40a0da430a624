func.func @main(%x: tensor<401408x16xf16>, %w: tensor<96x16xf16>, %b0: tensor<96xf16>, %b1: tensor<96xf16>, %b2: tensor<96xf16>) -> tensor<401408x96xf16> {
  %z = arith.constant 0.0 : f32
  %c2 = arith.constant 2.0 : f16
  %c1 = arith.constant 1.0 : f16
  %ch = arith.constant 0.5 : f16
  %c1f = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<401408x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e0 : tensor<401408x96xf32>) -> tensor<401408x96xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<401408x16xf16>, tensor<96x16xf16>) outs(%f : tensor<401408x96xf32>) {
        ^bb0(%p0: f16, %p1: f16, %acc: f32):
          %q0 = arith.extf %p0 : f16 to f32
          %q1 = arith.extf %p1 : f16 to f32
          %pr = arith.mulf %q0, %q1 : f32
          %sm = arith.addf %acc, %pr : f32
          linalg.yield %sm : f32
  } -> tensor<401408x96xf32>
  %o = tensor.empty() : tensor<401408x96xf16>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b0, %b1, %b2, %mm : tensor<96xf16>, tensor<96xf16>, tensor<96xf16>, tensor<401408x96xf32>) outs(%o : tensor<401408x96xf16>) {
        ^bb0(%in: f16, %in_2: f16, %in_3: f16, %in_1: f32, %out: f16):
          %t = arith.truncf %in_1 : f32 to f16
          %d = arith.subf %t, %in : f16
          %m = arith.mulf %d, %in_2 : f16
          %a = arith.addf %m, %in_3 : f16
          %w1 = arith.extf %a : f16 to f32
          %n = arith.negf %w1 : f32
          %xe = math.exp %n : f32
          %q = arith.addf %xe, %c1f : f32
          %r = arith.divf %c1f, %q : f32
          %zz = arith.mulf %w1, %r : f32
          %y = arith.truncf %zz : f32 to f16
          linalg.yield %y : f16
  } -> tensor<401408x96xf16>
  return %g : tensor<401408x96xf16>
}
