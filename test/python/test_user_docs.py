"""What a new user reads: install names that work from the checkout, a Python API page whose
names exist, the basics (license, changelog, version), and user pages that say what holds now
(commit-by-commit history lives in results/index.jsonl and bench/NOTES.md)."""

import glob
import importlib
import os
import re

from conftest import REPO

DOCS = sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))) + [os.path.join(REPO, "README.md")]


def _read(path):
    with open(path) as f:
        return f.read()


def test_install_names_work_from_the_checkout():
    files = DOCS + glob.glob(os.path.join(REPO, "compiler", "*.py")) + glob.glob(os.path.join(REPO, "tools", "*.py"))
    for path in files:
        assert "'convc[" not in _read(path) and "convc[onnx]" not in _read(path), path
    pyproject = _read(os.path.join(REPO, "pyproject.toml"))
    for extra in ("onnx", "torch", "vision", "test"):
        assert re.search(rf"^{extra} = \[", pyproject, re.M), extra


def test_basics_exist():
    for name in ("LICENSE", "CHANGELOG.md", os.path.join("docs", "api.md"), os.path.join("docs", "runtime.md")):
        assert os.path.isfile(os.path.join(REPO, name)), name
    readme = _read(os.path.join(REPO, "README.md"))
    assert "local-task" in readme and "docs/api.md" in readme and "minutes" in readme


def test_api_page_names_exist():
    from convc.compiler.driver import CompileOptions, CompileResult
    from convc.runtime.module import LoadedModule
    page = _read(os.path.join(REPO, "docs", "api.md"))
    for module, name in re.findall(r"from (convc\.[\w.]+) import ([\w, ]+)", page):
        for n in name.split(","):
            assert hasattr(importlib.import_module(module), n.strip()), (module, n)
    for field in ("target", "precision", "dump_dir", "no_fallback", "extra_flags", "tuning_cache", "tuning_device"):
        assert field in CompileOptions.__dataclass_fields__
    for attr in ("reports", "transposes", "structure", "timings", "notes"):
        assert attr in CompileResult.__dataclass_fields__
    for method in ("entry", "call", "function", "to_device"):
        assert hasattr(LoadedModule, method)


def test_user_pages_are_not_measurement_logs():
    for path in DOCS:
        text = _read(path)
        assert not re.search(r"\b(at|commit|since|built from) [0-9a-f]{7}\b", text), path
