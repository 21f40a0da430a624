module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_20x12x12x32x7x7_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_20x12x12x32x7x7_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<20x12x12x32xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<7x7x32xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<20x12x12x32xf16>>) {
        %cst = arith.constant 0.000000e+00 : f16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [20, 12, 12, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<20x12x12x32xf16>> -> tensor<20x12x12x32xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0], sizes = [7, 7, 32], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<7x7x32xf16>> -> tensor<7x7x32xf16>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [32], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf16>> -> tensor<32xf16>
        %3 = tensor.empty() : tensor<20x12x12x32xf16>
        %4 = tensor.empty() : tensor<20x12x12x32xf32>
        %5 = linalg.fill ins(%cst_0 : f32) outs(%4 : tensor<20x12x12x32xf32>) -> tensor<20x12x12x32xf32>
        %padded = tensor.pad %0 low[0, 3, 3, 0] high[0, 3, 3, 0] {
        ^bb0(%arg4: index, %arg5: index, %arg6: index, %arg7: index):
          tensor.yield %cst : f16
        } : tensor<20x12x12x32xf16> to tensor<20x18x18x32xf16>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%padded, %1 : tensor<20x18x18x32xf16>, tensor<7x7x32xf16>) outs(%5 : tensor<20x12x12x32xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_1: f16, %out: f32):
          %8 = arith.extf %in : f16 to f32
          %9 = arith.extf %in_1 : f16 to f32
          %10 = arith.mulf %8, %9 : f32
          %11 = arith.addf %out, %10 : f32
          linalg.yield %11 : f32
        } -> tensor<20x12x12x32xf32>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %2 : tensor<20x12x12x32xf32>, tensor<32xf16>) outs(%3 : tensor<20x12x12x32xf16>) {
        ^bb0(%in: f32, %in_1: f16, %out: f16):
          %8 = arith.extf %in_1 : f16 to f32
          %9 = arith.addf %in, %8 : f32
          %10 = arith.maximumf %9, %cst_0 : f32
          %11 = arith.truncf %10 : f32 to f16
          linalg.yield %11 : f16
        } -> tensor<20x12x12x32xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %arg3, offsets = [0, 0, 0, 0], sizes = [20, 12, 12, 32], strides = [1, 1, 1, 1] : tensor<20x12x12x32xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<20x12x12x32xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<20x12x12x32xf16>, %input1: tensor<7x7x32xf16>, %input2: tensor<32xf16>, %input3: tensor<20x12x12x32xf16> {iree.abi.output = 0 : index}) -> (%output0: tensor<20x12x12x32xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<20x12x12x32xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<7x7x32xf16>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<32xf16>
    %3 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_20x12x12x32x7x7_f16xf16xf32(%0, %1, %2) : (tensor<20x12x12x32xf16>, tensor<7x7x32xf16>, tensor<32xf16>) -> tensor<20x12x12x32xf16>
    %4 = hal.tensor.alias %3 : tensor<20x12x12x32xf16> to %arg3 : !hal.buffer_view
    %5 = hal.tensor.export %4 "output0" : tensor<20x12x12x32xf16> -> !hal.buffer_view
    util.return %5 : !hal.buffer_view
  }
}