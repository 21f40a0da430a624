"""Model front ends: what `convc` accepts besides MLIR text, turned into MLIR text.

- `.onnx` files are imported with IREE's ONNX importer (`iree-import-onnx`, shipped with
  iree-base-compiler; it needs the `onnx` package: `pip install -e '.[onnx]'` in the checkout). Old opsets are
  upgraded to ONNX_OPSET first: IREE's ONNX lowering handles some old forms only after the
  upgrade (e.g. opset-9 BatchNormalization). QLinearConv nodes are rewritten into their QDQ form
  first (`onnx_qlinear.py`: IREE's own import of them drops the bias scale).
- PyTorch modules go through `convc.compiler.pytorch` (torch.export + IREE's FX importer).

A file whose bytes are not MLIR text (an ONNX protobuf or MLIR bytecode named `.mlir`) gets a
one-line hint instead of a parser error.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from .errors import ConvcError

ONNX_OPSET = 17


def _looks_binary(data: bytes) -> bool:
    head = data[:4096]
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start < len(head) - 4      # a multi-byte char cut at the window's end is fine
    return False


def import_onnx(path: str, out_path: str) -> None:
    """Imports an ONNX model to MLIR (torch dialect, which iree-compile lowers)."""
    try:
        import onnx  # noqa: F401  (the importer needs it; say so before it fails)
    except ImportError:
        raise ConvcError("importing ONNX models needs the onnx package: "
                         "python3 -m pip install onnx (or, in the convc checkout, python3 -m pip install -e '.[onnx]')") from None
    path = _qdq_form(path, out_path)
    cmd = [sys.executable, "-m", "iree.compiler.tools.import_onnx", path,
           "--opset-version", str(ONNX_OPSET), "-o", out_path]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
        last = lines[-1].strip() if lines else f"exit {proc.returncode}"
        # the repro writes next to the user, not into convc's work directory (gone by then)
        repro = ["iree-import-onnx", path, *cmd[4:-1], os.path.basename(out_path)]
        raise ConvcError(f"ONNX import failed: {last} (repro: {shlex.join(repro)})")


def _qdq_form(path: str, out_path: str) -> str:
    """The model to import: `path`, or, where it has QLinearConv nodes, their QDQ form written
    beside out_path (onnx_qlinear.py: IREE's own import of QLinearConv drops the bias scale)."""
    import onnx
    from .onnx_qlinear import has_qlinear_conv, rewrite_qlinear_convs
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception:          # not loadable here: the importer says why
        return path
    if not has_qlinear_conv(model):
        return path
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        model = onnx.load(path)
    rewritten = os.path.splitext(out_path)[0] + ".qdq.onnx"
    onnx.save(rewrite_qlinear_convs(model, ONNX_OPSET), rewritten)
    return rewritten


def read_model(path: str, tmp_dir: str) -> str:
    """MLIR text of the model at `path` (.mlir text, `-` for standard input, or .onnx
    imported into tmp_dir)."""
    if path == "-":
        data = sys.stdin.buffer.read()
        if _looks_binary(data) or data.startswith(b"ML\xefR"):
            raise ConvcError("standard input is not MLIR text: an ONNX model (or MLIR bytecode) is read from a file "
                             "(convc model.onnx -o out.vmfb)")
        text = data.decode("utf-8", errors="replace")
        if not text.strip():
            raise ConvcError("standard input is empty: expected an MLIR module")
        return text
    if os.path.isdir(path):
        raise ConvcError(f"input is a directory, not a model file: {path}")
    if not os.path.isfile(path):
        raise ConvcError(f"input file not found: {path}")
    with open(path, "rb") as f:
        data = f.read()
    if path.lower().endswith(".onnx"):
        out = os.path.join(tmp_dir, os.path.splitext(os.path.basename(path))[0] + ".onnx.mlir")
        import_onnx(path, out)
        with open(out, encoding="utf-8") as f:
            return f.read()
    if data.startswith(b"ML\xefR"):
        raise ConvcError(f"{path} is MLIR bytecode; convc reads MLIR text (convert it with "
                         "iree-ir-tool copy, or pass the .mlir text)")
    if _looks_binary(data):
        raise ConvcError(f"{path} is not MLIR text; if it is an ONNX model, name it .onnx "
                         "(convc model.onnx -o out.vmfb)")
    text = data.decode("utf-8")
    if not text.strip():
        raise ConvcError(f"{path} is empty: expected an MLIR module (linalg on tensors) or an ONNX model")
    return text
