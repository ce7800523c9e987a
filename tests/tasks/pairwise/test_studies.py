"""The pairwise paper's further studies, and the suite's own position bias, end to end, as a user
runs them (issue 9).

One plain ``lm_eval`` command runs position bias (every pairwise task; the suite's addition beyond
the paper), two paraphrase templates, PairS and self-agreement on CaTeRS; then the suite's CLI
builds REPAIR data from the run's ``--log_samples`` file, prints the correlation report over the
run, and puts the run on a leaderboard page. Once with lm-eval's ``dummy`` model (fast) and once with the real embedded model
(slow).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.cli import main

ROOT = Path(__file__).resolve().parents[3]
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
LM_EVAL = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
TASKS = (
    "logic_consistency_caters",  # position bias rides on every pairwise task
    "logic_consistency_caters_para02",
    "logic_consistency_caters_para03",
    "logic_consistency_caters_pairs",
    "logic_consistency_caters_cot_sc",
)
ITEMS = 3  # 6 ordered pairs per instance


def run_studies(model_args: list[str], tmp_path: Path) -> dict[str, Any]:
    """Runs the five studies; returns the results JSON, the REPAIR statistics and the page."""
    env = {**os.environ, "LOGIC_CONSISTENCY_DATA": str(FIXTURE_DATA), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    runs = tmp_path / "runs"
    metadata = {"max_items": ITEMS, "ks": [3], "samples": 2, "pairs_runs": 5}
    run = children.run(
        [
            LM_EVAL,
            *model_args,
            "--tasks",
            ",".join(TASKS),
            "--limit",
            "1",
            "--metadata",
            json.dumps(metadata),
            "--gen_kwargs",
            "max_gen_toks=48",
            "--output_path",
            str(runs),
            "--log_samples",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    (results_file,) = runs.glob("*/results_*.json")
    (samples_file,) = runs.glob("*/samples_logic_consistency_caters_2*.jsonl")

    assert main(["repair", str(samples_file), "--out", str(tmp_path / "repair"), "--ks", "3"]) == 0
    assert main(["correlate", str(runs), "--out", str(tmp_path / "report")]) == 0
    board = tmp_path / "board"
    assert (
        main(["leaderboard", "ingest", str(runs), "--out", str(board), "--n-resamples", "1000", "--no-progress"]) == 0
    )
    assert main(["leaderboard", "render", str(board / "leaderboard.json")]) == 0
    return {
        "results": json.loads(results_file.read_text())["results"],
        "repair": json.loads((tmp_path / "repair" / "repair_stats.json").read_text()),
        "report": json.loads((tmp_path / "report" / "correlation_report.json").read_text()),
        "board": json.loads((board / "leaderboard.json").read_text()),
        "page": (board / "index.html").read_text(),
    }


def board_metrics(board: dict[str, Any]) -> dict[str, set[str]]:
    """Task name -> the metric names the leaderboard row holds for it."""
    (row,) = board["rows"]
    return {task: set(entry["metrics"]) for task, entry in row["tasks"].items()}


def check_studies(out: dict[str, Any], *, parsed_samples: bool) -> None:
    results, on_board = out["results"], board_metrics(out["board"])
    # 1. position bias, on every pairwise task, in the results JSON and on the board
    for task in TASKS[:3]:
        metrics = results[task]
        assert 0.0 <= metrics["position_bias,none"] <= 1.0 and 0.0 <= metrics["p_first_mean,none"] <= 1.0, task
        assert {"position_bias", "p_first_mean", "s_comm"} <= on_board[task], task
    # 2. paraphrases: a score per template, the report's spread over the templates, and the
    #    model's correlation with H over its three prompts (the plain task's is paraphrase 1)
    (spread,) = out["report"]["spread"].values()
    assert spread["s_comm"]["n"] == 3
    for task in TASKS[1:3]:
        assert spread["s_comm"]["min"] <= results[task]["s_comm,none"] <= spread["s_comm"]["max"]
        assert {"s_comm", "human_agreement", "position_bias"} <= on_board[task], task
    (per_model,) = out["report"]["vs_human_agreement"]["s_comm"]["caters"].values()
    assert per_model["n"] == 3
    # 3. PairS: 3 items need at most 3 of the 6 ordered pairs per run
    pairs = results["logic_consistency_caters_pairs"]
    assert -1.0 <= pairs["pairs_spearman,none"] <= 1.0 and -1.0 <= pairs["pairs_spearman_calibrated,none"] <= 1.0
    assert 0 < pairs["pairs_comparisons_ratio,none"] <= 3 / 6
    assert {"pairs_spearman", "pairs_spearman_calibrated", "pairs_comparisons_ratio"} <= on_board[
        "logic_consistency_caters_pairs"
    ]
    # 4. self-agreement: 6 ordered pairs x 2 variants x 2 samples, each parsed or counted
    sampled = results["logic_consistency_caters_cot_sc"]
    assert 0 <= sampled["unparseable,none"] <= 24
    if parsed_samples:
        assert 0.5 <= sampled["self_agreement,none"] <= 1.0
        assert "self_agreement" in on_board["logic_consistency_caters_cot_sc"]
    else:  # nothing parsed: undefined, absent, never a silent 0 or 1
        assert sampled["unparseable,none"] == 24 and "self_agreement,none" not in sampled
    # 5. REPAIR on the run's own judgements: transitive data in both orders
    repair = out["repair"]
    assert repair["before"]["comparisons"] > 0
    if repair["after"]["comparisons"]:
        assert repair["after"]["s_tran_3"] == 1.0 and repair["after"]["s_comm"] == 1.0
    else:  # a judge that always picks the first-shown option ties every item: nothing to order
        assert repair["tied"] == 1.0 and repair["after"]["s_tran_3"] is None and repair["after"]["s_comm"] is None
    # the page embeds the board: the new metrics are on it
    for name in ("position_bias", "pairs_spearman", "logic_consistency_caters_para02"):
        assert name in out["page"], name


def test_dummy_model_runs_the_five_studies(tmp_path: Path) -> None:
    out = run_studies(["--model", "dummy"], tmp_path)
    check_studies(out, parsed_samples=False)  # the dummy model answers "lol"
    assert out["repair"]["after"]["comparisons"] > 0  # random log-likelihoods: an order to repair


@pytest.mark.slow
def test_embedded_model_runs_the_five_studies(tmp_path: Path) -> None:
    out = run_studies(
        ["--model", "lc-embedded", "--model_args", "model=smollm2-135m-instruct", "--batch_size", "4"], tmp_path
    )
    sampled = out["results"]["logic_consistency_caters_cot_sc"]
    check_studies(out, parsed_samples=sampled["unparseable,none"] < 24)
