"""The layering rule of the README's "Repository layout" section, checked on every module's imports.

Folders are layers and imports run one way::

    common (neutral helpers) ; metrics (pure) <- harness_ext <- tasks <- leaderboard <- cli

* ``logic_consistency.common`` and ``logic_consistency.options`` (neutral helpers) and ``metrics``
  import nothing of the suite (``metrics`` not even
  ``common``: it is a pure library of array functions).
* ``harness_ext`` (generic lm-eval machinery) imports ``common`` and ``metrics`` only: it knows no
  dataset and no task family.
* ``tasks`` imports ``common``, ``metrics`` and ``harness_ext``.
* ``leaderboard`` reads results and samples files; it imports ``common``, ``metrics``,
  ``harness_ext`` and, of ``tasks``, only the family-neutral report registry ``tasks.reports``.
* ``cli`` (the console entry point) sits on top and may import every layer.

The test parses each module with :mod:`ast` (absolute and relative imports, also those inside
functions), so it also catches imports a test run would never execute.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "logic_consistency"
LAYER_FOLDERS = ("metrics", "harness_ext", "tasks", "leaderboard")

#: layer -> the suite modules (prefixes) it may import, besides itself.
ALLOWED: dict[str, tuple[str, ...]] = {
    "root": (),  # logic_consistency/__init__.py
    "common": (),
    "options": (),
    "metrics": (),
    "harness_ext": ("common", "options", "metrics", "root"),
    "tasks": ("common", "options", "metrics", "harness_ext", "root"),
    "leaderboard": ("common", "options", "metrics", "harness_ext", "tasks.reports", "root"),
    "cli": ("common", "options", "metrics", "harness_ext", "tasks", "leaderboard", "root"),
}


def _modules() -> list[tuple[str, Path]]:
    out = [(f"{PACKAGE}", ROOT / "__init__.py"), (f"{PACKAGE}.common", ROOT / "common.py"),
           (f"{PACKAGE}.cli", ROOT / "cli.py"), (f"{PACKAGE}.options", ROOT / "options.py")]
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
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
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
            # is not a module (``from ..common import atomic_write``) lands in the same layer.
            found.update(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
            found.add(target)
    return {name for name in found if name == PACKAGE or name.startswith(f"{PACKAGE}.")}


def _allowed(importer: str, imported: str) -> bool:
    layer, target_layer = _layer(importer), _layer(imported)
    if target_layer == layer:
        return True
    if imported == PACKAGE or imported == f"{PACKAGE}.__version__":  # only the version lives there
        return "root" in ALLOWED[layer]
    relative = imported[len(PACKAGE) + 1:]
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
