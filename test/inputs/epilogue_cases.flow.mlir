module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %c2 = arith.constant dense<2.0> : tensor<24xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %c2 : tensor<2x7x7x24xf32>, tensor<24xf32>) outs(%2 : tensor<2x7x7x24xf16>) {
        ^bb0(%in0: f32, %in1: f32, %out: f16):
          %7 = arith.mulf %in0, %in1 : f32
          %8 = arith.truncf %7 : f32 to f16
          linalg.yield %8 : f16
        } -> tensor<2x7x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7x24xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}
// -----
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %5 : tensor<2x7x7x24xf32>, tensor<2x7x7x24xf32>) outs(%2 : tensor<2x7x7x24xf16>) {
        ^bb0(%in0: f32, %in1: f32, %out: f16):
          %7 = arith.mulf %in0, %in1 : f32
          %8 = arith.truncf %7 : f32 to f16
          linalg.yield %8 : f16
        } -> tensor<2x7x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7x24xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}
// -----
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<2x7x7x24xf32>) outs(%2 : tensor<2x7x7x24xf16>) {
        ^bb0(%in0: f32, %out: f16):
          %7 = arith.fptosi %in0 : f32 to i64
          %8 = arith.addi %7, %7 : i64
          %9 = arith.sitofp %8 : i64 to f16
          linalg.yield %9 : f16
        } -> tensor<2x7x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7x24xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}
// -----
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<2x7x7x24xf32>) outs(%2 : tensor<2x7x7x24xf16>) {
        ^bb0(%in0: f32, %out: f16):
          %7 = linalg.index 3 : index
          %8 = arith.index_cast %7 : index to i32
          %9 = arith.sitofp %8 : i32 to f32
          %10 = arith.addf %in0, %9 : f32
          %11 = arith.truncf %10 : f32 to f16
          linalg.yield %11 : f16
        } -> tensor<2x7x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7x24xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}
// -----
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<2x7x7x24xf32>) outs(%2 : tensor<2x7x7x24xf16>) {
        ^bb0(%in0: f32, %out: f16):
          %7 = arith.extf %in0 : f32 to f64
          %8 = math.exp %7 : f64
          %9 = arith.truncf %8 : f64 to f16
          linalg.yield %9 : f16
        } -> tensor<2x7x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7x24xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}
// -----
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<2x7x7x24xf32>) outs(%2 : tensor<2x7x7x24xf16>) {
        ^bb0(%in0: f32, %out: f16):
          %7 = arith.truncf %in0 : f32 to f16
          %8 = arith.addf %7, %out : f16
          linalg.yield %8 : f16
        } -> tensor<2x7x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7x24xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}
// -----
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %r0 = tensor.empty() : tensor<2x7x7xf16>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%5 : tensor<2x7x7x24xf32>) outs(%r0 : tensor<2x7x7xf16>) {
        ^bb0(%in0: f32, %out: f16):
          %7 = arith.truncf %in0 : f32 to f16
          %8 = arith.addf %7, %out : f16
          linalg.yield %8 : f16
        } -> tensor<2x7x7xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0], sizes = [2, 7, 7], strides = [1, 1, 1] : tensor<2x7x7xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}
// -----
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<2x7x7x24xf32>) outs(%2 : tensor<2x7x7x24xf16>) {
        ^bb0(%in0: f32, %out: f16):
          %7 = arith.cmpf ugt, %in0, %cst : f32
          %8 = arith.select %7, %in0, %cst : f32
          %9 = arith.truncf %8 : f32 to f16
          linalg.yield %9 : f16
        } -> tensor<2x7x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7x24xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}
// -----
module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device
  flow.executable private @main_dispatch_0 {
    flow.executable.export public @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 9, 9, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x9x9x16xf16>> -> tensor<2x9x9x16xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [24, 3, 3, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<24x3x3x16xf16>> -> tensor<24x3x3x16xf16>
        %2 = tensor.empty() : tensor<2x7x7x24xf16>
        %3 = tensor.empty() : tensor<2x7x7x24xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x7x7x24xf32>) -> tensor<2x7x7x24xf32>
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) outs(%4 : tensor<2x7x7x24xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %7 = arith.extf %in : f16 to f32
          %8 = arith.extf %in_0 : f16 to f32
          %9 = arith.mulf %7, %8 : f32
          %10 = arith.addf %out, %9 : f32
          linalg.yield %10 : f32
        } -> tensor<2x7x7x24xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<2x7x7x24xf32>) outs(%2 : tensor<2x7x7x24xf16>) {
        ^bb0(%in0: f32, %out: f16):
          %7 = arith.cmpf olt, %in0, %cst : f32
          %8 = arith.select %7, %in0, %cst : f32
          %9 = arith.truncf %8 : f32 to f16
          linalg.yield %9 : f16
        } -> tensor<2x7x7x24xf16>
        iree_tensor_ext.dispatch.tensor.store %6, %arg2, offsets = [0, 0, 0, 0], sizes = [2, 7, 7, 24], strides = [1, 1, 1, 1] : tensor<2x7x7x24xf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x7x7x24xf16>>
        return
      }
    }
  }
  util.func public @main(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<2x9x9x16xf16>, %input1: tensor<24x3x3x16xf16>) -> (%output0: tensor<2x7x7x24xf16>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x9x9x16xf16>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<24x3x3x16xf16>
    %2 = flow.dispatch @main_dispatch_0::@main_dispatch_0_conv_2x7x7x24x3x3x16_f16xf16xf32(%0, %1) : (tensor<2x9x9x16xf16>, tensor<24x3x3x16xf16>) -> tensor<2x7x7x24xf16>
    %3 = hal.tensor.export %2 "output0" : tensor<2x7x7x24xf16> -> !hal.buffer_view
    util.return %3 : !hal.buffer_view
  }
}