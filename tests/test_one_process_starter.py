"""One way to start a child process (issue 47, item 4): the package and ``scripts/`` start every child
through ``harness_ext/jobs/processes.py`` (its own group, the parent-death signal, a stop that reaches
what it started), and the tests through ``tests/children.py``, which is built on it.

Read with :mod:`ast`, so a child program held in a string (a stand-in ``lm_eval`` that starts its own
helper, what a test is about) is not counted; a call of :mod:`subprocess`'s or :mod:`os`'s starters
anywhere else is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The starters of :mod:`subprocess` and :mod:`os` (and ``Popen`` imported by name).
STARTERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
    "os": {"system", "popen", "spawnl", "spawnv", "spawnvp", "execv", "execvp", "execl", "posix_spawn", "fork"},
}
#: Where a child may be started: the package's one starter, and the tests' helper built on it.
ALLOWED = {"harness_ext/jobs/processes.py", "tests/children.py"}


def _files() -> list[Path]:
    skipped = {".venv", ".typecheck", "build", "dist", "node_modules"}
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not any(part in skipped or part.startswith(".") for part in path.relative_to(ROOT).parts)
    )


def starts(source: str) -> list[str]:
    """``module.name`` of every call of a process starter in ``source`` (strings are not code)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in STARTERS:
            found += [f"{node.module}.{a.name}" for a in node.names if a.name in STARTERS[node.module]]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and node.func.attr in STARTERS.get(owner.id, ()):
                found.append(f"{owner.id}.{node.func.attr}")
    return found


FILES = _files()


def test_the_files_are_read() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in FILES}
    assert ALLOWED <= names and "scripts/bench_chat_judge.py" in names and "tests/conftest.py" in names


@pytest.mark.parametrize("path", FILES, ids=[path.relative_to(ROOT).as_posix() for path in FILES])
def test_children_start_in_one_place(path: Path) -> None:
    relative = path.relative_to(ROOT).as_posix()
    found = starts(path.read_text(encoding="utf-8"))
    assert relative in ALLOWED or not found, (
        f"{relative} starts a child with {found}: use harness_ext/jobs/processes.py (tests: tests/children.py)"
    )


def test_the_check_sees_a_start_and_not_a_string() -> None:
    source = (
        "import os, subprocess\n"
        "from subprocess import Popen\n"
        "subprocess.run(['x'])\n"
        "os.system('x')\n"
        'PROGRAM = \'import subprocess; subprocess.Popen(["sleep", "9"])\'\n'
    )
    assert sorted(starts(source)) == ["os.system", "subprocess.Popen", "subprocess.run"]
