module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x5x4x6x8x3x3x16_bf16xbf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x5x4x6x8x3x3x16_bf16xbf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x11x9x6x16xbf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x16x6x8xbf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<6x8xbf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x5x4x6x8xbf16>>, %arg4: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x5x4x6x8xbf16>>) {
        %cst = arith.constant 0.000000e+00 : bf16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0, 0], sizes = [2, 11, 9, 6, 16], strides = [1, 1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x11x9x6x16xbf16>> -> tensor<2x11x9x6x16xbf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0, 0], sizes = [3, 3, 16, 6, 8], strides = [1, 1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x16x6x8xbf16>> -> tensor<3x3x16x6x8xbf16>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0, 0], sizes = [6, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<6x8xbf16>> -> tensor<6x8xbf16>
        %3 = iree_tensor_ext.dispatch.tensor.load %arg3, offsets = [0, 0, 0, 0, 0], sizes = [2, 5, 4, 6, 8], strides = [1, 1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x5x4x6x8xbf16>> -> tensor<2x5x4x6x8xbf16>
        %4 = tensor.empty() : tensor<2x5x4x6x8xbf16>
        %5 = tensor.empty() : tensor<2x5x4x6x8xf32>
        %6 = linalg.fill ins(%cst_0 : f32) outs(%5 : tensor<2x5x4x6x8xf32>) -> tensor<2x5x4x6x8xf32>
        %padded = tensor.pad %0 low[0, 1, 2, 0, 0] high[0, 0, 1, 0, 0] {
        ^bb0(%arg5: index, %arg6: index, %arg7: index, %arg8: index, %arg9: index):
          tensor.yield %cst : bf16
        } : tensor<2x11x9x6x16xbf16> to tensor<2x12x12x6x16xbf16>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 * 2 + d6 * 2, d3, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<2x12x12x6x16xbf16>, tensor<3x3x16x6x8xbf16>) outs(%6 : tensor<2x5x4x6x8xf32>) {
        ^bb0(%in: bf16, %in_1: bf16, %out: f32):
          %9 = arith.extf %in : bf16 to f32
          %10 = arith.extf %in_1 : bf16 to f32
          %11 = arith.mulf %9, %10 : f32
          %12 = arith.addf %out, %11 : f32
          linalg.yield %12 : f32
        } -> tensor<2x5x4x6x8xf32>
        %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%7, %2, %3 : tensor<2x5x4x6x8xf32>, tensor<6x8xbf16>, tensor<2x5x4x6x8xbf16>) outs(%4 : tensor<2x5x4x6x8xbf16>) {
        ^bb0(%in: f32, %in_1: bf16, %in_2: bf16, %out: bf16):
          %9 = arith.extf %in_1 : bf16 to f32
          %10 = arith.addf %in, %9 : f32
          %11 = arith.extf %in_2 : bf16 to f32
          %12 = arith.addf %10, %11 : f32
          %13 = arith.maximumf %12, %cst_0 : f32
          %14 = arith.truncf %13 : f32 to bf16
          linalg.yield %14 : bf16
        } -> tensor<2x5x4x6x8xbf16>
        iree_tensor_ext.dispatch.tensor.store %8, %arg4, offsets = [0, 0, 0, 0, 0], sizes = [2, 5, 4, 6, 8], strides = [1, 1, 1, 1, 1] : tensor<2x5x4x6x8xbf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x5x4x6x8xbf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x11x9x96xbf16>, %input1: tensor<3x3x16x48xbf16>, %input2: tensor<48xbf16>, %input3: tensor<2x5x4x48xbf16>) -> (%output0: tensor<2x5x4x48xbf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x11x9x96xbf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<3x3x16x48xbf16>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<48xbf16>
    %3 = hal.tensor.import %arg3 "input3" : !hal.buffer_view -> tensor<2x5x4x48xbf16>
    %4 = flow.tensor.reshape %0 : tensor<2x11x9x96xbf16> -> tensor<2x11x9x6x16xbf16>
    %5 = flow.tensor.reshape %1 : tensor<3x3x16x48xbf16> -> tensor<3x3x16x6x8xbf16>
    %6 = flow.tensor.reshape %2 : tensor<48xbf16> -> tensor<6x8xbf16>
    %7 = flow.tensor.reshape %3 : tensor<2x5x4x48xbf16> -> tensor<2x5x4x6x8xbf16>
    %8 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x5x4x6x8x3x3x16_bf16xbf16xf32(%4, %5, %6, %7) : (tensor<2x11x9x6x16xbf16>, tensor<3x3x16x6x8xbf16>, tensor<6x8xbf16>, tensor<2x5x4x6x8xbf16>) -> tensor<2x5x4x6x8xbf16>
    %9 = flow.tensor.reshape %8 : tensor<2x5x4x6x8xbf16> -> tensor<2x5x4x48xbf16>
    %10 = hal.tensor.export %9 "output0" : tensor<2x5x4x48xbf16> -> !hal.buffer_view
    util.return %10 : !hal.buffer_view
  }
}