// A max-pool (5x5, stride 1, pad 2: YOLO's SPPF) over a [2, ?, ?, 32] f16 image, flow phase as IREE
// 3.13 builds it from tools/gpu/dynamic_spatial.WindowOp (the pad fused into the dispatch).
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2xDxDx32x5x5_f16 workgroups(%arg0: index, %arg1: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0, %arg1)
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2xDxDx32x5x5_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>, %arg1: index, %arg2: index, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x?x?x32xf16>>) {
        %cst = arith.constant 0xFC00 : f16
        %0 = iree_tensor_ext.dispatch.workload.ordinal %arg1, 0 : index
        %1 = iree_tensor_ext.dispatch.workload.ordinal %arg2, 1 : index
        %2 = flow.dispatch.tie_shape %arg0 : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>{%0, %1}
        %3 = flow.dispatch.tie_shape %arg3 : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x?x?x32xf16>>{%0, %1}
        %4 = iree_tensor_ext.dispatch.tensor.load %2, offsets = [0, 0, 0, 0], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>{%0, %1} -> tensor<2x?x?x32xf16>
        %5 = tensor.empty(%0, %1) : tensor<2x?x?x32xf16>
        %6 = tensor.empty() : tensor<5x5xf16>
        %7 = linalg.fill ins(%cst : f16) outs(%5 : tensor<2x?x?x32xf16>) -> tensor<2x?x?x32xf16>
        %padded = tensor.pad %4 low[0, 2, 2, 0] high[0, 2, 2, 0] {
        ^bb0(%arg4: index, %arg5: index, %arg6: index, %arg7: index):
          tensor.yield %cst : f16
        } : tensor<2x?x?x32xf16> to tensor<2x?x?x32xf16>
        %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%padded, %6 : tensor<2x?x?x32xf16>, tensor<5x5xf16>) outs(%7 : tensor<2x?x?x32xf16>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f16):
          %9 = arith.maximumf %out, %in : f16
          linalg.yield %9 : f16
        } -> tensor<2x?x?x32xf16>
        iree_tensor_ext.dispatch.tensor.store %8, %3, offsets = [0, 0, 0, 0], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : tensor<2x?x?x32xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x?x?x32xf16>>{%0, %1}
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x?x?x32xf16>) -> (%output0: tensor<2x?x?x32xf16>)"}} {
    %0 = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[1] : index
    %1 = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[2] : index
    %2 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x?x?x32xf16>{%0, %1}
    %3 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2xDxDx32x5x5_f16[%0, %1](%2, %0, %1) : (tensor<2x?x?x32xf16>{%0, %1}, index, index) -> tensor<2x?x?x32xf16>{%0, %1}
    %4 = hal.tensor.export %3 "output0" : tensor<2x?x?x32xf16>{%0, %1} -> !hal.buffer_view
    util.return %4 : !hal.buffer_view
  }
}