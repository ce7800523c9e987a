"""The layering rule of the README's "Repository layout" section, checked on every module's imports.

Folders are layers and imports run one way::

    common, credentials, outputs, options, subcommands (neutral helpers) ; metrics (pure) <- harness_ext <- tasks <- leaderboard <- cli

* ``logic_consistency.common``, ``logic_consistency.credentials``, ``logic_consistency.outputs``,
  ``logic_consistency.options`` and ``logic_consistency.subcommands`` (neutral helpers) and
  ``metrics`` import nothing of the suite (``metrics`` not even ``common``: it is a pure library of
  array functions), except that ``outputs`` (the one writer) uses ``credentials`` to redact secrets.
* ``harness_ext`` (generic lm-eval machinery) imports the neutral helpers and ``metrics`` only: it
  knows no dataset and no task family.
* ``tasks`` imports the neutral helpers, ``metrics`` and ``harness_ext``.
* ``leaderboard`` reads results and samples files; it imports the neutral helpers, ``metrics``,
  ``harness_ext`` and, of ``tasks``, only the family-neutral report registry ``tasks.reports``.
* ``cli`` (the console entry point) sits on top and may import every layer.

Inside ``tasks``, a family (a sub-package other than ``data``: ``pairwise``, ``gv``, ``causal``)
imports no other family; what families share lives in neutral ``tasks`` modules (``tasks.answers``,
``tasks.reports``, the loaders in ``tasks.data``), which import no family.

The test parses each module with :mod:`ast` (absolute and relative imports, also those inside
functions), so it also catches imports a test run would never execute. Imports in disguise count
too: a string constant that is a suite module name (``importlib.import_module("logic_consistency.x")``,
a table of module names, the leading constant part of an f-string) and the module a subprocess
runs with ``-m``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "logic_consistency"
LAYER_FOLDERS = ("metrics", "harness_ext", "tasks", "leaderboard")

#: The neutral helpers every layer but ``metrics`` may import.
NEUTRAL = ("common", "credentials", "outputs", "options", "subcommands")
#: layer -> the suite modules (prefixes) it may import, besides itself.
ALLOWED: dict[str, tuple[str, ...]] = {
    "root": (),  # logic_consistency/__init__.py
    "common": (),
    "credentials": (),
    "outputs": ("credentials",),  # the one writer redacts key environment variables' values
    "options": (),
    "subcommands": (),
    "metrics": (),
    "harness_ext": (*NEUTRAL, "metrics", "root"),
    "tasks": (*NEUTRAL, "metrics", "harness_ext", "root"),
    "leaderboard": (*NEUTRAL, "metrics", "harness_ext", "tasks.reports", "root"),
    "cli": (*NEUTRAL, "metrics", "harness_ext", "tasks", "leaderboard", "root"),
}


def _modules() -> list[tuple[str, Path]]:
    out = [
        (f"{PACKAGE}", ROOT / "__init__.py"),
        (f"{PACKAGE}.common", ROOT / "common.py"),
        (f"{PACKAGE}.credentials", ROOT / "credentials.py"),
        (f"{PACKAGE}.outputs", ROOT / "outputs.py"),
        (f"{PACKAGE}.cli", ROOT / "cli.py"),
        (f"{PACKAGE}.options", ROOT / "options.py"),
        (f"{PACKAGE}.subcommands", ROOT / "subcommands.py"),
    ]
    for folder in LAYER_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.append((".".join([PACKAGE, *parts]), path))
    return out


def _layer(module: str) -> str:
    """``logic_consistency.tasks.gv.common`` -> ``tasks``; the package itself -> ``root``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "root"


def _suite_imports(module: str, path: Path) -> set[str]:
    """Every ``logic_consistency.*`` module ``path`` imports, relative imports resolved."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from logic_consistency import tasks`` imports the sub-package ``tasks``; a name that
            # is not a module (``from ..outputs import atomic_write``) lands in the same layer.
            found.update(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
            found.add(target)
    found.update(_string_imports(tree))
    return {name for name in found if name == PACKAGE or name.startswith(f"{PACKAGE}.")}


#: A dotted suite module name; the bare package name is left out (it is also the suite's logger name).
_MODULE_NAME = re.compile(rf"{PACKAGE}(?:\.\w+)+")


def _string_imports(tree: ast.AST) -> set[str]:
    """Suite modules named in strings: whole-string module names, f-string prefixes, ``-m`` targets."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_NAME.fullmatch(node.value):
            found.add(node.value)  # "logic_consistency.tasks.causal.report", also after "-m"
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith(f"{PACKAGE}."):
                found.add(head.value.rstrip("."))  # f"logic_consistency.tasks.data.{name}"
        elif isinstance(node, (ast.List, ast.Tuple)):
            items = node.elts
            for flag, target in zip(items, items[1:]):
                if isinstance(flag, ast.Constant) and flag.value == "-m" and isinstance(target, ast.Constant):
                    found.add(str(target.value))
    return found


