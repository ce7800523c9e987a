"""``logic-consistency --version`` prints the installed distribution's version, with no subcommand."""

from __future__ import annotations

import sys
from importlib.metadata import version

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

import logic_consistency
from logic_consistency.cli import main


def test_version_flag_prints_the_package_version_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"logic-consistency {logic_consistency.__version__}\n"


def test_the_console_entry_point_reports_the_distribution_version() -> None:
    # the version setup.cfg reads (attr: logic_consistency.__version__) is the one installed
    done = children.run(
        [sys.executable, "-m", "logic_consistency.cli", "--version"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"logic-consistency {version('logic-consistency')}"
