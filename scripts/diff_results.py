"""Compare the scores of two lm-eval results JSONs: every value of their ``results`` sections.

Usage: python scripts/diff_results.py BEFORE.json AFTER.json

Used to check that a faster set-up or run of the quick start gives the same numbers
(docs/benchmarks.md, "Quick start time"). Values are compared exactly (NaN equals NaN); the
``n-samples`` section is compared too, so a run that scored fewer items cannot pass. Prints one
line per difference, then each task or group that differs with its version in both files (a change
that can move a task's scores raises its version), and a summary; exits 1 if anything differs, 2 on
a file that is not a results JSON.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, NoReturn

SECTIONS = ("results", "n-samples")


def _fail(message: str) -> NoReturn:
    print(f"diff_results: {message}", file=sys.stderr)
    raise SystemExit(2)


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        _fail(f"{path}: cannot read a results JSON ({error})")
    missing = [section for section in SECTIONS if not isinstance(data.get(section), dict)]
    if missing:
        _fail(f"{path}: no {' or '.join(repr(m) for m in missing)} section")
    return {section: data[section] for section in SECTIONS}


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left) and math.isnan(right):
        return True
    return bool(left == right)


def differences(before: dict[str, Any], after: dict[str, Any]) -> tuple[int, list[str]]:
    """Return how many values were compared and one line per value that differs or is missing."""
    compared, lines = 0, []
    for section in SECTIONS:
        for task in sorted(set(before[section]) | set(after[section])):
            old, new = before[section].get(task), after[section].get(task)
            if not isinstance(old, dict) or not isinstance(new, dict):
                old, new = {"": old}, {"": new}
            for key in sorted(set(old) | set(new)):
                compared += 1
                if key not in old or key not in new:
                    lines.append(f"{section}/{task}/{key}: only in {'after' if key not in old else 'before'}")
                elif not _same(old[key], new[key]):
                    lines.append(f"{section}/{task}/{key}: {old[key]!r} -> {new[key]!r}")
    return compared, lines


def versions(before: Path, after: Path, lines: list[str]) -> list[str]:
    """One line per task or group named in ``lines`` (the differences): its version in each file."""
    old, new = (json.loads(path.read_text(encoding="utf-8")).get("versions") or {} for path in (before, after))
    tasks = sorted({line.split("/")[1] for line in lines})
    return [f"{task}: version {old.get(task)} -> {new.get(task)}" for task in tasks]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    before, after = Path(argv[0]), Path(argv[1])
    compared, lines = differences(_load(before), _load(after))
    summary = f"{compared} values compared, {len(lines)} differ ({compared - len(lines)} equal)"
    print("\n".join(lines + versions(before, after, lines) + [summary]))
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
