module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_matmul_like_128x3x80x80_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_matmul_like_128x3x80x80_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x3x80xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<80x3x80xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x80xf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x3x80xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [128, 3, 80], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x3x80xf16>> -> tensor<128x3x80xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0], sizes = [80, 3, 80], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<80x3x80xf16>> -> tensor<80x3x80xf16>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0, 0], sizes = [3, 80], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x80xf16>> -> tensor<3x80xf16>
        %3 = tensor.empty() : tensor<128x3x80xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<128x3x80xf32>) -> tensor<128x3x80xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<128x3x80xf16>, tensor<80x3x80xf16>) outs(%4 : tensor<128x3x80xf32>) {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %8 = arith.extf %in : f16 to f32
          %9 = arith.extf %in_0 : f16 to f32
          %10 = arith.mulf %8, %9 : f32
          %11 = arith.addf %out, %10 : f32
          linalg.yield %11 : f32
        } -> tensor<128x3x80xf32>
        %6 = tensor.empty() : tensor<128x3x80xf16>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %2 : tensor<128x3x80xf32>, tensor<3x80xf16>) outs(%6 : tensor<128x3x80xf16>) {
        ^bb0(%in: f32, %in_0: f16, %out: f16):
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.addf %in, %8 : f32
          %10 = arith.truncf %9 : f32 to f16
          linalg.yield %10 : f16
        } -> tensor<128x3x80xf16>
        iree_tensor_ext.dispatch.tensor.store %7, %arg3, offsets = [0, 0, 0], sizes = [128, 3, 80], strides = [1, 1, 1] : tensor<128x3x80xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x3x80xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x8x8x240xf16>, %input1: tensor<1x1x80x240xf16>, %input2: tensor<240xf16>) -> (%output0: tensor<2x8x8x240xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x8x8x240xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<1x1x80x240xf16>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<240xf16>
    %3 = flow.tensor.reshape %1 : tensor<1x1x80x240xf16> -> tensor<80x3x80xf16>
    %4 = flow.tensor.reshape %2 : tensor<240xf16> -> tensor<3x80xf16>
    %5 = flow.tensor.reshape %0 : tensor<2x8x8x240xf16> -> tensor<128x3x80xf16>
    %6 = flow.dispatch @main_dispatch_0::@main_dispatch_0_matmul_like_128x3x80x80_f16xf16xf32(%5, %3, %4) : (tensor<128x3x80xf16>, tensor<80x3x80xf16>, tensor<3x80xf16>) -> tensor<128x3x80xf16>
    %7 = flow.tensor.reshape %6 : tensor<128x3x80xf16> -> tensor<2x8x8x240xf16>
    %8 = hal.tensor.export %7 "output0" : tensor<2x8x8x240xf16> -> !hal.buffer_view
    util.return %8 : !hal.buffer_view
  }
}