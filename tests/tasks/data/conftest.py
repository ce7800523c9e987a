"""Fixtures of the loader tests: the hand-written fixture data, or the real data when available."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logic_consistency.tasks.data import DATA_ENV_VAR

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
# Captured at import, before any test changes the environment.
REAL_DATA = os.environ.get(DATA_ENV_VAR)


@pytest.fixture
def local_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loaders read the hand-written fixtures (``tests/fixtures/data``)."""
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURES))


@pytest.fixture
def real_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loaders read the real data named by ``LOGIC_CONSISTENCY_DATA`` when the tests started (else skip)."""
    if not REAL_DATA:
        pytest.skip(f"{DATA_ENV_VAR} is not set")
    monkeypatch.setenv(DATA_ENV_VAR, REAL_DATA)
