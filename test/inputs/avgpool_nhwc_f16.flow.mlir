module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @p$async_dispatch_2 {
    flow.executable.export public @p$async_dispatch_2_conv_2x6x5x16x2x2_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @p$async_dispatch_2_conv_2x6x5x16x2x2_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x13x11x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x6x5x16xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 4.000000e+00 : f16
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 13, 11, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x13x11x16xf16>> -> tensor<2x13x11x16xf16>
        %1 = tensor.empty() : tensor<2x6x5x16xf16>
        %2 = tensor.empty() : tensor<2x2xf16>
        %3 = linalg.fill ins(%cst : f16) outs(%1 : tensor<2x6x5x16xf16>) -> tensor<2x6x5x16xf16>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%0, %2 : tensor<2x13x11x16xf16>, tensor<2x2xf16>) outs(%3 : tensor<2x6x5x16xf16>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_1: f16, %out: f16):
          %6 = arith.addf %out, %in : f16
          linalg.yield %6 : f16
        } -> tensor<2x6x5x16xf16>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<2x6x5x16xf16>) outs(%1 : tensor<2x6x5x16xf16>) {
        ^bb0(%in: f16, %out: f16):
          %6 = arith.divf %in, %cst_0 : f16
          linalg.yield %6 : f16
        } -> tensor<2x6x5x16xf16>
        iree_tensor_ext.dispatch.tensor.store %5, %arg1, offsets = [0, 0, 0, 0], sizes = [2, 6, 5, 16], strides = [1, 1, 1, 1] : tensor<2x6x5x16xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x6x5x16xf16>>
        return
      }
    }
  }
}
