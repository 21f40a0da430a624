"""The PyTorch route: an `nn.Module` and example inputs -> MLIR that `convc` compiles.

    from convc.compiler.pytorch import export_mlir, compile_module
    text = export_mlir(model, (torch.randn(1, 3, 224, 224),))        # MLIR text (torch dialect)
    result = compile_module(model, (x,), "model.vmfb", target="sm_90a")  # straight to a vmfb

It uses `torch.export` and the FX importer that ships with iree-base-compiler
(`iree.compiler.extras.fx_importer`), so it needs PyTorch (`pip install -e '.[torch]'` in the checkout) but
not iree-turbine. Parameters are frozen into the module as constants, as ONNX initializers
are; IREE evaluates their layout changes at compile time. `dynamic_batch=True` exports the
first dimension of every input as a symbolic size.

CLI: `python3 -m convc.compiler.pytorch MODULE:FACTORY --shape 1,3,224,224 -o model.mlir`
calls FACTORY() (e.g. `torchvision.models:resnet50`) and exports it on random inputs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile

from .driver import CompileOptions, CompileResult, compile_file
from .errors import ConvcError


def _torch():
    try:
        import torch
    except ImportError:
        raise ConvcError("the PyTorch route needs PyTorch: python3 -m pip install torch (or, in the convc checkout, python3 -m pip install -e '.[torch]')") from None
    return torch


PARAMETER_SCOPE = "model"


def _parameter_hooks(module, params: list):
    """FX importer hooks that turn the module's parameters and buffers into IREE parameters
    (`#stream.parameter.named<"model"::"<state_dict key>">` globals) instead of inlined
    constants, so the vmfb stays small and the weights are supplied at run time (an IREE
    parameter index, see tools/gpu/e2e.py). `params` collects (key, shape, dtype)."""
    from iree.compiler.extras.fx_importer import FxImporterHooks
    from iree.compiler import ir as mir

    by_ptr = {t.data_ptr(): k for k, t in module.state_dict().items() if t.numel() > 1}

    class Hooks(FxImporterHooks):
        def prepare_module(self, module_op):
            self.body = module_op.regions[0].blocks[0]

        def resolve_literal(self, gni, literal, info):
            key = by_ptr.get(literal.data_ptr()) if hasattr(literal, "data_ptr") else None
            if key is None:
                return None
            vtype = gni._cc.tensor_to_vtensor_type(literal)
            ttype = mir.RankedTensorType.get(list(literal.shape), gni._cc.dtype_to_type(literal.dtype))
            name = "param_" + key.replace(".", "_")
            if not any(p[0] == key for p in params):
                with mir.InsertionPoint.at_block_begin(self.body), mir.Location.unknown():
                    mir.Operation.create("util.global", attributes={
                        "sym_name": mir.StringAttr.get(name), "sym_visibility": mir.StringAttr.get("private"),
                        "type": mir.TypeAttr.get(ttype),
                        "initial_value": mir.Attribute.parse(
                            f'#stream.parameter.named<"{PARAMETER_SCOPE}"::"{key}"> : {ttype}')})
                params.append((key, list(literal.shape), str(literal.dtype).replace("torch.", "")))
            load = mir.Operation.create("util.global.load", results=[ttype],
                                        attributes={"global": mir.FlatSymbolRefAttr.get(name)})
            return mir.Operation.create("torch_c.from_builtin_tensor", results=[vtype],
                                        operands=[load.result]).result

    return Hooks()


def _decompositions(torch):
    """Core ATen plus inference BatchNorm as elementwise math (IREE's torch lowering has no
    pattern for `_native_batch_norm_legit_no_training`; as elementwise ops it fuses into the
    conv's epilogue)."""
    def batch_norm_inference(x, weight, bias, mean, var, momentum, eps):
        shape = [1, -1] + [1] * (x.dim() - 2)
        scale = torch.rsqrt(var + eps) * (weight if weight is not None else 1)
        y = (x - mean.view(shape)) * scale.view(shape)
        if bias is not None:
            y = y + bias.view(shape)
        return y, x.new_zeros(0), x.new_zeros(0)

    table = torch.export.default_decompositions()
    table[torch.ops.aten._native_batch_norm_legit_no_training.default] = batch_norm_inference
    return table


def export_mlir(module, example_inputs: tuple, dynamic_batch: bool = False, func_name: str = "main",
                parameters: list | None = None, dynamic_spatial: bool = False) -> str:
    """MLIR text (torch dialect) of module(*example_inputs) in eval mode. Parameters are frozen
    into the module as constants, or, when a `parameters` list is given, left as named IREE
    parameters (the list receives their (state_dict key, shape, dtype)). dynamic_batch: dim 0
    of every input is a runtime size; dynamic_spatial: the image dims too (2 and 3 of a rank-4
    NCHW input, 2..4 of a rank-5 one), as torch.export's automatic dims: the exported program
    takes any size its ops allow (a stride-2 stage then rounds as PyTorch does)."""
    torch = _torch()
    from iree.compiler.extras.fx_importer import FxImporter

    module = module.eval()
    dynamic_shapes = None
    if dynamic_batch or dynamic_spatial:
        batch = torch.export.Dim("batch")
        dynamic_shapes = tuple(({0: batch} if dynamic_batch else {})
                               | ({d: torch.export.Dim.AUTO for d in range(2, x.dim())} if dynamic_spatial else {})
                               for x in example_inputs)
    with torch.no_grad():
        program = torch.export.export(module, tuple(example_inputs), dynamic_shapes=dynamic_shapes)
        program = program.run_decompositions(_decompositions(torch))
    hooks = _parameter_hooks(module, parameters) if parameters is not None else None
    importer = FxImporter(hooks=hooks)
    importer.import_frozen_program(program, func_name=func_name)
    return str(importer.module)


def compile_module(module, example_inputs: tuple, output: str, dynamic_batch: bool = False,
                   dynamic_spatial: bool = False, **options) -> CompileResult:
    """Exports module and compiles it with convc; options are CompileOptions fields."""
    with tempfile.TemporaryDirectory(prefix="convc-torch-") as tmp:
        path = os.path.join(tmp, "model.mlir")
        with open(path, "w") as f:
            f.write(export_mlir(module, example_inputs, dynamic_batch, dynamic_spatial=dynamic_spatial))
        return compile_file(path, output, CompileOptions(**options))


def _factory(spec: str):
    mod, _, attr = spec.partition(":")
    if not attr:
        raise ConvcError(f"expected MODULE:FACTORY, got {spec!r}")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise ConvcError(f"cannot load {spec}: {e}") from None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m convc.compiler.pytorch",
                                description="Export a PyTorch module to MLIR that convc compiles.")
    p.add_argument("factory", help="MODULE:FACTORY returning an nn.Module, e.g. torchvision.models:resnet50")
    p.add_argument("--shape", required=True, action="append",
                   help="an example input's shape, e.g. 1,3,224,224 (repeat for several inputs)")
    p.add_argument("--dtype", default="float32", help="example inputs' dtype (float32, float16, bfloat16)")
    p.add_argument("--channels-last", action="store_true", help="export in torch.channels_last memory format")
    p.add_argument("--dynamic-batch", action="store_true", help="export the batch dimension as dynamic")
    p.add_argument("--dynamic-spatial", action="store_true",
                   help="export the image dimensions (H, W; D, H, W of a 5-D input) as dynamic")
    p.add_argument("-o", "--output", required=True, help="MLIR file to write")
    args = p.parse_args(argv)
    try:
        torch = _torch()
        dtype = getattr(torch, args.dtype)
        model = _factory(args.factory)().to(dtype)
        inputs = tuple(torch.randn(*[int(x) for x in s.split(",")], dtype=dtype) for s in args.shape)
        if args.channels_last:
            model = model.to(memory_format=torch.channels_last)
        text = export_mlir(model, inputs, args.dynamic_batch, dynamic_spatial=args.dynamic_spatial)
    except ConvcError as e:
        print(f"convc: error: {e}", file=sys.stderr)
        return 1
    with open(args.output, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
