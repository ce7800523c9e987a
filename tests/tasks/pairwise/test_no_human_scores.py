"""A loader whose rows have no ``human_scores``: the run says, in one line per task, which metrics it
cannot compute and why; a task whose every metric needs them (PairS) is refused before any model call."""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.tasks.data import DATA_ENV_VAR

LOADER = """
import datasets

def load_unscored():  # instance_id, context, items: no human_scores
    rows = [{"instance_id": f"u{k}", "context": "Which number is larger?",
             "items": [f"item-{n}" for n in numbers]} for k, numbers in enumerate([[4, 9, 1], [2, 8, 5, 0]])]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
"""
PROMPTS = """\
prompts:
  normal: "{{ context }}\\nA: {{ item_a }}\\nB: {{ item_b }}\\nWhich is larger? {{ answer_instruction }}"
  negated: "{{ context }}\\nA: {{ item_a }}\\nB: {{ item_b }}\\nWhich is smaller? {{ answer_instruction }}"
"""
_OPTIONS = re.compile(r"A: item-(\d+)\nB: item-(\d+)\nWhich is (larger|smaller)\?")


class Judge(LM):
    """Prefers the larger number (the smaller one for the negated question)."""

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        out = []
        for request in requests:
            context, continuation = request.args
            a, b, relation = _OPTIONS.search(context).groups()  # type: ignore[union-attr]
            preferred = "A" if (int(a) > int(b)) != (relation == "smaller") else "B"
            out.append((math.log(0.9 if continuation.strip() == preferred else 0.1), False))
        return out

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError


def _folder(tmp: Path, extra: str = "") -> Path:
    folder = tmp / "unscored"
    folder.mkdir()
    (folder / "utils.py").write_text(LOADER, encoding="utf-8")
    (folder / "unscored.yaml").write_text(
        f"include: {tasks_dir() / 'pairwise' / '_pairwise_yaml'}\n"
        "task: logic_consistency_unscored\n"
        "custom_dataset: !function utils.load_unscored\n" + extra + PROMPTS,
        encoding="utf-8",
    )
    return folder


@pytest.fixture(autouse=True)
def no_dataset_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)


def test_the_metrics_left_out_are_named_in_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    manager = TaskManager(include_path=str(_folder(tmp_path)), include_defaults=False, metadata={"ks": [3]})
    with caplog.at_level(logging.WARNING):
        results = simple_evaluate(model=Judge(), tasks=["logic_consistency_unscored"], task_manager=manager)
    scores = {key.split(",")[0] for key in results["results"]["logic_consistency_unscored"] if key.endswith(",none")}
    assert "s_comm" in scores and "human_agreement" not in scores  # the model's consistency is still scored
    lines = [record.getMessage() for record in caplog.records if "human_scores" in record.getMessage()]
    assert len(lines) == 1, lines
    for part in ("logic_consistency_unscored", "utils.load_unscored", "no 'human_scores' field", "human_agreement"):
        assert part in lines[0], (part, lines[0])
    assert "rank_spearman_bt" in lines[0] and "left out of the results" in lines[0]


def test_a_pairs_task_without_human_scores_is_refused_before_the_model(tmp_path: Path) -> None:
    pairs = "class: !function logic_consistency.tasks.pairwise.pairs_task.PairsRankingTask\n"
    manager = TaskManager(
        include_path=str(_folder(tmp_path, pairs)), include_defaults=False, metadata={"pairs_runs": 1}
    )
    with pytest.raises(ValueError, match="logic_consistency_unscored.*no 'human_scores' field.*pairs_spearman"):
        simple_evaluate(model=Judge(), tasks=["logic_consistency_unscored"], task_manager=manager)
