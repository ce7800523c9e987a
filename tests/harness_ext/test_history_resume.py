"""A resumed training keeps its loss history up to the checkpoint it resumes from, even when the run before
was killed in the middle of appending a line (manual pass of issue 54: a study killed by SIGKILL or a
full disk while the Trainer logged left a torn last line, and every rerun ended in a ``JSONDecodeError``
traceback before training, so the study could not resume). A damaged line before the last is named:
``tests/bad_input_training.py``."""

from __future__ import annotations

import json
from pathlib import Path

from logic_consistency.harness_ext.training.callbacks import HISTORY, keep_history_until


def _lines(steps: range) -> str:
    return "".join(json.dumps({"step": step, "loss": 1.0 / step}) + "\n" for step in steps)


def test_a_torn_last_line_is_dropped_and_the_lines_up_to_the_checkpoint_kept(tmp_path: Path) -> None:
    (tmp_path / HISTORY).write_text(_lines(range(1, 6)) + '{"step": 6, "lo', encoding="utf-8")
    keep_history_until(tmp_path, 4)
    assert (tmp_path / HISTORY).read_text(encoding="utf-8") == _lines(range(1, 5))
