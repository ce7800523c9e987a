"""Training pairs show their winner first about half the time (``preferences.balanced_winner_first``).

MS MARCO's passages come in BM25's order, which GPT-3.5's ranking follows, and NovelEval's relevance file
lists the relevant passages first: pairs shown in the source order would make the answer letter follow
the position. The loaders shuffle the items (as CaTeRS does) and :func:`from_loader` orients each pair in
a balanced seeded order; the share of first-letter answers is within 1 point of 50% on the real data.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logic_consistency.common import in_split
from logic_consistency.tasks.data import DATA_ENV_VAR, caters, noveleval
from logic_consistency.tasks.pairwise.improve_data import load_msmarco
from logic_consistency.tasks.pairwise.preferences import PreferenceSet, balanced_winner_first, from_loader

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
REAL_DATA = os.environ.get(DATA_ENV_VAR)


def _first_wins(prefs: PreferenceSet) -> tuple[int, int, int]:
    """Comparisons whose winner is shown first (answer A), all comparisons, instances with an odd count."""
    comparisons = [c for instance in prefs.values() for c in instance.comparisons]
    odd = sum(len(instance.comparisons) % 2 for instance in prefs.values())
    return sum(c.winner == c.first for c in comparisons), len(comparisons), odd


def _check(prefs: PreferenceSet, *, within_a_point: bool) -> None:
    first, total, odd = _first_wins(prefs)
    assert abs(2 * first - total) <= odd  # each instance balanced to its odd pair
    if within_a_point:
        assert abs(100 * first / total - 50) <= 1, f"{first} of {total} pairs answer A"


def test_each_instance_is_balanced_to_its_odd_pair() -> None:
    for n in range(12):
        flags = balanced_winner_first(n, 1234, f"q{n}")
        assert len(flags) == n and abs(2 * sum(flags) - n) <= n % 2
    assert balanced_winner_first(20, 1234, "q") == balanced_winner_first(20, 1234, "q")  # seeded
    assert balanced_winner_first(20, 1234, "q") != balanced_winner_first(20, 1234, "r")


def test_msmarco_training_pairs_are_balanced() -> None:
    # the project has no copy of MS MARCO: the hand-written folder, in BM25 order where GPT-3.5 agrees
    _check(load_msmarco(FIXTURES / "msmarco", None).prefs, within_a_point=True)  # 8 queries x 6 pairs: exact


@pytest.mark.parametrize("loader", [noveleval, caters], ids=["noveleval", "caters"])
def test_training_pairs_answer_a_within_a_point_of_half(loader: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, REAL_DATA or str(FIXTURES))
    rows = [row for row in loader.load()["test"] if in_split(str(row["instance_id"]), "train")]  # type: ignore[attr-defined]
    _check(from_loader(rows), within_a_point=bool(REAL_DATA))


def test_the_studys_readme_prints_each_rows_answer_letters() -> None:
    from logic_consistency.harness_ext.training.trainer import Example
    from logic_consistency.tasks.pairwise.improve import answer_letters
    from logic_consistency.tasks.pairwise.improve_report import _training_lines

    letters = answer_letters([Example("p", " A"), Example("q", " B"), Example("r", " A")])
    assert letters == {"A": 2, "B": 1}
    training = {
        "data_examples": 3,
        "steps": 1,
        "train_loss": 0.5,
        "train_tokens_per_s": 9.0,
        "wall_time_s": 1,
        "device": "cpu",
    }
    lines = _training_lines([{"label": "Perturbed", "training": training, "answer_letters": letters}])
    assert "answers (share of the first letter)" in lines[0] and "| A 2 / B 1 (66.7%) |" in lines[2]
