module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90a", features = "+ptx86", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 64], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, max_workgroup_counts = [2147483647, 65535, 65535]>>}>]> : !hal.device
  util.global private @__hoisted_tensor_20x8xf16 {stream.affinity.default = #hal.device.affinity<@__device_0>} = dense<"0xE63822BA043073B158B024ACD9B874AC27B4FA3B562CC5AE67AD6AB211B581AFA03095AC9934ACAB741F6C373C31DAB005AB3031A5382DADADACD03441B49AAD3C34923107276F32CABAE7349BB401B84F2DBA3245B02BB503200DA4BF362D33712B5635E4AB72B49B31983120AC84B3662CFCB9A032B830DEB7B624A1B44533E2B864B4D0328D352EB9C8B04C2ED9B1A337B8B5CF2E08B5C036A79E26AF20B809383A333C337635B52E23B2AFB3AFB3943603B7BAB12BAE502C8631FFB527B86D95D3354533242C17AEA12DACACD833A0B3282941A83731502C1F3A32372F37E5B889AED8B11D3178B9A3351F3540B6B2B4B1B3A6222732EA3895AB5E33F8293938203392362CB562ABD0B339375032DCAD58B0A730BCB278B49F30E939BAAC56B19FB568B60A311534A319632E7428532953B766B0482885B393B0DDB367AE"> : tensor<20x8xf16>
  util.global private @__hoisted_tensor_20xf32 {stream.affinity.default = #hal.device.affinity<@__device_0>} = dense<[0.905092955, 1.39724636, 0.873518407, 1.03467786, 1.03359783, 0.970137894, 1.13207138, 0.849188804, 1.18517685, 0.979179382, 1.22354138, 0.94650942, 0.844444692, 0.850387275, 1.25513339, 0.942804872, 0.847400367, 1.19505334, 1.04566777, 0.90800327]> : tensor<20xf32>
  flow.executable private @head$async_dispatch_0 {
    flow.executable.export public @head$async_dispatch_0_transpose_3x8x35_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @head$async_dispatch_0_transpose_3x8x35_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x8x35xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<3x35x8xf16>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [3, 8, 35], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x8x35xf16>> -> tensor<3x8x35xf16>
        %1 = tensor.empty() : tensor<3x35x8xf16>
        %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : tensor<3x8x35xf16>) outs(%1 : tensor<3x35x8xf16>) {
        ^bb0(%in: f16, %out: f16):
          linalg.yield %in : f16
        } -> tensor<3x35x8xf16>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0, 0], sizes = [3, 35, 8], strides = [1, 1, 1] : tensor<3x35x8xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<3x35x8xf16>>
        return
      }
    }
  }
  flow.executable private @head$async_dispatch_1 {
    flow.executable.export public @head$async_dispatch_1_matmul_like_105x20x8_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @head$async_dispatch_1_matmul_like_105x20x8_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<105x8xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<20x8xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<105x20xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [105, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<105x8xf16>> -> tensor<105x8xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [20, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<20x8xf16>> -> tensor<20x8xf16>
        %2 = tensor.empty() : tensor<105x20xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<105x20xf32>) -> tensor<105x20xf32>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<105x8xf16>, tensor<20x8xf16>) outs(%3 : tensor<105x20xf32>) {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<105x20xf32>
        %5 = tensor.empty() : tensor<105x20xf16>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<105x20xf32>) outs(%5 : tensor<105x20xf16>) {
        ^bb0(%in: f32, %out: f16):
          %7 = arith.truncf %in : f32 to f16
          linalg.yield %7 : f16
        } -> tensor<105x20xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0], sizes = [105, 20], strides = [1, 1] : tensor<105x20xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<105x20xf16>>
        return
      }
    }
  }
  flow.executable private @head$async_dispatch_2 {
    flow.executable.export public @head$async_dispatch_2_reduction_3x20x35_f16xf32xf32xf32xf16xf16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @head$async_dispatch_2_reduction_3x20x35_f16xf32xf32xf32xf16xf16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x35x20xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<20xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<3x20xf16>>) {
        %cst = arith.constant dense<[4.897460e-01, 8.099370e-02, 5.856320e-02, -8.251950e-02, -4.824220e-01, 2.279050e-01, -5.268550e-01, 1.958010e-01, -4.295350e-03, 3.381350e-01, -2.032470e-02, -2.469480e-01, 1.073610e-01, -1.680910e-01, -5.429080e-02, 1.255800e-02, -4.037480e-02, -5.664060e-02, -2.497560e-01, -5.673220e-02]> : tensor<20xf16>
        %cst_0 = arith.constant dense<[1.170900e+00, 9.184570e-01, 9.692380e-01, 1.163090e+00, 1.128910e+00, 1.338870e+00, 5.820310e-01, 1.170900e+00, 9.033200e-01, 1.027340e+00, 1.167970e+00, 1.216800e+00, 1.208010e+00, 1.031250e+00, 1.322270e+00, 9.433590e-01, 9.716790e-01, 1.160160e+00, 8.896480e-01, 1.432620e+00]> : tensor<20xf16>
        %cst_1 = arith.constant dense<[3.056640e-01, 6.528320e-01, -7.980340e-03, -1.149290e-01, 5.010990e-02, 2.203370e-01, -1.762700e-01, 1.138920e-01, -5.043030e-03, 4.846190e-01, -1.988530e-01, 3.139650e-01, -1.931150e-01, -2.880860e-01, -2.131350e-01, -3.571780e-01, 4.391480e-02, 3.093260e-01, 4.928590e-02, 1.872560e-01]> : tensor<20xf16>
        %cst_2 = arith.constant 0.000000e+00 : f16
        %cst_3 = arith.constant 3.500000e+01 : f16
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [3, 35, 20], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x35x20xf16>> -> tensor<3x35x20xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0], sizes = [20], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<20xf32>> -> tensor<20xf32>
        %2 = tensor.empty() : tensor<3x20xf16>
        %3 = tensor.empty() : tensor<20xf32>
        %4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%cst_0 : tensor<20xf16>) outs(%3 : tensor<20xf32>) {
        ^bb0(%in: f16, %out: f32):
          %9 = arith.extf %in : f16 to f32
          linalg.yield %9 : f32
        } -> tensor<20xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%cst : tensor<20xf16>) outs(%3 : tensor<20xf32>) {
        ^bb0(%in: f16, %out: f32):
          %9 = arith.extf %in : f16 to f32
          linalg.yield %9 : f32
        } -> tensor<20xf32>
        %6 = linalg.fill ins(%cst_2 : f16) outs(%2 : tensor<3x20xf16>) -> tensor<3x20xf16>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %5, %1, %4, %cst_1 : tensor<3x35x20xf16>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<20xf16>) outs(%6 : tensor<3x20xf16>) {
        ^bb0(%in: f16, %in_4: f32, %in_5: f32, %in_6: f32, %in_7: f16, %out: f16):
          %9 = arith.extf %in : f16 to f32
          %10 = arith.subf %9, %in_4 : f32
          %11 = arith.extf %in_7 : f16 to f32
          %12 = arith.mulf %10, %in_5 : f32
          %13 = arith.mulf %12, %in_6 : f32
          %14 = arith.addf %13, %11 : f32
          %15 = arith.truncf %14 : f32 to f16
          %16 = arith.cmpf ugt, %15, %cst_2 : f16
          %17 = arith.select %16, %15, %cst_2 : f16
          %18 = arith.addf %out, %17 : f16
          linalg.yield %18 : f16
        } -> tensor<3x20xf16>
        %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<3x20xf16>) outs(%2 : tensor<3x20xf16>) {
        ^bb0(%in: f16, %out: f16):
          %9 = arith.divf %in, %cst_3 : f16
          linalg.yield %9 : f16
        } -> tensor<3x20xf16>
        iree_tensor_ext.dispatch.tensor.store %8, %arg2, offsets = [0, 0], sizes = [3, 20], strides = [1, 1] : tensor<3x20xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<3x20xf16>>
        return
      }
    }
  }
  util.func public @head$async(%arg0: !hal.buffer_view, %arg1: !hal.fence, %arg2: !hal.fence) -> !hal.buffer_view attributes {inlining_policy = #util.inline.never, iree.abi.model = "coarse-fences", iree.abi.stub} {
    %__hoisted_tensor_20x8xf16 = util.global.load immutable @__hoisted_tensor_20x8xf16 : tensor<20x8xf16>
    %__hoisted_tensor_20xf32 = util.global.load immutable @__hoisted_tensor_20xf32 : tensor<20xf32>
    %0 = hal.tensor.import wait(%arg1) => %arg0 : !hal.buffer_view -> tensor<3x8x7x5xf16>
    %1 = flow.tensor.reshape %0 : tensor<3x8x7x5xf16> -> tensor<3x8x35xf16>
    %2 = flow.dispatch @head$async_dispatch_0::@head$async_dispatch_0_transpose_3x8x35_f16(%1) : (tensor<3x8x35xf16>) -> tensor<3x35x8xf16>
    %3 = flow.tensor.reshape %2 : tensor<3x35x8xf16> -> tensor<3x7x5x8xf16>
    %4 = flow.tensor.reshape %__hoisted_tensor_20x8xf16 : tensor<20x8xf16> -> tensor<20x1x1x8xf16>
    %5 = util.optimization_barrier %4 : tensor<20x1x1x8xf16>
    %6 = util.optimization_barrier %3 : tensor<3x7x5x8xf16>
    %7 = flow.tensor.reshape %5 : tensor<20x1x1x8xf16> -> tensor<20x8xf16>
    %8 = flow.tensor.reshape %6 : tensor<3x7x5x8xf16> -> tensor<105x8xf16>
    %9 = flow.dispatch @head$async_dispatch_1::@head$async_dispatch_1_matmul_like_105x20x8_f16xf16xf32(%8, %7) : (tensor<105x8xf16>, tensor<20x8xf16>) -> tensor<105x20xf16>
    %10 = flow.tensor.reshape %9 : tensor<105x20xf16> -> tensor<3x35x20xf16>
    %11 = flow.dispatch @head$async_dispatch_2::@head$async_dispatch_2_reduction_3x20x35_f16xf32xf32xf32xf16xf16(%10, %__hoisted_tensor_20xf32) : (tensor<3x35x20xf16>, tensor<20xf32>) -> tensor<3x20xf16>
    %12 = hal.tensor.barrier join(%11 : tensor<3x20xf16>) => %arg2 : !hal.fence
    %13 = hal.tensor.export %12 : tensor<3x20xf16> -> !hal.buffer_view
    util.return %13 : !hal.buffer_view
  }
  util.func public @head(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
    %0 = util.null : !hal.fence
    %c-1_i32 = arith.constant -1 : i32
    %c0 = arith.constant 0 : index
    %device_0 = hal.devices.get %c0 : !hal.device
    %fence = hal.fence.create device(%device_0 : !hal.device) flags("None") : !hal.fence
    %1 = util.call @head$async(%arg0, %0, %fence) : (!hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
    %status = hal.fence.await until([%fence]) timeout_millis(%c-1_i32) flags("None") : i32
    util.return %1 : !hal.buffer_view
  }
}