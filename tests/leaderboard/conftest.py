"""Shared fixtures: copies of the dummy run of the whole suite (``dummy_run``, tests/conftest.py), and helpers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
LOGIC_CONSISTENCY = shutil.which("logic-consistency", path=str(Path(sys.executable).parent)) or "logic-consistency"
CHROMIUM = Path("/usr/bin/chromium")


def lm_eval_env(**extra: str) -> dict[str, str]:
    """Environment of an offline lm_eval run on the fixture data."""
    return {
        **os.environ,
        "LOGIC_CONSISTENCY_DATA": str(FIXTURE_DATA),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        **extra,
    }


def _run_cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return children.run(
        [LOGIC_CONSISTENCY, *args], capture_output=True, text=True, env=lm_eval_env(), timeout=timeout, cwd=ROOT
    )


@pytest.fixture(scope="session")
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``logic-consistency ARGS`` in a subprocess on the fixture data (``cli("leaderboard", ...)``)."""
    return _run_cli


@pytest.fixture(scope="session")
def env() -> Callable[..., dict[str, str]]:
    """The environment of an offline run on the fixture data (extra variables as keywords)."""
    return lm_eval_env


@pytest.fixture
def run_copy(dummy_run: Path, tmp_path: Path) -> Callable[..., Path]:
    """Copy the dummy run's folder into ``tmp_path`` (optionally editing the results) and return the copy."""

    def make(edit: Callable[[dict[str, Any]], None] | None = None, folder: str | None = None) -> Path:
        target = tmp_path / (folder or f"run-{uuid.uuid4().hex[:8]}")
        shutil.copytree(dummy_run.parent, target)
        copied = target / dummy_run.name
        if edit is not None:
            results = json.loads(copied.read_text(encoding="utf-8"))
            edit(results)
            copied.write_text(json.dumps(results), encoding="utf-8")
        return copied

    return make


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's headless Chromium, or skip (CI installs it: ``apt-get install chromium``)."""
    if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
        message = f"{CHROMIUM} not found: install Debian's chromium package to run the browser tests"
        if os.environ.get("CI") == "true":  # CI must not pass by skipping the browser checks
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture
def browser(chromium: Path, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run headless Chromium on a page: ``browser(page, "--dump-dom")`` (fresh profile, offline flags)."""

    def run(page: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
        profile = tmp_path / f"chromium-profile-{uuid.uuid4().hex[:8]}"
        command = [
            str(chromium),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
            page.resolve().as_uri(),
        ]
        return children.run(command, capture_output=True, text=True, timeout=timeout)

    return run
