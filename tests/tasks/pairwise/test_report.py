"""``logic-consistency correlate`` on hand-made results files.

Figure 5 is a correlation per model across that model's templates: three synthetic models, ten
templates each, built so that each model's correlation is known in advance (exactly linear,
exactly anti-linear, one swapped rank), plus a group aggregate, CoT / generate tasks and the plain
task that must not become points.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from logic_consistency.cli import main

GROUP = "logic_consistency_pairwise"


def write_results(
    path: Path,
    model: str,
    tasks: dict[str, dict[str, float]],
    *,
    date: float | None = None,
    group: dict[str, float] | None = None,
) -> Path:
    """A results file shaped like lm-eval 0.4.13's: tasks and groups in ``results``, configs for tasks only."""
    results: dict[str, dict] = {
        task: {"alias": task, **{f"{k},none": v for k, v in metrics.items()}} for task, metrics in tasks.items()
    }
    data: dict = {"results": results, "model_name": model, "config": {}, "configs": {t: {"task": t} for t in tasks}}
    if group is not None:
        results[GROUP] = {"alias": GROUP, **{f"{k},none": v for k, v in group.items()}}
        data["groups"] = {GROUP: results[GROUP]}
        data["group_subtasks"] = {GROUP: list(tasks)}
    if date is not None:
        data["date"] = date
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


S_COMM = np.array([0.30, 0.42, 0.45, 0.51, 0.58, 0.63, 0.70, 0.74, 0.81, 0.90])
#: H per template for each model, with the correlation each must give (known, not computed by the suite)
H = {
    "linear": 0.40 + 0.5 * S_COMM,  # Pearson = Spearman = +1
    "anti": 0.95 - 0.6 * S_COMM,  # Pearson = Spearman = -1
    # ranks 1..10 with templates 4 and 5 swapped: Spearman = 1 - 6 * 2 / (10 * 99) = 0.98788
    "swapped": np.array([0.50, 0.52, 0.55, 0.61, 0.60, 0.66, 0.70, 0.71, 0.77, 0.80]),
}
KNOWN = {"linear": (1.0, 1.0), "anti": (-1.0, -1.0), "swapped": (None, 1 - 6 * 2 / (10 * 99))}


def model_tasks(model: str, templates: range) -> dict[str, dict[str, float]]:
    h = H[model]
    return {
        f"logic_consistency_summeval_para{t:02d}": {
            "s_comm": S_COMM[t - 1],
            "human_agreement": h[t - 1],
            "s_tran_3": 0.9,
            "position_bias": 0.5 + S_COMM[t - 1] / 10,
        }
        for t in templates
    }


