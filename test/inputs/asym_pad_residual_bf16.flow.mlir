module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_7x7x32x3x3x16_bf16xbf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_7x7x32x3x3x16_bf16xbf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8x16xbf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x3x3x16xbf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xbf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<readonly:tensor<7x7x32xbf16>>, %arg4: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<7x7x32xbf16>>) {
        %cst = arith.constant 0.000000e+00 : bf16
        %cst_0 = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [8, 8, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8x16xbf16>> -> tensor<8x8x16xbf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [32, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x3x3x16xbf16>> -> tensor<32x3x3x16xbf16>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [32], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xbf16>> -> tensor<32xbf16>
        %3 = iree_tensor_ext.dispatch.tensor.load %arg3, offsets = [0, 0, 0], sizes = [7, 7, 32], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<7x7x32xbf16>> -> tensor<7x7x32xbf16>
        %4 = tensor.empty() : tensor<7x7x32xbf16>
        %5 = tensor.empty() : tensor<7x7x32xf32>
        %6 = linalg.fill ins(%cst_0 : f32) outs(%5 : tensor<7x7x32xf32>) -> tensor<7x7x32xf32>
        %padded = tensor.pad %0 low[0, 0, 0] high[1, 1, 0] {
        ^bb0(%arg5: index, %arg6: index, %arg7: index):
          tensor.yield %cst : bf16
        } : tensor<8x8x16xbf16> to tensor<9x9x16xbf16>
        %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0 + d3, d1 + d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %1 : tensor<9x9x16xbf16>, tensor<32x3x3x16xbf16>) outs(%6 : tensor<7x7x32xf32>) {
        ^bb0(%in: bf16, %in_1: bf16, %out: f32):
          %9 = arith.extf %in : bf16 to f32
          %10 = arith.extf %in_1 : bf16 to f32
          %11 = arith.mulf %9, %10 : f32
          %12 = arith.addf %out, %11 : f32
          linalg.yield %12 : f32
        } -> tensor<7x7x32xf32>
        %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7, %2, %3 : tensor<7x7x32xf32>, tensor<32xbf16>, tensor<7x7x32xbf16>) outs(%4 : tensor<7x7x32xbf16>) {
        ^bb0(%in: f32, %in_1: bf16, %in_2: bf16, %out: bf16):
          %9 = arith.extf %in_1 : bf16 to f32
          %10 = arith.addf %in, %9 : f32
          %11 = arith.extf %in_2 : bf16 to f32
          %12 = arith.addf %10, %11 : f32
          %13 = arith.maximumf %12, %cst_0 : f32
          %14 = arith.truncf %13 : f32 to bf16
          linalg.yield %14 : bf16
        } -> tensor<7x7x32xbf16>
        iree_tensor_ext.dispatch.tensor.store %8, %arg4, offsets = [0, 0, 0], sizes = [7, 7, 32], strides = [1, 1, 1] : tensor<7x7x32xbf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<7x7x32xbf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<1x8x8x16xbf16>, %input1: tensor<32x3x3x16xbf16>, %input2: tensor<32xbf16>, %input3: tensor<1x7x7x32xbf16>) -> (%output0: tensor<1x7x7x32xbf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<1x8x8x16xbf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<32x3x3x16xbf16>
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<32xbf16>
    %3 = hal.tensor.import %arg3 "input3" : !hal.buffer_view -> tensor<1x7x7x32xbf16>
    %4 = flow.tensor.reshape %0 : tensor<1x8x8x16xbf16> -> tensor<8x8x16xbf16>
    %5 = flow.tensor.reshape %3 : tensor<1x7x7x32xbf16> -> tensor<7x7x32xbf16>
    %6 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_7x7x32x3x3x16_bf16xbf16xf32(%4, %1, %2, %5) : (tensor<8x8x16xbf16>, tensor<32x3x3x16xbf16>, tensor<32xbf16>, tensor<7x7x32xbf16>) -> tensor<7x7x32xbf16>
    %7 = flow.tensor.reshape %6 : tensor<7x7x32xbf16> -> tensor<1x7x7x32xbf16>
    %8 = hal.tensor.export %7 "output0" : tensor<1x7x7x32xbf16> -> !hal.buffer_view
    util.return %8 : !hal.buffer_view
  }
}