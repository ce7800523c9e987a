"""Shared by the GV tests that run lm-eval's evaluator on scripted models.

The scripted models live in ``tests/fixtures/tasks_gv/fake_models.py``. Tests are no packages
(``--import-mode=importlib``), so this conftest loads that file once, before the test modules of
this folder are collected, as the module ``gv_fake_models``; tests ``import gv_fake_models as fakes``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from logic_consistency.tasks.data import DATA_ENV_VAR

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FAKES_MODULE = "gv_fake_models"

if FAKES_MODULE not in sys.modules:
    _spec = importlib.util.spec_from_file_location(FAKES_MODULE, FIXTURES / "tasks_gv" / "fake_models.py")
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[FAKES_MODULE] = _module
    _spec.loader.exec_module(_module)


@pytest.fixture(scope="module")
def fixture_data() -> Iterator[None]:
    """The tests' own small data files instead of the real datasets (a module's tests share it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATA_ENV_VAR, str(FIXTURES / "data"))
        yield
