"""Quantized (int8) models and layers: QDQ ONNX models quantized here, and the int8 bench suite.

  python3 -m convc.tools.quantized qdq MODEL.onnx -o Q.onnx [--asymmetric] [--per-tensor]
  python3 -m convc.tools.quantized suite -o SUITE.json      (f16, i8 and fp8 ResNet-50 layers)

`qdq` quantizes a float ONNX model the way users do: onnxruntime's `quantize_static` in QDQ
format (QuantizeLinear/DequantizeLinear around each Conv), int8 activations and per-channel
int8 weights, calibrated on synthetic data (random inputs of the model's shape, drawn from a
fixed seed). Activations are symmetric by default (zero point 0, as TensorRT quantizes);
`--asymmetric` keeps onnxruntime's default asymmetric activations, whose padded convs convc
pads with the zero point in a dispatch of its own (passes/layout/quantized.py). The reference
for such a model is onnxruntime's own CPU result on the same QDQ model.

`suite` writes the 8-bit bench suite: the ResNet-50 group of the layer suite as the suite's
f16 layers, as i8 layers of the same shapes (tools.layers: s8 x s8 summed in i32, requantized to
i8 in the epilogue) and as fp8 layers (e4m3 operands; e5m2 for the 3x3s too) whose output is
their f32 sums (the fp8 epilogue does not requantize yet, so they write 4 bytes an output where
the f16 twins write 2), so one bench run times convc's 8-bit kernels against its own f16 ones.
The RGB stem (C = 3: no 16-byte channel rows for 8-bit TMA) and fp8 layers of C = 64 with a
window (the fp8 kernel steps 64 channels of K) are left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

import numpy as np

from .layers import Layer, load_suite


def int8_suite_layers() -> list[Layer]:
    """The suite's ResNet-50 layers (f16), their i8 twins (group resnet50_i8) and fp8 twins
    (groups resnet50_f8e4m3 and, for the 3x3s, resnet50_f8e5m2)."""
    f16 = [L for L in load_suite() if L.group == "resnet50" and L.C % 16 == 0]
    i8 = [dataclasses.replace(L, name=L.name + "_i8", dtype="i8", group="resnet50_i8") for L in f16]
    fp8 = [dataclasses.replace(L, name=f"{L.name}_{tag}", dtype=dtype, group=f"resnet50_{tag}", epilogue="none")
           for tag, dtype, keep in (("f8e4m3", "f8E4M3FN", lambda L: True), ("f8e5m2", "f8E5M2", lambda L: L.R == 3))
           for L in f16 if keep(L) and (L.C % 64 == 0 and (L.C >= 128 or L.R * L.S == 1))]
    return f16 + i8 + fp8


def write_suite(path: str) -> list[Layer]:
    layers = int8_suite_layers()
    with open(path, "w") as f:
        json.dump({"about": "convc 8-bit bench suite: ResNet-50 layers in f16, i8 and fp8 (tools/quantized.py)",
                   "layers": [dataclasses.asdict(L) for L in layers]}, f, indent=1)
    return layers


class _Calibration:
    """onnxruntime's CalibrationDataReader over `count` random inputs (fixed seed)."""

    def __init__(self, feeds: list[dict]):
        self._it = iter(feeds)

    def get_next(self):
        return next(self._it, None)

    def rewind(self):      # onnxruntime >= 1.17 calls it between calibration passes
        pass


def calibration_feeds(model_path: str, count: int = 8, seed: int = 0) -> list[dict]:
    """Random inputs for each graph input of a float ONNX model (static shapes), N(0, 1)."""
    import onnx
    m = onnx.load(model_path)
    init = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        feed = {}
        for v in m.graph.input:
            if v.name in init:
                continue
            shape = [d.dim_value for d in v.type.tensor_type.shape.dim]
            if not all(shape):
                raise ValueError(f"input {v.name} has a dynamic shape: calibration needs a static one")
            feed[v.name] = rng.standard_normal(shape).astype(np.float32)
        feeds.append(feed)
    return feeds


# how a float model is quantized (quantize): onnxruntime's formats, as users write them
#   qdq      quantize_static, QDQ format, int8 activations (symmetric unless asked otherwise)
#   qdq_u8   quantize_static, QDQ format, uint8 activations with zero points (onnxruntime's default)
#   qlinear  quantize_static, operator format on the convs: QLinearConv (uint8 activations)
#   integer  quantize_dynamic on the convs: DynamicQuantizeLinear -> ConvInteger -> float scale
FORMATS = ("qdq", "qdq_u8", "qlinear", "integer")


def _pre_processed(model_path: str, out_path: str) -> str:
    """onnxruntime's recommended pre-processing (shape inference and graph optimization, which
    folds BatchNorms into their convs), after converting models of opsets before 13 (no
    per-channel DequantizeLinear) and IR versions before 7 to opset 17 / IR 8."""
    import onnx
    from onnxruntime.quantization.shape_inference import quant_pre_process
    m = onnx.load(model_path)
    if next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 17) < 13 or m.ir_version < 7:
        m = onnx.version_converter.convert_version(m, 17)
        m.ir_version = 8
    converted = out_path + ".pre.onnx"
    onnx.save(m, converted)
    quant_pre_process(converted, converted)
    return converted


