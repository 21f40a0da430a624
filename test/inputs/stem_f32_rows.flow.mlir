module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_8x112x64x7x7x3_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_8x112x64x7x7x3_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x224x3xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x7x7x3xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xf32>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x112x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [16, 224, 3], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x224x3xf32>> -> tensor<16x224x3xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [64, 7, 7, 3], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x7x7x3xf32>> -> tensor<64x7x7x3xf32>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [64], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xf32>> -> tensor<64xf32>
        %3 = tensor.empty() : tensor<8x112x64xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<8x112x64xf32>) -> tensor<8x112x64xf32>
        %padded = tensor.pad %0 low[3, 3, 0] high[3, 3, 0] {
        ^bb0(%arg4: index, %arg5: index, %arg6: index):
          tensor.yield %cst : f32
        } : tensor<16x224x3xf32> to tensor<22x230x3xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0 * 2 + d3, d1 * 2 + d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<22x230x3xf32>, tensor<64x7x7x3xf32>) outs(%4 : tensor<8x112x64xf32>) {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %7 = arith.mulf %in, %in_0 : f32
          %8 = arith.addf %out, %7 : f32
          linalg.yield %8 : f32
        } -> tensor<8x112x64xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %2 : tensor<8x112x64xf32>, tensor<64xf32>) outs(%3 : tensor<8x112x64xf32>) {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %7 = arith.addf %in, %in_0 : f32
          %8 = arith.maximumf %7, %cst : f32
          linalg.yield %8 : f32
        } -> tensor<8x112x64xf32>
        iree_tensor_ext.dispatch.tensor.store %6, %arg3, offsets = [0, 0, 0], sizes = [8, 112, 64], strides = [1, 1, 1] : tensor<8x112x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x112x64xf32>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<1x16x224x3xf32>, %input1: tensor<64x7x7x3xf32>, %input2: tensor<64xf32>, %input3: tensor<1x8x112x64xf32> {iree.abi.output = 0 : index}) -> (%output0: tensor<1x8x112x64xf32>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<1x16x224x3xf32>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<64x7x7x3xf32>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<64xf32>
    %3 = flow.tensor.reshape %0 : tensor<1x16x224x3xf32> -> tensor<16x224x3xf32>
    %4 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_8x112x64x7x7x3_f32(%3, %1, %2) : (tensor<16x224x3xf32>, tensor<64x7x7x3xf32>, tensor<64xf32>) -> tensor<8x112x64xf32>
    %5 = flow.tensor.reshape %4 : tensor<8x112x64xf32> -> tensor<1x8x112x64xf32>
    %6 = hal.tensor.alias %5 : tensor<1x8x112x64xf32> to %arg3 : !hal.buffer_view
    %7 = hal.tensor.export %6 "output0" : tensor<1x8x112x64xf32> -> !hal.buffer_view
    util.return %7 : !hal.buffer_view
  }
}