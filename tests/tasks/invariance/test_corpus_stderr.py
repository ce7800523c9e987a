"""lm-eval reports a bootstrap standard error over questions for the invariance family's corpus statistics.

``<metric>_stderr`` of RStd, the pick rates and their KL is checked against ``metrics/bootstrap.py``
(``bootstrap_summary``) run on the same per-question records with a statistic written here from the
definitions (resampling whole questions by index), independent of ``metrics/invariance_bias.py``'s
weighted sums. In-process through lm-eval's own task aggregation (the autoload hook applied), and in a
plain ``lm_eval`` run (slow: a child process, lm-eval's ``dummy`` model).
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import numpy as np
import pytest
from lm_eval.api.metrics import mean, mean_stderr
from lm_eval.tasks import TaskManager
from scipy import stats

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.task.corpus_stderr import (
    MAX_BOOTSTRAP_ITERS,
    declare_bootstrap_stderr,
    with_declared_stderrs,
)
from logic_consistency.metrics.bootstrap import bootstrap_summary
from logic_consistency.tasks.invariance.task import InvarianceTask

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "data"
NAME = "logic_consistency_invariance_mmlu_abstract_algebra"
PICK_RATES = ("pick_rate_A", "pick_rate_B", "pick_rate_C", "pick_rate_D")
PRIORS = ("prior_A", "prior_B", "prior_C", "prior_D")
STATISTICS = ("rstd", "rstd_balanced", *PICK_RATES, "pick_rate_kl", *PRIORS)


@pytest.fixture(scope="module")
def task() -> Iterator[InvarianceTask]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURES))
        manager = TaskManager(include_path=str(tasks_dir()))
        yield manager.load([NAME])["tasks"][NAME]


def _displayed(options: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """The displayed position of each (question, variant)'s original option; -1 stays -1."""
    at = np.argmax(perms == np.maximum(options, 0)[:, :, None], axis=2)
    return np.where(options < 0, -1, at)


