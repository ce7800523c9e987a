"""Module docstrings say what and why in a few lines (a formula and its reference stay; history and
long discussion belong in the docs): at most MAX_LINES lines, in the package and its scripts."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 15
_SKIPPED_FOLDERS = {"tests", "build", "dist", "docs"}


def docstring_lines() -> dict[str, int]:
    """Lines of each module docstring of the package and its scripts, by path from the root."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in _SKIPPED_FOLDERS or any(part.startswith(".") for part in relative.parts):
            continue
        body = ast.parse(path.read_text(encoding="utf-8")).body
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            out[relative.as_posix()] = (first.end_lineno or first.lineno) - first.lineno + 1
    return out


def test_no_module_docstring_is_over_the_limit() -> None:
    lines = docstring_lines()
    assert "cli/__init__.py" in lines and "metrics/transitivity.py" in lines
    over = {path: n for path, n in lines.items() if n > MAX_LINES}
    assert not over, f"module docstrings over {MAX_LINES} lines: {over}"
