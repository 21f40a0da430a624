"""Every convc module imports without the optional dependencies (PyTorch, torchvision, CuPy):
a fresh `pip install -e '.[test]'` has none of them, and the test suite imports these modules.
Only the PyTorch model definitions of convc-e2e need PyTorch to load."""

import subprocess
import sys
import textwrap

NEEDS_TORCH = {"convc.tools.e2e_models"}


def test_modules_import_without_optional_dependencies():
    script = textwrap.dedent("""
        import importlib, pkgutil, sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "torchvision", "cupy"):
                    raise ModuleNotFoundError(f"No module named {name!r}")
        sys.meta_path.insert(0, Block())
        for pkg in ("convc.compiler", "convc.passes", "convc.runtime", "convc.tools"):
            for info in pkgutil.walk_packages(importlib.import_module(pkg).__path__, pkg + "."):
                try:
                    importlib.import_module(info.name)
                except ModuleNotFoundError as e:
                    print(info.name, e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    failing = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert failing <= NEEDS_TORCH, out
