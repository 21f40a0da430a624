// A depthwise 3x3 (stride 2, pad bottom/right 1) with bias and ReLU over a [2, ?, ?, 32] f16
// image, flow phase as IREE 3.13 builds it from tools/gpu/dynamic_spatial.WindowOp.
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2xDxDx32x3x3_f16 workgroups(%arg0: index, %arg1: index, %arg2: index, %arg3: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0, %arg1, %arg2, %arg3)
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2xDxDx32x3x3_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x32xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf16>>, %arg3: index, %arg4: index, %arg5: index, %arg6: index, %arg7: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x?x?x32xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %0 = iree_tensor_ext.dispatch.workload.ordinal %arg3, 0 : index
        %1 = iree_tensor_ext.dispatch.workload.ordinal %arg4, 1 : index
        %2 = iree_tensor_ext.dispatch.workload.ordinal %arg5, 2 : index
        %3 = iree_tensor_ext.dispatch.workload.ordinal %arg6, 3 : index
        %4 = flow.dispatch.tie_shape %arg0 : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>{%0, %1}
        %5 = flow.dispatch.tie_shape %arg7 : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x?x?x32xf16>>{%2, %3}
        %6 = iree_tensor_ext.dispatch.tensor.load %4, offsets = [0, 0, 0, 0], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>{%0, %1} -> tensor<2x?x?x32xf16>
        %7 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0], sizes = [3, 3, 32], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x32xf16>> -> tensor<3x3x32xf16>
        %8 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [32], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf16>> -> tensor<32xf16>
        %9 = tensor.empty(%2, %3) : tensor<2x?x?x32xf16>
        %10 = linalg.fill ins(%cst : f16) outs(%9 : tensor<2x?x?x32xf16>) -> tensor<2x?x?x32xf16>
        %padded = tensor.pad %6 low[0, 0, 0, 0] high[0, 1, 1, 0] {
        ^bb0(%arg8: index, %arg9: index, %arg10: index, %arg11: index):
          tensor.yield %cst : f16
        } : tensor<2x?x?x32xf16> to tensor<2x?x?x32xf16>
        %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%padded, %7 : tensor<2x?x?x32xf16>, tensor<3x3x32xf16>) outs(%10 : tensor<2x?x?x32xf16>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f16):
          %13 = arith.mulf %in, %in_0 : f16
          %14 = arith.addf %out, %13 : f16
          linalg.yield %14 : f16
        } -> tensor<2x?x?x32xf16>
        %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %8 : tensor<2x?x?x32xf16>, tensor<32xf16>) outs(%9 : tensor<2x?x?x32xf16>) {
        ^bb0(%in: f16, %in_0: f16, %out: f16):
          %13 = arith.addf %in, %in_0 : f16
          %14 = arith.maximumf %13, %cst : f16
          linalg.yield %14 : f16
        } -> tensor<2x?x?x32xf16>
        iree_tensor_ext.dispatch.tensor.store %12, %5, offsets = [0, 0, 0, 0], sizes = [2, %2, %3, 32], strides = [1, 1, 1, 1] : tensor<2x?x?x32xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x?x?x32xf16>>{%2, %3}
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x?x?x32xf16>, %input1: tensor<3x3x32xf16>, %input2: tensor<32xf16>) -> (%output0: tensor<2x?x?x32xf16>)"}} {
    %c2 = arith.constant 2 : index
    %0 = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[1] : index
    %1 = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[2] : index
    %2 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x?x?x32xf16>{%0, %1}
    %3 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<3x3x32xf16>
    %4 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<32xf16>
    %5 = arith.divsi %0, %c2 : index
    %6 = arith.divsi %1, %c2 : index
    %7 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2xDxDx32x3x3_f16[%0, %1, %5, %6](%2, %3, %4, %0, %1, %5, %6) : (tensor<2x?x?x32xf16>{%0, %1}, tensor<3x3x32xf16>, tensor<32xf16>, index, index, index, index) -> tensor<2x?x?x32xf16>{%5, %6}
    %8 = hal.tensor.export %7 "output0" : tensor<2x?x?x32xf16>{%5, %6} -> !hal.buffer_view
    util.return %8 : !hal.buffer_view
  }
}