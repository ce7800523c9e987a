"""docs/invariance.md's MMLU-subset board is the render of the kept run (scripts/invariance_board.py), and the
kept per-question records reproduce lm-eval's own results of that run, subject by subject."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from logic_consistency.metrics import invariance_bias as bias

ROOT = Path(__file__).resolve().parents[3]


def _board() -> ModuleType:
    spec = importlib.util.spec_from_file_location("invariance_board", ROOT / "scripts" / "invariance_board.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BOARD = _board()
RUNS = sorted(BOARD.FIXTURES.glob("*.json"))


def test_the_page_shows_the_render_of_the_kept_runs() -> None:
    assert RUNS, f"no kept run under {BOARD.FIXTURES}"
    page = BOARD.PAGE.read_text(encoding="utf-8")
    assert BOARD.render() in page, "run: python scripts/invariance_board.py render --write"


@pytest.mark.parametrize("path", RUNS, ids=lambda path: path.stem)
def test_the_kept_records_reproduce_lm_evals_results(path: Path) -> None:
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert len(kept["subjects"]) == 57  # every MMLU subject
    for subject, entry in kept["subjects"].items():
        picks = np.asarray([q["picks"] for q in entry["questions"]])
        gold = np.asarray([q["gold"] for q in entry["questions"]])
        perms = np.asarray([q["perms"] for q in entry["questions"]])
        assert len(gold) == kept["limit"], subject  # --limit counts the questions posed
        for name, values in BOARD.per_question(picks, gold).items():
            defined = values[~np.isnan(values)]
            expected = entry["lm_eval"][name]
            if len(defined) == 0:
                assert expected is None or math.isnan(expected), (subject, name)
            else:
                assert float(defined.mean()) == pytest.approx(expected, abs=1e-12), (subject, name)
        if len(gold):
            rstd = bias.rstd(picks, gold, perms, balanced=True, n_resamples=1).value
            assert rstd == pytest.approx(entry["lm_eval"]["rstd_balanced"], abs=1e-9), subject