@pytest.fixture()
def results_dir(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    for model in H:
        extra = {
            # the plain task is paraphrase 1: present with para01, it must count once
            "logic_consistency_summeval": {"s_comm": S_COMM[0], "human_agreement": H[model][0], "s_tran_3": 0.9},
            # other scorings of the template-1 prompt: far off the line, kept apart by default
            "logic_consistency_summeval_cot": {"s_comm": 0.05, "human_agreement": 0.99, "s_tran_3": 0.5},
            "logic_consistency_summeval_generate": {"s_comm": 0.99, "human_agreement": 0.01},
        }
        # one model's templates are split over two files (merged), the other files hold all ten
        if model == "linear":
            write_results(
                root / model / "results_a.json",
                model,
                {**model_tasks(model, range(1, 6)), **extra},
                date=1.0,
                group={"s_comm": 0.1, "human_agreement": 0.9},
            )
            write_results(root / model / "results_b.json", model, model_tasks(model, range(6, 11)), date=2.0)
        else:
            write_results(
                root / model / "results_a.json",
                model,
                {**model_tasks(model, range(1, 11)), **extra},
                date=1.0,
                group={"s_comm": 0.1, "human_agreement": 0.9},
            )
    # an older run of one template, superseded by the newer file's
    write_results(
        root / "anti" / "results_old.json",
        "anti",
        {"logic_consistency_summeval_para03": {"s_comm": 0.99, "human_agreement": 0.99}},
        date=0.5,
    )
    return root


def run_report(tmp_path: Path, *args: str) -> tuple[dict, str]:
    out = tmp_path / "report"
    assert main(["correlate", *args, "--out", str(out)]) == 0
    return json.loads((out / "correlation_report.json").read_text()), str(out)


def test_figure5_is_a_correlation_per_model_across_its_templates(results_dir, tmp_path, capsys):
    report, out = run_report(tmp_path, str(results_dir))
    fig5 = report["vs_human_agreement"]["s_comm"]["summeval"]
    assert set(fig5) == set(H)  # no point from the group, no "pairwise" dataset
    assert set(report["vs_human_agreement"]["s_comm"]) == {"summeval"}
    for model, (pearson, spearman) in KNOWN.items():
        corr = fig5[model]
        assert corr["n"] == 10, model  # ten templates: plain task and para01 counted once, no CoT / generate
        assert sorted(task for task, _, _ in corr["points"]) == [
            f"logic_consistency_summeval_para{t:02d}" for t in range(1, 11)
        ]
        assert corr["spearman"] == pytest.approx(spearman), model
        if pearson is not None:
            assert corr["pearson"] == pytest.approx(pearson), model
    swapped = fig5["swapped"]
    assert swapped["pearson"] == pytest.approx(stats.pearsonr(S_COMM, H["swapped"]).statistic)
    assert 0.9 < swapped["pearson"] < 1.0
    # the other metrics are correlated the same way, per model: position_bias is linear in s_comm here
    assert report["vs_human_agreement"]["position_bias"]["summeval"]["anti"]["pearson"] == pytest.approx(-1.0)
    # s_tran_3 is constant over the templates: undefined, never 0
    assert "undefined" in report["vs_human_agreement"]["s_tran_3"]["summeval"]["linear"]
    assert "vs_human_agreement_pooled" not in report
    reasons = {(item["model"], item["task"]): item["reason"] for item in report["left_out"]}
    assert reasons[("anti", "logic_consistency_summeval")].startswith("same prompt as para01")
    assert reasons[("linear", "logic_consistency_summeval_cot")].startswith("cot scoring kept apart")
    assert reasons[("swapped", "logic_consistency_summeval_generate")].startswith("generate scoring kept apart")
    assert reasons[("anti", "logic_consistency_summeval_para03")].startswith("superseded")
    printed = capsys.readouterr().out
    assert "per model across its templates (Figure 5 is s_comm" in printed
    assert "swapped: Pearson" in printed and "POOLED" not in printed
    assert Path(out, "vs_human_agreement_s_comm.png").stat().st_size > 0
    # the spread is over each model's ten templates
    spread = report["spread"]["linear / summeval"]["s_comm"]
    assert (spread["n"], spread["min"], spread["max"]) == (10, pytest.approx(0.30), pytest.approx(0.90))


def test_variants_join_only_when_asked_and_the_pooled_view_says_so(results_dir, tmp_path, capsys):
    report, out = run_report(tmp_path, str(results_dir), "--include-variants", "cot,generate", "--pooled")
    fig5 = report["vs_human_agreement"]["s_comm"]["summeval"]
    for model in H:
        xs = [*S_COMM, 0.05, 0.99]
        ys = [*H[model], 0.99, 0.01]
        assert fig5[model]["n"] == 12
        assert fig5[model]["pearson"] == pytest.approx(stats.pearsonr(xs, ys).statistic)
        assert fig5[model]["spearman"] == pytest.approx(stats.spearmanr(xs, ys).statistic)
    assert report["options"] == {"include_variants": ["cot", "generate"], "pooled": True}
    pooled = report["vs_human_agreement_pooled"]["s_comm"]["summeval"]
    xs = [*S_COMM, 0.05, 0.99] * 3
    ys = [y for model in sorted(H) for y in (*H[model], 0.99, 0.01)]
    assert pooled["n"] == 36 and "pooled" in pooled["pooled"]
    assert pooled["pearson"] == pytest.approx(stats.pearsonr(xs, ys).statistic)
    assert "POOLED over models and templates" in capsys.readouterr().out
    assert Path(out, "vs_human_agreement_pooled_s_comm.png").stat().st_size > 0


def test_figure4_one_point_per_model(tmp_path):
    models = {"m1": (0.70, 0.70), "m2": (0.85, 0.80), "m3": (0.95, 0.93)}
    for model, (s_tran, sa) in models.items():
        write_results(
            tmp_path / "runs" / model / "results_x.json",
            model,
            {
                "logic_consistency_caters": {"s_tran_3": s_tran, "s_comm": 0.5, "human_agreement": 0.6},
                "logic_consistency_caters_cot_sc": {"self_agreement": sa, "s_comm": 0.3, "human_agreement": 0.5},
            },
        )
    report, out = run_report(tmp_path, str(tmp_path / "runs"))
    fig4 = report["s_tran_vs_self_agreement"]["s_tran_3"]["caters"]
    xs, ys = zip(*models.values(), strict=True)
    assert fig4["n"] == 3 and fig4["pearson"] == pytest.approx(stats.pearsonr(xs, ys).statistic)
    assert fig4["spearman"] == pytest.approx(1.0)
    assert Path(out, "s_tran_vs_self_agreement_s_tran_3.png").stat().st_size > 0


def test_a_chat_template_run_is_another_model(tmp_path):
    tasks = model_tasks("linear", range(1, 11))
    write_results(tmp_path / "runs" / "a" / "results_a.json", "linear", tasks, date=1.0)
    chat = write_results(tmp_path / "runs" / "b" / "results_b.json", "linear", tasks, date=2.0)
    chat.write_text(json.dumps({**json.loads(chat.read_text()), "chat_template_sha": "0123456789abcdef"}))
    report, _ = run_report(tmp_path, str(tmp_path / "runs"))
    fig5 = report["vs_human_agreement"]["s_comm"]["summeval"]
    assert set(fig5) == {"linear", "linear [chat template 01234567]"}  # not one superseding the other
    assert not report["left_out"]


def test_too_few_points_are_undefined_not_zero(tmp_path, capsys):
    path = write_results(
        tmp_path / "one" / "results_x.json",
        "m1",
        {"logic_consistency_caters": {"s_tran_3": 0.9, "s_comm": 0.5, "human_agreement": 0.6}},
    )
    assert main(["correlate", str(path)]) == 0
    assert "undefined (n = 1" in capsys.readouterr().out


def test_one_template_has_no_spread_and_the_json_says_null(tmp_path, capsys):
    path = write_results(
        tmp_path / "one" / "results_x.json",
        "m1",
        {"logic_consistency_caters_para02": {"s_tran_3": 0.9, "s_comm": 0.5, "human_agreement": 0.6}},
    )
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
    with pytest.raises(SystemExit):
        main(["correlate", str(bad), "--include-variants", "cot,pairs"])
    assert "unknown variant" in capsys.readouterr().err
