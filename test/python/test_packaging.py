"""Every Python package of the tree is in pyproject's package list: a non-editable install
(`pip install .`, a wheel, the device scripts' `--target` install) ships only what it lists, and
the editable install the README uses would not notice a missing one."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

tomllib = pytest.importorskip("tomllib") if sys.version_info >= (3, 11) else pytest.importorskip("tomli")


def test_every_package_is_listed():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        cfg = tomllib.load(f)["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = set()
    for name, path in cfg["package-dir"].items():
        for dirpath, _, files in os.walk(os.path.join(ROOT, path)):
            if "__init__.py" in files:
                rel = os.path.relpath(dirpath, os.path.join(ROOT, path))
                found.add(name if rel == "." else name + "." + rel.replace(os.sep, "."))
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"
