"""``logic-consistency correlate`` on hand-made results files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from logic_consistency.cli import main


def write_results(path: Path, model: str, tasks: dict[str, dict[str, float]]) -> Path:
    results = {task: {"alias": task, **{f"{k},none": v for k, v in metrics.items()}} for task, metrics in tasks.items()}
    results["logic_consistency_pairwise"] = {"alias": "group", "s_comm,none": 0.5}  # a group: no dataset
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"results": results, "model_name": model, "config": {}}))
    return path


# three models: s_tran and self-agreement rise together; s_comm and H rise together
MODELS = {
    "m1": dict(s_tran_3=0.70, s_comm=0.40, H=0.55, sa=0.70),
    "m2": dict(s_tran_3=0.85, s_comm=0.60, H=0.60, sa=0.80),
    "m3": dict(s_tran_3=0.95, s_comm=0.90, H=0.68, sa=0.93),
}


@pytest.fixture()
def results_dir(tmp_path):
    for model, v in MODELS.items():
        write_results(
            tmp_path / model / "results_2026-01-01T00-00-00.json",
            model,
            {
                "logic_consistency_summeval": {"s_tran_3": v["s_tran_3"], "s_comm": v["s_comm"], "human_agreement": v["H"]},
                "logic_consistency_summeval_cot_sc": {"self_agreement": v["sa"], "s_comm": 0.3, "human_agreement": 0.5},
                "logic_consistency_summeval_para01": {"s_comm": v["s_comm"], "human_agreement": v["H"]},
                "logic_consistency_summeval_para02": {"s_comm": v["s_comm"] - 0.1, "human_agreement": v["H"] - 0.02},
            },
        )
    return tmp_path


def test_correlate_prints_and_writes_the_report(results_dir, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["correlate", str(results_dir), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Figure 4" in printed and "Figure 5" in printed
    report = json.loads((out / "correlation_report.json").read_text())
    fig4 = report["s_tran_vs_self_agreement"]["s_tran_3"]["summeval"]
    xs = [v["s_tran_3"] for v in MODELS.values()]
    ys = [v["sa"] for v in MODELS.values()]
    assert fig4["n"] == 3
    assert fig4["pearson"] == pytest.approx(stats.pearsonr(xs, ys).statistic)
    assert fig4["spearman"] == pytest.approx(1.0)
    fig5 = report["vs_human_agreement"]["s_comm"]["summeval"]
    assert fig5["n"] == 9  # 3 models x (plain task + 2 templates); the sampled variant is left out
    assert fig5["spearman"] > 0.9
    spread = report["spread"]["m1 / summeval"]["s_comm"]
    assert (spread["min"], spread["max"], spread["n"]) == (pytest.approx(0.3), pytest.approx(0.4), 2)
    assert (out / "vs_human_agreement_s_comm.png").stat().st_size > 0
    assert (out / "s_tran_vs_self_agreement_s_tran_3.png").stat().st_size > 0


def test_too_few_points_are_undefined_not_zero(tmp_path, capsys):
    path = write_results(tmp_path / "one" / "results_x.json", "m1",
                         {"logic_consistency_caters": {"s_tran_3": 0.9, "s_comm": 0.5, "human_agreement": 0.6}})
    assert main(["correlate", str(path)]) == 0
    assert "undefined (n = 1" in capsys.readouterr().out


def test_one_template_has_no_spread_and_the_json_says_null(tmp_path, capsys):
    path = write_results(tmp_path / "one" / "results_x.json", "m1",
                         {"logic_consistency_caters_para02": {"s_tran_3": 0.9, "s_comm": 0.5, "human_agreement": 0.6}})
    assert main(["correlate", str(path), "--out", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "correlation_report.json").read_text())
    spread = report["spread"]["m1 / caters"]["s_comm"]
    assert spread["n"] == 1 and spread["std"] is None and spread["min"] == spread["max"] == 0.5


def test_bad_inputs(tmp_path, capsys):
    assert main(["correlate", str(tmp_path / "missing.json")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["correlate", str(bad)]) == 2
    assert "not an lm-eval results file" in capsys.readouterr().err
