"""One table of bad inputs and faults, each asserting that the error names what is wrong.

Every case builds its own bad input in ``tmp_path`` (hand-written fixtures from ``tests/fixtures``,
copied and then broken), calls the public function or command a user would, and checks that the
exception message names the file, field, option, argument or signal at fault. No model is loaded.
The cases live by subject in ``tests/bad_input_*.py`` (data, options, metrics, commands, backends, outputs,
files, setup, credentials, build, board, training);
``tests/bad_inputs_support.py`` holds the case machinery and the runner.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bad_input_backends  # noqa: E402
import bad_input_board  # noqa: E402
import bad_input_build  # noqa: E402
import bad_input_commands  # noqa: E402
import bad_input_credentials  # noqa: E402
import bad_input_data  # noqa: E402
import bad_input_files  # noqa: E402 - issue 29: links, pipes and loops where files go
import bad_input_metrics  # noqa: E402
import bad_input_options  # noqa: E402
import bad_input_outputs  # noqa: E402 - issue 17's cases
import bad_input_setup  # noqa: E402 - a user's task YAML, loader scores, HOME and cache folders
import bad_input_training  # noqa: E402 - improve studies and the LoRA trainer (issue 30)
from bad_inputs_support import Case, CaseTable, run_case  # noqa: E402

CASES = CaseTable(
    [
        *bad_input_data.CASES,
        *bad_input_options.CASES,
        *bad_input_metrics.CASES,
        *bad_input_commands.CASES,
        *bad_input_backends.CASES,
        *bad_input_outputs.CASES,
        *bad_input_files.CASES,
        *bad_input_credentials.CASES,
        *bad_input_build.CASES,
        *bad_input_board.CASES,
        *bad_input_setup.CASES,
        *bad_input_training.CASES,
    ]
)


def test_the_table_holds_at_least_100_cases() -> None:
    assert len(CASES) >= 100, len(CASES)
    assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("bad", CASES, ids=CASES.ids())
def test_bad_input_is_named(bad: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(bad, tmp_path, monkeypatch)
