// A channel concatenation of images whose H and W are known at run time, as IREE 3.13's flow
// phase builds it (one slow_memcpy per piece, workload ordinals and tie_shape dims): the two
// halves of a 64-channel map, then a 32-channel map, into a 96-channel tensor (a C2f block).
module {
  flow.executable private @main$async_dispatch_6 {
    flow.executable.export public @main$async_dispatch_6_slow_memcpy workgroups(%arg0: index, %arg1: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0, %arg1)
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main$async_dispatch_6_slow_memcpy(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x64xf16>>, %arg1: index, %arg2: index, %arg3: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>) {
        %0 = iree_tensor_ext.dispatch.workload.ordinal %arg1, 0 : index
        %1 = iree_tensor_ext.dispatch.workload.ordinal %arg2, 1 : index
        %2 = flow.dispatch.tie_shape %arg0 : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x64xf16>>{%0, %1}
        %3 = flow.dispatch.tie_shape %arg3 : !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>{%0, %1}
        %4 = iree_tensor_ext.dispatch.tensor.load %2, offsets = [0, 0, 0, 0], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x64xf16>>{%0, %1} -> tensor<2x?x?x32xf16>
        iree_tensor_ext.dispatch.tensor.store %4, %3, offsets = [0, 0, 0, 0], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : tensor<2x?x?x32xf16> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>{%0, %1}
        return
      }
    }
  }
  flow.executable private @main$async_dispatch_7 {
    flow.executable.export public @main$async_dispatch_7_slow_memcpy workgroups(%arg0: index, %arg1: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0, %arg1)
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main$async_dispatch_7_slow_memcpy(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x64xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>, %arg2: index, %arg3: index) {
        %0 = iree_tensor_ext.dispatch.workload.ordinal %arg2, 0 : index
        %1 = iree_tensor_ext.dispatch.workload.ordinal %arg3, 1 : index
        %2 = flow.dispatch.tie_shape %arg0 : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x64xf16>>{%0, %1}
        %3 = flow.dispatch.tie_shape %arg1 : !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>{%0, %1}
        %4 = iree_tensor_ext.dispatch.tensor.load %2, offsets = [0, 0, 0, 32], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x64xf16>>{%0, %1} -> tensor<2x?x?x32xf16>
        iree_tensor_ext.dispatch.tensor.store %4, %3, offsets = [0, 0, 0, 32], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : tensor<2x?x?x32xf16> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>{%0, %1}
        return
      }
    }
  }
  flow.executable private @main$async_dispatch_8 {
    flow.executable.export public @main$async_dispatch_8_slow_memcpy workgroups(%arg0: index, %arg1: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0, %arg1)
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main$async_dispatch_8_slow_memcpy(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>, %arg2: index, %arg3: index) {
        %0 = iree_tensor_ext.dispatch.workload.ordinal %arg2, 0 : index
        %1 = iree_tensor_ext.dispatch.workload.ordinal %arg3, 1 : index
        %2 = flow.dispatch.tie_shape %arg0 : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>{%0, %1}
        %3 = flow.dispatch.tie_shape %arg1 : !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>{%0, %1}
        %4 = iree_tensor_ext.dispatch.tensor.load %2, offsets = [0, 0, 0, 0], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x?x?x32xf16>>{%0, %1} -> tensor<2x?x?x32xf16>
        iree_tensor_ext.dispatch.tensor.store %4, %3, offsets = [0, 0, 0, 64], sizes = [2, %0, %1, 32], strides = [1, 1, 1, 1] : tensor<2x?x?x32xf16> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<2x?x?x96xf16>>{%0, %1}
        return
      }
    }
  }
  util.func public @main(%a: tensor<2x?x?x64xf16>, %b: tensor<2x?x?x32xf16>, %h: index, %w: index) -> tensor<2x?x?x96xf16> {
    %e = flow.tensor.empty : tensor<2x?x?x96xf16>{%h, %w}
    %0 = flow.dispatch @main$async_dispatch_6::@main$async_dispatch_6_slow_memcpy[%h, %w](%a, %h, %w, %e) : (tensor<2x?x?x64xf16>{%h, %w}, index, index, tensor<2x?x?x96xf16>{%h, %w}) -> %e{%h, %w}
    %1 = flow.dispatch @main$async_dispatch_7::@main$async_dispatch_7_slow_memcpy[%h, %w](%a, %0, %h, %w) : (tensor<2x?x?x64xf16>{%h, %w}, tensor<2x?x?x96xf16>{%h, %w}, index, index) -> %0{%h, %w}
    %2 = flow.dispatch @main$async_dispatch_8::@main$async_dispatch_8_slow_memcpy[%h, %w](%b, %1, %h, %w) : (tensor<2x?x?x32xf16>{%h, %w}, tensor<2x?x?x96xf16>{%h, %w}, index, index) -> %1{%h, %w}
    util.return %2 : tensor<2x?x?x96xf16>
  }
}
