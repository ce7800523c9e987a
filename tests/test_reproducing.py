"""docs/reproducing.md cannot drift: every table headed ``| reference | metric | expected |`` is
recomputed with the metrics library, at a size that fits CI.

* ``random ranking``: the exact mean and sd (Kendall tau's closed form; CGP and IGC over the 252
  equally likely polarity patterns) are the printed ones, a seeded sample of random rankings agrees
  with them, the "sampling error" column is the standard error at the paper's n, and the paper's
  printed row lies within the 1.5 sampling errors the page states.
* ``random judge, N items``: a seeded sample of random judges agrees with the printed expectation,
  and s_tran(K)'s is K! / 2^(K(K-1)/2).
* ``always-A judge, N items`` and ``ranking <labels>``: computed exactly.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from logic_consistency.metrics import (
    CAUSAL_LABELS,
    causal_consistency,
    intra_group_clustering,
    intra_group_clustering_density,
    pairwise_consistency,
    position_bias,
)
from logic_consistency.metrics.causal import cross_group_position

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reproducing.md"
HEADER = "| reference | metric | expected |"
#: Random rankings and random judges drawn per check (CI-sized; the page's own figures use more).
N_RANKINGS = 4_000
N_JUDGES = 300
#: The paper's Random row is taken as n random rankings, one per δ-CAUSAL test document.
N_PAPER = 1_969
#: A seeded sample must land within this many standard errors of the exact value.
Z = 4.0
_VALUE = re.compile(r"^(-?\d+(?:\.(\d+))?)(?:\s*±\s*(\d+\.(\d+)))?$")


def _rows() -> list[dict[str, str]]:
    rows = []
    for block in PAGE.read_text(encoding="utf-8").split("\n\n"):
        lines = block.strip().splitlines()
        if not lines or not lines[0].startswith(HEADER):
            continue
        header = [cell.strip() for cell in lines[0].strip("|").split("|")]
        for line in lines[2:]:
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows.append({**dict(zip(header, cells)), "metric": cells[1].strip("`")})
    return rows


ROWS = _rows()


def _value(cell: str) -> tuple[float, float | None, float]:
    """``"0.4689 ± 0.0812"`` -> (mean, sd, half a unit of the last printed digit)."""
    match = _VALUE.match(cell.replace("−", "-"))
    assert match, f"cannot read {cell!r} as 'mean' or 'mean ± sd'"
    decimals = max(len(match.group(2) or ""), len(match.group(4) or ""))
    return float(match.group(1)), (float(match.group(3)) if match.group(3) else None), 0.5 * 10.0**-decimals


def _exact_random_ranking() -> dict[str, tuple[float, float, float]]:
    """Mean, sd and kurtosis of each metric under a uniformly random ranking, exactly."""
    out = {}
    for name, k in (("tau_supporters", 5), ("tau_defeaters", 5), ("tau_all", 10)):
        out[name] = (0.0, math.sqrt(2 * (2 * k + 5) / (9 * k * (k - 1))), 3.0)  # tau's kurtosis is ~3
    patterns = [[1 if i in chosen else -1 for i in range(10)] for chosen in itertools.combinations(range(10), 5)]
    metrics: dict[str, Callable[[list[int]], float]] = {
        "cgp": cross_group_position,
        "igc_density": intra_group_clustering_density,
        "igc": intra_group_clustering,
    }
    for name, metric in metrics.items():
        values = np.array([metric(pattern) for pattern in patterns])
        centred = values - values.mean()
        out[name] = (float(values.mean()), float(values.std()), float((centred**4).mean() / values.var() ** 2))
    return out


def _random_rankings() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2024)
    results = [causal_consistency(rng.permutation(CAUSAL_LABELS).tolist()) for _ in range(N_RANKINGS)]
    return {name: np.array([result[name] for result in results]) for name in results[0]}


def _judge(n_items: int, always_a: bool, rng: np.random.Generator) -> dict[str, float]:
    """One instance judged at random (or always "A"), normal and negated question."""

    def answers() -> np.ndarray:
        prefs = np.full((n_items, n_items), 0.9) if always_a else np.where(rng.random((n_items,) * 2) < 0.5, 0.9, 0.1)
        np.fill_diagonal(prefs, 0.0)
        return prefs

    prefs, negated = answers(), answers()
    scores = pairwise_consistency(prefs, negated, rng.permutation(n_items).astype(float), ks=(3, 5))
    return {**{k: float(v) for k, v in scores.items() if v is not None}, "position_bias": position_bias(prefs)}


@pytest.fixture(scope="module")
def rankings() -> dict[str, np.ndarray]:
    return _random_rankings()


def test_the_page_has_the_expected_tables() -> None:
    references = {row["reference"] for row in ROWS}
    assert "random ranking" in references and any(r.startswith("random judge") for r in references)
    paper_metrics = {row["metric"] for row in ROWS if row["reference"] == "random ranking"}
    assert paper_metrics == {"tau_supporters", "tau_defeaters", "tau_all", "cgp", "igc_density", "igc"}


@pytest.mark.parametrize("row", [r for r in ROWS if r["reference"] == "random ranking"], ids=lambda r: r["metric"])
def test_the_random_row(row: dict[str, str], rankings: dict[str, np.ndarray]) -> None:
    mean, sd, rounding = _value(row["expected"])
    exact_mean, exact_sd, kurtosis = _exact_random_ranking()[row["metric"]]
    assert sd is not None
    assert abs(exact_mean - mean) <= rounding and abs(exact_sd - sd) <= rounding
    sample = rankings[row["metric"]]
    se_mean, se_sd = exact_sd / math.sqrt(len(sample)), exact_sd * math.sqrt((kurtosis - 1) / (4 * len(sample)))
    assert abs(sample.mean() - exact_mean) < Z * se_mean
    assert abs(sample.std(ddof=1) - exact_sd) < Z * se_sd
    # the sampling error column is the standard error of a mean and of an sd at the paper's n
    paper_se = (exact_sd / math.sqrt(N_PAPER), exact_sd * math.sqrt((kurtosis - 1) / (4 * N_PAPER)))
    printed_se = [float(x) for x in row["sampling error at n = 1,969 (mean, sd)"].split(",")]
    assert printed_se == pytest.approx(paper_se, abs=5e-5)
    if row["paper"]:  # the page: every printed value is within 1.5 sampling errors of the exact one
        paper_mean, paper_sd, paper_rounding = _value(row["paper"])
        assert paper_sd is not None
        assert abs(paper_mean - exact_mean) <= 1.5 * paper_se[0] + paper_rounding
        assert abs(paper_sd - exact_sd) <= 1.5 * paper_se[1] + paper_rounding


@pytest.mark.parametrize(
    "row", [r for r in ROWS if "judge" in r["reference"]], ids=lambda r: f"{r['reference']}-{r['metric']}"
)
def test_the_reference_judges(row: dict[str, str]) -> None:
    match = re.fullmatch(r"(random|always-A) judge, (\d+) items", row["reference"])
    assert match, f"unknown reference {row['reference']!r}"
    always_a, n_items = match.group(1) == "always-A", int(match.group(2))
    expected, _, rounding = _value(row["expected"])
    rng = np.random.default_rng(7)
    if always_a:
        assert _judge(n_items, True, rng)[row["metric"]] == pytest.approx(expected, abs=rounding)
        return
    sample = np.array([_judge(n_items, False, rng)[row["metric"]] for _ in range(N_JUDGES)])
    assert abs(sample.mean() - expected) < Z * sample.std(ddof=1) / math.sqrt(N_JUDGES)
    k = re.fullmatch(r"s_tran_(\d+)", row["metric"])
    if k:  # a random tournament of K items is transitive with probability K! / 2^C(K, 2)
        size = int(k.group(1))
        assert expected == math.factorial(size) / 2 ** (size * (size - 1) // 2)


@pytest.mark.parametrize("row", [r for r in ROWS if r["reference"].startswith("ranking ")], ids=lambda r: r["metric"])
def test_the_worked_rankings(row: dict[str, str]) -> None:
    labels = [int(label) for label in row["reference"].removeprefix("ranking ").split()]
    expected, _, rounding = _value(row["expected"])
    assert causal_consistency(labels)[row["metric"]] == pytest.approx(expected, abs=rounding)


def test_every_row_is_checked() -> None:
    checked = ("random ranking", "random judge", "always-A judge", "ranking ")
    unchecked = [row["reference"] for row in ROWS if not row["reference"].startswith(checked)]
    assert not unchecked, unchecked


# ----------------------------------------------------------------------------- fine-tuning commands
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "data"


def _improve_rows() -> dict[str, tuple[list[str], str]]:
    """Each table row whose command is an ``improve`` study: its paper cell's first words -> (argv, cost cell)."""
    import shlex

    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        found = re.search(r"`(logic-consistency improve [^`]*)`", line)
        if line.startswith("| ") and found:
            paper, _, cost = (cell.strip() for cell in line.strip().strip("|").split(" | ")[:3])
            rows[paper.split(":")[0]] = (shlex.split(found.group(1)), cost)
    return rows


