"""A doc that tells the reader to run pytest says first that the test set-up comes before it:
``scripts/setup.sh`` alone installs no pytest, so a bare pytest command fails with "No module named pytest"."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_check import commands, doc_files  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def unprepared_pytest(path: Path, text: str) -> list[str]:
    """Where ``path`` runs pytest before any ``scripts/setup.sh test`` (``scripts/test.sh`` sets up itself)."""
    ready, found = False, []
    for command in commands(path, text):
        words = command.words
        if any(word.endswith("scripts/setup.sh") for word in words) and "test" in words:
            ready = True
        elif "pytest" in words and not ready:
            found.append(command.where())
    return found


def test_a_bare_pytest_command_is_found() -> None:
    planted = "## Tests\n\n```bash\n.venv/bin/python -m pytest tests/leaderboard -q\n```\n"
    assert unprepared_pytest(Path("planted.md"), planted) == ["planted.md:4"]
    prepared = planted.replace("```bash\n", "```bash\nbash scripts/setup.sh test\n")
    assert unprepared_pytest(Path("planted.md"), prepared) == []


def test_every_doc_sets_up_the_tests_before_it_runs_pytest() -> None:
    found = [where for path in doc_files(ROOT) for where in unprepared_pytest(path, path.read_text(encoding="utf-8"))]
    assert not found, f"pytest run before `bash scripts/setup.sh test`: {found}"