def _statistic(name: str, records: list[dict[str, Any]]) -> Callable[..., np.ndarray]:
    """``name`` of the questions a resample picks (rows of question indices), from its definition (PriDe's
    prior: softmax over labels of the mean over variants of log softmax(scores), Zheng et al. 2024)."""
    picks = np.asarray([r["picks"] for r in records])
    gold = np.asarray([r["gold"] for r in records])
    perms = np.asarray([r["perms"] for r in records])
    picked = _displayed(picks, perms)
    gold_at = _displayed(np.broadcast_to(gold[:, None], picks.shape), perms)
    right = picks == gold[:, None]
    k = perms.shape[2]

    def rates(idx: np.ndarray) -> np.ndarray:
        chosen = picked[idx]  # resamples x questions x variants
        parsed = (chosen >= 0).sum(axis=(1, 2))
        return np.stack([(chosen == p).sum(axis=(1, 2)) / parsed for p in range(k)], axis=1)

    def rstd(idx: np.ndarray, variants: slice) -> np.ndarray:
        shown_at, hit = gold_at[idx][:, :, variants], right[idx][:, :, variants]
        shown = np.stack([(shown_at == p).sum(axis=(1, 2)) for p in range(k)], axis=1)
        recall = np.stack([((shown_at == p) & hit).sum(axis=(1, 2)) for p in range(k)], axis=1) / np.maximum(shown, 1)
        out = np.full(len(idx), np.nan)
        for row in range(len(idx)):  # population std over the positions that show a gold; undefined below 2
            if (shown[row] > 0).sum() >= 2:
                out[row] = 100 * np.std(recall[row][shown[row] > 0])
        return out

    scores = np.asarray([r["scores"] for r in records], dtype=np.float64)
    logs = scores - np.log(np.exp(scores).sum(axis=2, keepdims=True))  # log P_obs(d | variant)
    prior_q = np.exp(logs.mean(axis=1)) / np.exp(logs.mean(axis=1)).sum(axis=1, keepdims=True)  # PriDe, per question

    def statistic(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        idx = np.asarray(sample, dtype=np.int64).reshape(-1, len(records))
        if name in PICK_RATES:
            return rates(idx)[:, "ABCD".index(name[-1])]
        if name in PRIORS:  # the mean of the resampled questions' priors (every question estimates)
            return prior_q[idx][:, :, "ABCD".index(name[-1])].mean(axis=1)
        if name == "pick_rate_kl":
            r = rates(idx)
            return np.where(r > 0, r * np.log(np.where(r > 0, k * r, 1.0)), 0.0).sum(axis=1)
        return rstd(idx, slice(None) if name == "rstd_balanced" else slice(0, 1))

    return statistic


def _expected_stderr(name: str, records: list[dict[str, Any]], iters: int) -> float:
    """metrics/bootstrap.py's standard error of ``name`` over the questions; NaN where a resample is undefined."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)  # a NaN resample: the ValueError below
            summary = bootstrap_summary(
                np.arange(len(records), dtype=np.float64), statistic=_statistic(name, records), n_resamples=iters
            )
    except ValueError as error:
        assert "NaN" in str(error)
        return math.nan
    return summary.stderr


def _random_judge_values(task: InvarianceTask, seed: int) -> list[dict[str, Any]]:
    """Every document's results when a seeded random judge scores the displayed labels."""
    rng = random.Random(seed)
    return [
        task.process_results(doc, [(-rng.random(), False) for order in task.orders(doc) for _ in order])
        for doc in task.eval_docs
    ]


def test_lm_evals_aggregation_reports_the_bootstrap_stderr_over_questions(task: InvarianceTask) -> None:
    from lm_eval.evaluator_utils import _compute_task_aggregations

    values = _random_judge_values(task, seed=3)
    raw = {(name, "none"): [v[name] for v in values] for name in values[0]}
    aggregated, _ = _compute_task_aggregations(task, raw, 500)  # under the cap: honoured as given
    records = [v["rstd"] for v in values]
    assert len(records) >= 4
    for name in STATISTICS:
        reported = aggregated[f"{name}_stderr,none"]
        expected = _expected_stderr(name, records, 500)
        assert isinstance(reported, float), (name, reported)
        if math.isnan(expected):
            assert math.isnan(reported), (name, reported)
        else:
            assert reported == pytest.approx(expected, rel=1e-9, abs=1e-12), name
    # the fixture's golds (original order) sit at B, C, D, B, B: some resample shows them at B alone
    assert math.isnan(aggregated["rstd_stderr,none"]) and not math.isnan(aggregated["rstd,none"])
    assert not math.isnan(aggregated["rstd_balanced_stderr,none"])
    assert aggregated["acc_pride_stderr,none"] == "N/A"  # PriDe's debiased accuracy declares none
    none, _ = _compute_task_aggregations(task, raw, 0)  # bootstrap_iters=0: none, as for lm-eval's own
    assert {none[f"{name}_stderr,none"] for name in STATISTICS} == {"N/A"}


def test_only_a_declared_aggregation_is_answered_by_the_wrapper() -> None:
    import lm_eval.evaluator_utils as evaluator_utils
    from lm_eval.api.metrics import stderr_for_metric

    assert getattr(evaluator_utils.stderr_for_metric, "_logic_consistency", False)  # the autoload hook applied
    wrapped = with_declared_stderrs(stderr_for_metric)

    def statistic(items: list[float]) -> float:
        return max(items)

    declare_bootstrap_stderr(statistic, lambda items, iters: float(len(items) * iters))
    answer = wrapped(metric=statistic, bootstrap_iters=7)
    assert answer is not None and answer([1.0, 2.0]) == 14.0
    assert wrapped(metric=statistic, bootstrap_iters=0) is None
    capped = wrapped(metric=statistic, bootstrap_iters=100_000)  # lm_eval's command line: at most the cap
    assert capped is not None and capped([1.0]) == float(MAX_BOOTSTRAP_ITERS)
    assert wrapped(metric=mean, bootstrap_iters=7) is mean_stderr  # lm-eval's own answer, unchanged
    assert wrapped(metric=max, bootstrap_iters=7) is None


@pytest.mark.slow  # starts lm_eval (the dummy model: random log-likelihoods)
def test_a_plain_lm_eval_run_reports_the_intervals(tmp_path: Path) -> None:
    env = {**os.environ, "LOGIC_CONSISTENCY_DATA": str(FIXTURES), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
    command = [lm_eval, "--model", "dummy", "--tasks", NAME, "--output_path", str(tmp_path), "--log_samples"]
    run = children.run(command, capture_output=True, text=True, env={**env, "OMP_NUM_THREADS": "1"}, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    results = json.loads(next(tmp_path.glob("*/results_*.json")).read_text())["results"][NAME]
    rows = [json.loads(line) for line in next(tmp_path.glob(f"*/samples_{NAME}_*.jsonl")).read_text().splitlines()]
    records = [row["rstd"] for row in sorted(rows, key=lambda row: row["doc_id"])]
    for name in STATISTICS:
        expected = _expected_stderr(name, records, MAX_BOOTSTRAP_ITERS)  # lm_eval's 100,000, capped
        reported = results[f"{name}_stderr,none"]
        if math.isnan(expected):
            assert isinstance(reported, float) and math.isnan(reported), (name, reported)
        else:
            assert reported == pytest.approx(expected, rel=1e-9, abs=1e-12), name
    assert "pick_rate_kl" in run.stdout and "N/A" in run.stdout  # the table: acc_pride has none
    for quiet in ("bootstrapping", "RuntimeWarning", "DegenerateDataWarning"):  # no new warning of ours
        assert quiet not in run.stderr + run.stdout, quiet