def _option(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def test_table_3_trains_on_the_whole_feedback_split() -> None:
    from logic_consistency.tasks.pairwise.improve_data import load_feedback

    argv, cost = _improve_rows()["Table 3"]
    assert _option(argv, "--train-data") == "summarize_feedback" and "--limit" not in argv  # App. B: the entire set
    file = FIXTURES / "summarize_from_feedback" / "comparisons_validation.jsonl"
    data = load_feedback(file, None)  # the command's --limit: none, so every post the loader reads
    posts = {json.loads(line)["info"]["id"] for line in file.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert data.source["posts"] == len(posts) and data.source["comparisons"] == data.source["comparisons_read"]
    assert "SummEval's test half, 50 of its 100 articles" in cost


@pytest.mark.skipif(not os.environ.get("LOGIC_CONSISTENCY_DATA"), reason="needs the SummEval copy")
def test_summevals_test_half_is_the_count_the_page_states() -> None:
    from logic_consistency.common import in_split
    from logic_consistency.tasks.data import summeval

    ids = [str(row["instance_id"]) for row in summeval.load()["test"]]
    assert (sum(in_split(i, "test") for i in ids), len(ids)) == (50, 100)


def test_table_5_trains_on_800_sampled_queries_and_evaluates_on_the_200_others() -> None:
    from logic_consistency.tasks.data.msmarco import SAMPLE, TRAIN_QUERIES, load_part, paper_split

    argv, cost = _improve_rows()["Table 5"]
    assert _option(argv, "--train-data") == "msmarco" and _option(argv, "--tasks") == "logic_consistency_msmarco"
    assert "--pairs" in argv and "--limit" not in argv
    train, test, _ = paper_split([{"instance_id": str(k)} for k in range(10_000)])  # RankGPT's 10K queries
    assert (len(train), len(test)) == (TRAIN_QUERIES, SAMPLE - TRAIN_QUERIES)
    assert cost.startswith(f"{TRAIN_QUERIES} queries x 45 pairs") and f"{SAMPLE - TRAIN_QUERIES} queries x 360" in cost
    assert f"{TRAIN_QUERIES * 45:,} perturbed examples" in cost
    rows, source = load_part(FIXTURES / "msmarco", "train")  # no --limit: every training query of the sample
    assert len(rows) == source["sample"]["train_queries"]


def test_the_gv_command_states_its_own_number_of_documents() -> None:
    from logic_consistency.common import in_split
    from logic_consistency.tasks.gv.arithmetic import GV

    argv, cost = _improve_rows()["Tables 3, 5 and 9, Figure 5"]
    limit, n_docs = int(_option(argv, "--limit") or 0), json.loads(_option(argv, "--metadata") or "{}")["n_docs"]
    ids = [f"{GV.name}-{index:05d}" for index in range(n_docs)]  # the loader's document ids
    train = min(limit, sum(in_split(i, "train") for i in ids))
    test = min(limit, sum(in_split(i, "test") for i in ids))
    assert f"N = {train:,} train documents" in cost and f"{test:,} test documents" in cost
    # the cost itself is recomputed from the prompts by tests/test_improve_costs.py
    from logic_consistency.tasks.improve_costs import gv_documents

    assert gv_documents(n_docs, limit) == (train, test)
    assert f"N = {train:,}" in (PAGE.parent / "improving.md").read_text(encoding="utf-8")  # one number on both pages
