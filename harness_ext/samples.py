"""Reading lm-eval's per-sample logs (``--log_samples``): one place for the file format.

``lm_eval ... --log_samples --output_path DIR`` writes ``DIR/<model>/samples_<task>_<timestamp>.jsonl``,
one JSON object per document. This module only reads JSON (no lm-eval import), so reports and the
leaderboard can use it anywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["SAMPLES_FILE", "read_samples", "task_of_samples_file"]

#: ``samples_<task>_<timestamp>.jsonl`` as lm-eval 0.4.13 names them.
SAMPLES_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")


def task_of_samples_file(path: Path) -> str | None:
    """The task name in a ``samples_<task>_<timestamp>.jsonl`` file name, or ``None``."""
    match = SAMPLES_FILE.match(Path(path).name)
    return match.group("task") if match else None


def read_samples(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, sample)`` for each non-blank line of a samples file.

    Args:
        path: A ``samples_<task>_<timestamp>.jsonl`` file.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: A line is not a JSON object (the message names file and line).
    """
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                sample = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path} line {number}: not valid JSON ({error.msg})") from None
            if not isinstance(sample, dict):
                raise ValueError(f"{path} line {number}: must be a JSON object")
            yield number, sample
