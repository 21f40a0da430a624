module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x16x16x8x3x3x32_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x16x16x8x3x3x32_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x16x16x32xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x3x3x32xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x16x16x8xf32>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 16, 16, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x16x16x32xf16>> -> tensor<2x16x16x32xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [8, 3, 3, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x3x3x32xf16>> -> tensor<8x3x3x32xf16>
        %2 = tensor.empty() : tensor<2x16x16x8xf32>
        %3 = linalg.fill ins(%cst_0 : f32) outs(%2 : tensor<2x16x16x8xf32>) -> tensor<2x16x16x8xf32>
        %padded = tensor.pad %0 low[0, 1, 1, 0] high[0, 1, 1, 0] {
        ^bb0(%arg3: index, %arg4: index, %arg5: index, %arg6: index):
          tensor.yield %cst : f16
        } : tensor<2x16x16x32xf16> to tensor<2x18x18x32xf16>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<2x18x18x32xf16>, tensor<8x3x3x32xf16>) outs(%3 : tensor<2x16x16x8xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_1: f16, %out: f32):
          %5 = arith.extf %in : f16 to f32
          %6 = arith.extf %in_1 : f16 to f32
          %7 = arith.mulf %5, %6 : f32
          %8 = arith.addf %out, %7 : f32
          linalg.yield %8 : f32
        } -> tensor<2x16x16x8xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 16, 16, 8], strides = [1, 1, 1, 1] : tensor<2x16x16x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x16x16x8xf32>>
        return
      }
    }
  }
  flow.executable private @main_dispatch_1 {
    flow.executable.export public @main_dispatch_1_elementwise_512x3_f32xf16xf16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_1_elementwise_512x3_f32xf16xf16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<512x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<512x3xf16>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0], sizes = [3], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3xf16>> -> tensor<3xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [512, 3], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<512x8xf32>> -> tensor<512x3xf32>
        %2 = tensor.empty() : tensor<512x3xf16>
        %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1, %0 : tensor<512x3xf32>, tensor<3xf16>) outs(%2 : tensor<512x3xf16>) {
        ^bb0(%in: f32, %in_0: f16, %out: f16):
          %4 = arith.extf %in_0 : f16 to f32
          %5 = arith.addf %in, %4 : f32
          %6 = arith.truncf %5 : f32 to f16
          linalg.yield %6 : f16
        } -> tensor<512x3xf16>
        iree_tensor_ext.dispatch.tensor.store %3, %arg2, offsets = [0, 0], sizes = [512, 3], strides = [1, 1] : tensor<512x3xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<512x3xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x16x16x32xf16>, %input1: tensor<3x3x3x32xf16>, %input2: tensor<3xf16>, %input3: tensor<2x16x16x3xf16> {iree.abi.output = 0 : index}) -> (%output0: tensor<2x16x16x3xf16>)"}} {
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x16x16x32xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<3x3x3x32xf16>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<3xf16>
    %3 = flow.tensor.splat %cst : tensor<8x3x3x32xf16>
    %4 = flow.tensor.update %1, %3[%c0, %c0, %c0, %c0] : tensor<3x3x3x32xf16> -> %3 as tensor<8x3x3x32xf16>
    %5 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x16x16x8x3x3x32_f16xf16xf32(%0, %4) : (tensor<2x16x16x32xf16>, tensor<8x3x3x32xf16>) -> tensor<2x16x16x8xf32>
    %6 = flow.tensor.reshape %5 : tensor<2x16x16x8xf32> -> tensor<512x8xf32>
    %7 = flow.dispatch @main_dispatch_1::@main_dispatch_1_elementwise_512x3_f32xf16xf16(%6, %2) : (tensor<512x8xf32>, tensor<3xf16>) -> tensor<512x3xf16>
    %8 = flow.tensor.reshape %7 : tensor<512x3xf16> -> tensor<2x16x16x3xf16>
    %9 = hal.tensor.alias %8 : tensor<2x16x16x3xf16> to %arg3 : !hal.buffer_view
    %10 = hal.tensor.export %9 "output0" : tensor<2x16x16x3xf16> -> !hal.buffer_view
    util.return %10 : !hal.buffer_view
  }
}