"""Where a test run's time goes: the N slowest tests and the time per test folder.

Reads pytest's JUnit XML (``pytest --junitxml=FILE``; scripts/test.sh passes PYTEST_ADDOPTS on) or the
text of ``--durations=0`` (a saved log), and prints two Markdown tables, as CONTRIBUTING.md keeps them.
A test's time is its setup, call and teardown together (JUnit XML holds only that sum).

Usage: python scripts/test_times.py REPORT [--top N]
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ElementTree  # the report is pytest's own output, not untrusted input
from collections import defaultdict
from pathlib import Path

_DURATION = re.compile(r"^([0-9.]+)s (setup|call|teardown)\s+(\S.*)$")


def from_junit(path: Path) -> dict[str, float]:
    """Seconds per test id (``tests/x.py::name[param]``) from a JUnit XML report."""
    times: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        # pytest writes classname "tests.x" (module) or "tests.x.Class"; the file is the module part
        file = "/".join(module) + ".py"
        times[f"{file}::{case.get('name')}"] += float(case.get("time", 0.0))
    return dict(times)


def from_durations(path: Path) -> dict[str, float]:
    """Seconds per test id from the ``--durations=0`` lines of a pytest log."""
    times: dict[str, float] = defaultdict(float)
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        found = _DURATION.match(line.strip())
        if found:
            times[found.group(3).strip()] += float(found.group(1))
    return dict(times)


def folder(test_id: str) -> str:
    return test_id.split("::", 1)[0].rsplit("/", 1)[0] + "/"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    text = args.report.read_text(encoding="utf-8", errors="replace")
    times = from_junit(args.report) if text.lstrip().startswith("<") else from_durations(args.report)
    if not times:
        print(f"{args.report}: no test times found", file=sys.stderr)
        return 1
    print(f"{len(times)} tests, {sum(times.values()):.0f} s in all (the sum of the tests' own times)\n")
    print(f"| {args.top} slowest tests | s |\n|---|---:|")
    for test_id, seconds in sorted(times.items(), key=lambda item: -item[1])[: args.top]:
        print(f"| `{test_id}` | {seconds:.1f} |")
    per_folder: dict[str, float] = defaultdict(float)
    for test_id, seconds in times.items():
        per_folder[folder(test_id)] += seconds
    print("\n| folder | tests' time, s |\n|---|---:|")
    for name, seconds in sorted(per_folder.items(), key=lambda item: -item[1]):
        print(f"| `{name}` | {seconds:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