def _family(module: str) -> str | None:
    """``logic_consistency.tasks.gv.common`` -> ``gv``; neutral task modules and other layers -> None.

    A family is a sub-package (folder) of ``tasks`` other than ``data``; ``tasks.answers`` and
    ``tasks.reports`` (modules, and names inside them) are neutral.
    """
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "tasks" and parts[2] != "data" and (ROOT / "tasks" / parts[2]).is_dir():
        return parts[2]
    return None


def _allowed(importer: str, imported: str) -> bool:
    layer, target_layer = _layer(importer), _layer(imported)
    if target_layer == layer:
        if layer == "tasks":  # a family imports only itself and neutral task modules
            target_family = _family(imported)
            return target_family is None or target_family == _family(importer)
        return True
    if imported == PACKAGE or imported == f"{PACKAGE}.__version__":  # only the version lives there
        return "root" in ALLOWED[layer]
    relative = imported[len(PACKAGE) + 1 :]
    return any(relative == prefix or relative.startswith(f"{prefix}.") for prefix in ALLOWED[layer])


MODULES = _modules()


def test_every_layer_is_scanned() -> None:
    layers = {_layer(module) for module, _ in MODULES}
    assert layers == set(ALLOWED), layers
    assert len(MODULES) > 40


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[module for module, _ in MODULES])
def test_imports_run_one_way(module: str, path: Path) -> None:
    bad = sorted(name for name in _suite_imports(module, path) if not _allowed(module, name))
    assert not bad, f"{path.relative_to(ROOT)} ({_layer(module)}) imports {bad}; see the README's layout rule"


def test_the_rule_catches_a_backward_import(tmp_path: Path) -> None:
    """The checker itself: a harness_ext module importing a task family is reported."""
    source = tmp_path / "bad.py"
    source.write_text("from logic_consistency.tasks.gv import common\nfrom ..leaderboard import ingest\n")
    imports = _suite_imports(f"{PACKAGE}.harness_ext.bad", source)
    assert {f"{PACKAGE}.tasks.gv.common", f"{PACKAGE}.leaderboard.ingest"} <= imports
    assert not any(_allowed(f"{PACKAGE}.harness_ext.bad", name) for name in imports)
    assert _allowed(f"{PACKAGE}.leaderboard.ingest", f"{PACKAGE}.tasks.reports")
    assert not _allowed(f"{PACKAGE}.leaderboard.ingest", f"{PACKAGE}.tasks.causal.report")


def test_the_rule_catches_imports_in_disguise(tmp_path: Path) -> None:
    """Module names in strings and ``-m`` targets count, and one family may not import another."""
    source = tmp_path / "bad.py"
    source.write_text(
        "import importlib, subprocess, sys\n"
        "importlib.import_module('logic_consistency.tasks.causal.report')\n"
        "name = 'x'\n"
        "importlib.import_module(f'logic_consistency.leaderboard.{name}')\n"
        "subprocess.run([sys.executable, '-m', 'logic_consistency.cli', 'model-path'])\n"
        "from logic_consistency.tasks.pairwise import task\n"
    )
    imports = _suite_imports(f"{PACKAGE}.tasks.reports", source)
    assert {f"{PACKAGE}.tasks.causal.report", f"{PACKAGE}.leaderboard", f"{PACKAGE}.cli"} <= imports
    assert not _allowed(f"{PACKAGE}.tasks.reports", f"{PACKAGE}.tasks.causal.report")
    assert not _allowed(f"{PACKAGE}.tasks.gv.parsing", f"{PACKAGE}.tasks.pairwise.task")
    assert not _allowed(f"{PACKAGE}.tasks.gv.parsing", f"{PACKAGE}.tasks.pairwise")
    assert _allowed(f"{PACKAGE}.tasks.gv.parsing", f"{PACKAGE}.tasks.answers")
    assert _allowed(f"{PACKAGE}.tasks.causal.hooks", f"{PACKAGE}.tasks.data.delta_causal")
    assert _allowed(f"{PACKAGE}.tasks.gv.common", f"{PACKAGE}.tasks.gv.parsing")
    assert not _allowed(f"{PACKAGE}.leaderboard.runner", f"{PACKAGE}.cli")
