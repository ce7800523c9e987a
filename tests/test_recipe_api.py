"""A recipe imports from one module of ``training/`` (``harness_ext/training/recipe_api.py``), as TRL's
scripts import from ``trl``: the families' ``improve`` modules and the task layer's recipe helpers name
no other training module, so the modules behind the one import may move without a recipe's edit."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAINING = "logic_consistency.harness_ext.training"


def _training_imports(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(TRAINING):
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names if alias.name.startswith(TRAINING))
    return modules


def test_every_recipe_module_imports_from_the_one_recipe_api() -> None:
    recipe_modules = sorted(ROOT.glob("tasks/*/improve*.py")) + sorted(ROOT.glob("tasks/improve_*.py"))
    assert len(recipe_modules) >= 10, recipe_modules  # both families' recipes are seen
    used = {path.relative_to(ROOT).as_posix(): _training_imports(path) for path in recipe_modules}
    others = {path: modules - {f"{TRAINING}.recipe_api"} for path, modules in used.items()}
    assert not any(others.values()), {path: sorted(modules) for path, modules in others.items() if modules}
    assert any(used.values())


def test_the_recipe_api_exports_what_it_imports() -> None:
    from logic_consistency.harness_ext.training import recipe_api

    tree = ast.parse(Path(recipe_api.__file__).read_text(encoding="utf-8"))
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) and node.level
                for alias in node.names}  # fmt: skip
    assert imported == set(recipe_api.__all__)