def quantize(model_path: str, out_path: str, fmt: str = "qdq", per_channel: bool = True, count: int = 8,
             seed: int = 0) -> None:
    """A float ONNX model -> its quantized model in one of FORMATS. The operator and dynamic
    formats quantize only the convs: onnxruntime writes their other quantized ops (QLinearAdd,
    QLinearGlobalAveragePool...) in its own com.microsoft domain, which no ONNX importer reads."""
    if fmt in ("qdq", "qdq_u8"):
        qdq_quantize(model_path, out_path, symmetric=fmt == "qdq", per_channel=per_channel, count=count, seed=seed,
                     activations="uint8" if fmt == "qdq_u8" else "int8")
        return
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static
    if fmt not in FORMATS:
        raise ValueError(f"unknown quantization format {fmt!r} (one of {', '.join(FORMATS)})")
    converted = _pre_processed(model_path, out_path)
    if fmt == "qlinear":
        quantize_static(converted, out_path, _Calibration(calibration_feeds(converted, count, seed)),
                        quant_format=QuantFormat.QOperator, per_channel=per_channel, op_types_to_quantize=["Conv"],
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    else:
        quantize_dynamic(converted, out_path, per_channel=per_channel, op_types_to_quantize=["Conv"],
                         weight_type=QuantType.QInt8)
    os.remove(converted)


def qdq_quantize(model_path: str, out_path: str, symmetric: bool = True, per_channel: bool = True,
                 count: int = 8, seed: int = 0, activations: str = "int8") -> None:
    """A float ONNX model -> its QDQ int8 model (onnxruntime quantize_static), after
    onnxruntime's recommended pre-processing (_pre_processed). activations: "int8", or
    "uint8" (onnxruntime's default activation type)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    model_path = _pre_processed(model_path, out_path)
    reader = _Calibration(calibration_feeds(model_path, count, seed))
    quantize_static(model_path, out_path, reader, quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=QuantType.QUInt8 if activations == "uint8" else QuantType.QInt8,
                    weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": symmetric, "WeightSymmetric": True})
    os.remove(model_path)


def small_net(path: str, N: int = 2, C: int = 16, H: int = 10, W: int = 9, seed: int = 0,
              depthwise: bool = False, pool: bool = False, downsample: bool = False,
              classifier: bool = False) -> None:
    """A float ONNX test net of the conv kinds a quantized CNN has: a padded 3x3 (bias, ReLU;
    `pool`: then a 3x3 max-pool, stride 1, padded), a strided 3x3 (`depthwise`: a depthwise one,
    as MobileNets have), a 1x1 with a residual add (`downsample`: of another 1x1 conv's output,
    as a ResNet stage's first block adds its projection shortcut), a 1x1 to a float output
    (`classifier`: then a global average pool, a flatten and a Gemm to 32 logits, as
    classification CNNs end)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)

    def weight(name, f, c, k):
        return numpy_helper.from_array((rng.standard_normal((f, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32), name)

    def bias(name, f):
        return numpy_helper.from_array((rng.standard_normal(f) * 0.1).astype(np.float32), name)

    inits = [weight("w1", 32, C, 3), bias("b1", 32), weight("w2", 32, 1 if depthwise else 32, 3), bias("b2", 32),
             weight("w3", 32, 32, 1), bias("b3", 32), weight("w4", 24, 32, 1), bias("b4", 24),
             *([weight("wd", 32, 32, 1), bias("bd", 32)] if downsample else []),
             *([numpy_helper.from_array((rng.standard_normal((32, 24)) / np.sqrt(24)).astype(np.float32), "wg"),
                bias("bg", 32)] if classifier else [])]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1" if not pool else "r1p"]),
             *([helper.make_node("MaxPool", ["r1p"], ["r1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])] if pool else []),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2],
                              group=32 if depthwise else 1),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"]),
             *([helper.make_node("Conv", ["r2", "wd", "bd"], ["cd"])] if downsample else []),
             helper.make_node("Add", ["c3", "cd" if downsample else "r2"], ["a3"]),
             helper.make_node("Relu", ["a3"], ["r3"]),
             helper.make_node("Conv", ["r3", "w4", "b4"], ["y" if not classifier else "c4"])]
    if classifier:
        nodes += [helper.make_node("GlobalAveragePool", ["c4"], ["gp"]),
                  helper.make_node("Flatten", ["gp"], ["fl"]),
                  helper.make_node("Gemm", ["fl", "wg", "bg"], ["y"], transB=1)]
    Ho, Wo = (H + 1) // 2, (W + 1) // 2
    g = helper.make_graph(nodes, "qnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                         [N, 32] if classifier else [N, 24, Ho, Wo])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def ort_reference(model_path: str, feed: dict) -> list[np.ndarray]:
    """onnxruntime's CPU outputs of a model (the reference for a QDQ model)."""
    import onnxruntime as ort
    return ort.InferenceSession(model_path, providers=["CPUExecutionProvider"]).run(None, feed)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m convc.tools.quantized", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["qdq", "suite"])
    p.add_argument("model", nargs="?", help="qdq: the float ONNX model")
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--asymmetric", action="store_true", help="qdq: asymmetric activations (zero points)")
    p.add_argument("--per-tensor", action="store_true", help="qdq: one weight scale per tensor")
    p.add_argument("--calibration", type=int, default=8, help="qdq: random calibration inputs")
    args = p.parse_args(argv)
    if args.action == "suite":
        layers = write_suite(args.out)
        print(f"{len(layers)} layers -> {args.out}")
        return 0
    if not args.model:
        p.error("qdq needs the float model")
    qdq_quantize(args.model, args.out, symmetric=not args.asymmetric, per_channel=not args.per_tensor,
                 count=args.calibration)
    print(f"QDQ int8 model -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
