"""lit configuration: FileCheck tests of convc passes, the CLI and generated code."""

import os
import shutil
import sys

import lit.formats

config.name = "convc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["inputs", "python", "Output"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

# FileCheck: LLVM's if on PATH, else the `filecheck` package (pip).
filecheck = shutil.which("FileCheck") or shutil.which("filecheck")
if filecheck is None:
    raise RuntimeError("no FileCheck: pip install filecheck")
config.substitutions.append(("FileCheck", filecheck))
config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "inputs")))
config.environment["PATH"] = os.environ.get("PATH", "")
for var in ("HOME", "PYTHONPATH", "VIRTUAL_ENV"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Hermetic planning: no tuning cache unless a test names one.
config.environment["CONVC_TUNING_CACHE"] = "none"
