
module {
  flow.executable private @main$async_dispatch_1 {
    flow.executable.export public @main$async_dispatch_1_conv_2x12x10x32x3x3x32_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main$async_dispatch_1_conv_2x12x10x32x3x3x32_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x12x10x64xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x3x3x32xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x12x10x32xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %cst_1 = arith.constant 1.000000e+00 : f32
        %cst_2 = arith.constant dense_resource<torch_tensor_32_torch.float16_2> : tensor<32xf16>
        %cst_3 = arith.constant dense_resource<torch_tensor_32_torch.float16_3> : tensor<32xf16>
        %0 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [32, 3, 3, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x3x3x32xf16>> -> tensor<32x3x3x32xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [32], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf16>> -> tensor<32xf16>
        %2 = tensor.empty() : tensor<2x12x10x32xf16>
        %3 = tensor.empty() : tensor<2x12x10x32xf32>
        %4 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 32], sizes = [2, 12, 10, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x12x10x64xf16>> -> tensor<2x12x10x32xf16>
        %5 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<2x12x10x32xf32>) -> tensor<2x12x10x32xf32>
        %padded = tensor.pad %4 low[0, 1, 1, 0] high[0, 1, 1, 0] {
        ^bb0(%arg4: index, %arg5: index, %arg6: index, %arg7: index):
          tensor.yield %cst : f16
        } : tensor<2x12x10x32xf16> to tensor<2x14x12x32xf16>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %0 : tensor<2x14x12x32xf16>, tensor<32x3x3x32xf16>) outs(%5 : tensor<2x12x10x32xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_4: f16, %out: f32):
          %8 = arith.extf %in : f16 to f32
          %9 = arith.extf %in_4 : f16 to f32
          %10 = arith.mulf %8, %9 : f32
          %11 = arith.addf %out, %10 : f32
          linalg.yield %11 : f32
        } -> tensor<2x12x10x32xf32>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %cst_2, %1, %cst_3 : tensor<2x12x10x32xf32>, tensor<32xf16>, tensor<32xf16>, tensor<32xf16>) outs(%2 : tensor<2x12x10x32xf16>) {
        ^bb0(%in: f32, %in_4: f16, %in_5: f16, %in_6: f16, %out: f16):
          %8 = arith.truncf %in : f32 to f16
          %9 = arith.subf %8, %in_4 : f16
          %10 = arith.mulf %9, %in_5 : f16
          %11 = arith.addf %10, %in_6 : f16
          %12 = arith.extf %11 : f16 to f32
          %13 = arith.negf %12 : f32
          %14 = math.exp %13 : f32
          %15 = arith.addf %14, %cst_1 : f32
          %16 = arith.divf %cst_1, %15 : f32
          %17 = arith.mulf %12, %16 : f32
          %18 = arith.truncf %17 : f32 to f16
          linalg.yield %18 : f16
        } -> tensor<2x12x10x32xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %arg3, offsets = [0, 0, 0, 0], sizes = [2, 12, 10, 32], strides = [1, 1, 1, 1] : tensor<2x12x10x32xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x12x10x32xf16>>
        return
      }
    }
  }
  flow.executable private @main$async_dispatch_2 {
    flow.executable.export public @main$async_dispatch_2_conv_2x12x10x32x3x3x32_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main$async_dispatch_2_conv_2x12x10x32x3x3x32_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x12x10x64xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x12x10x32xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x3x3x32xf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf16>>, %arg4: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x12x10x32xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %cst_1 = arith.constant 1.000000e+00 : f32
        %cst_2 = arith.constant dense_resource<torch_tensor_32_torch.float16_6> : tensor<32xf16>
        %cst_3 = arith.constant dense_resource<torch_tensor_32_torch.float16_7> : tensor<32xf16>
        %0 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [2, 12, 10, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x12x10x32xf16>> -> tensor<2x12x10x32xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0, 0, 0, 0], sizes = [32, 3, 3, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x3x3x32xf16>> -> tensor<32x3x3x32xf16>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg3, offsets = [0], sizes = [32], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf16>> -> tensor<32xf16>
        %3 = tensor.empty() : tensor<2x12x10x32xf16>
        %4 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 32], sizes = [2, 12, 10, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x12x10x64xf16>> -> tensor<2x12x10x32xf16>
        %5 = tensor.empty() : tensor<2x12x10x32xf32>
        %6 = linalg.fill ins(%cst_0 : f32) outs(%5 : tensor<2x12x10x32xf32>) -> tensor<2x12x10x32xf32>
        %padded = tensor.pad %0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
        ^bb0(%arg5: index, %arg6: index, %arg7: index, %arg8: index):
          tensor.yield %cst : f16
        } : tensor<2x12x10x32xf16> to tensor<2x14x12x32xf16>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<2x14x12x32xf16>, tensor<32x3x3x32xf16>) outs(%6 : tensor<2x12x10x32xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_4: f16, %out: f32):
          %9 = arith.extf %in : f16 to f32
          %10 = arith.extf %in_4 : f16 to f32
          %11 = arith.mulf %9, %10 : f32
          %12 = arith.addf %out, %11 : f32
          linalg.yield %12 : f32
        } -> tensor<2x12x10x32xf32>
        %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4, %7, %cst_2, %2, %cst_3 : tensor<2x12x10x32xf16>, tensor<2x12x10x32xf32>, tensor<32xf16>, tensor<32xf16>, tensor<32xf16>) outs(%3 : tensor<2x12x10x32xf16>) {
        ^bb0(%in: f16, %in_4: f32, %in_5: f16, %in_6: f16, %in_7: f16, %out: f16):
          %9 = arith.truncf %in_4 : f32 to f16
          %10 = arith.subf %9, %in_5 : f16
          %11 = arith.mulf %10, %in_6 : f16
          %12 = arith.addf %11, %in_7 : f16
          %13 = arith.extf %12 : f16 to f32
          %14 = arith.negf %13 : f32
          %15 = math.exp %14 : f32
          %16 = arith.addf %15, %cst_1 : f32
          %17 = arith.divf %cst_1, %16 : f32
          %18 = arith.mulf %13, %17 : f32
          %19 = arith.truncf %18 : f32 to f16
          %20 = arith.addf %in, %19 : f16
          linalg.yield %20 : f16
        } -> tensor<2x12x10x32xf16>
        iree_tensor_ext.dispatch.tensor.store %8, %arg4, offsets = [0, 0, 0, 0], sizes = [2, 12, 10, 32], strides = [1, 1, 1, 1] : tensor<2x12x10x32xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x12x10x32xf16>>
        return
      }
    }
  }
}
