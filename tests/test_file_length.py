"""No module of the package is longer than a reader can hold: at most MAX_LINES lines (issue 31).

A file that outgrows it is split by responsibility, as ``harness_ext/lm_eval_hooks.py`` (the table of
lm-eval reaches, out of ``autoload.py``) and the backend-argument declarations (out of ``options.py``,
into ``harness_ext/models/args.py``) were. Tests, scripts and docs are not counted.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 450
_SKIPPED_FOLDERS = {"tests", "scripts", "docs", "build", "dist"}
_SUFFIXES = {".py", ".js", ".css", ".html"}


def package_files() -> dict[str, int]:
    """Lines of each source file of the package, by path from the root."""
    out = {}
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if path.suffix not in _SUFFIXES or not path.is_file():
            continue
        if relative.parts[0] in _SKIPPED_FOLDERS or any(part.startswith(".") for part in relative.parts):
            continue
        out[relative.as_posix()] = len(path.read_text(encoding="utf-8").splitlines())
    return out


def test_no_package_file_is_over_the_limit() -> None:
    lengths = package_files()
    assert "options.py" in lengths and "leaderboard/page/page.js" in lengths
    over = {path: n for path, n in lengths.items() if n > MAX_LINES}
    assert not over, f"files over {MAX_LINES} lines (split them by responsibility): {over}"
