"""Every option of every command-line tool has help text (the console scripts and the
`python3 -m convc...` modules the device scripts call)."""

import argparse
import importlib
import sys

import pytest

# (module, entry function): run with `--help` while argparse is intercepted
TOOLS = [
    ("convc.compiler.cli", "_cli_main"), ("convc.tools.opt", "_cli_main"), ("convc.tools.gpu.check", "_cli_main"),
    ("convc.tools.suite", "_cli_main"), ("convc.tools.bench", "_cli_main"), ("convc.tools.tune", "_cli_main"),
    ("convc.tools.models", "_cli_main"), ("convc.tools.e2e", "_cli_main"), ("convc.tools.fuzz", "_cli_main"),
    ("convc.tools.sm100_table", "_cli_main"), ("convc.tools.amd_table", "_cli_main"),
    ("convc.compiler.pytorch", "main"), ("convc.tools.gpu.bench", "main"), ("convc.tools.gpu.e2e", "main"),
    ("convc.tools.gpu.model_check", "main"), ("convc.tools.gpu.trace", "main"),
    ("convc.tools.gpu.tune", "main"), ("convc.runtime.invoke", "main"), ("convc.tools.gpu.bench_ncu", "main"),
]


class _Captured(Exception):
    pass


def _parsers(module: str, entry: str, monkeypatch) -> list[argparse.ArgumentParser]:
    """The parser a tool builds (and its subcommands' parsers)."""
    seen = []

    def capture(self, args=None, namespace=None):
        seen.append(self)
        raise _Captured

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", capture)
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    fn = getattr(importlib.import_module(module), entry)
    with pytest.raises((_Captured, SystemExit)):
        try:
            fn()
        except TypeError:                    # main(args): called by _cli_main with parsed args
            fn(None)
    out, todo = [], list(seen)
    while todo:
        p = todo.pop()
        out.append(p)
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                todo += list(a.choices.values())
    return out


@pytest.mark.parametrize("module, entry", TOOLS, ids=[m for m, _ in TOOLS])
def test_every_option_has_help(module, entry, monkeypatch):
    parsers = _parsers(module, entry, monkeypatch)
    assert parsers, f"{module} built no argument parser"
    missing = [f"{p.prog}: {'/'.join(a.option_strings) or a.dest}" for p in parsers for a in p._actions
               if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and not (a.help or "").strip()]
    assert not missing, missing
