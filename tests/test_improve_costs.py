"""Every cost figure of the fine-tuning pages is recomputed from the prompts (``tasks/improve_costs.py``).

The GV figures need no data (arithmetic is synthetic); SummEval's (the REPAIR study's) need the
SummEval copy. A changed template, ``max_gen_toks`` or input changes a figure, and this test names it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logic_consistency.tasks import improve_costs

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: Figures of reproducing.md's rows (the first three there only; the others on improving.md).
ON_REPRODUCING = {"gv_reproducing", "gv_generated_short", "gv_scored", "repair_range"}
REPRODUCING_ONLY = {"gv_reproducing", "gv_generated_short", "gv_scored"}
WITH_DATA = bool(os.environ.get("LOGIC_CONSISTENCY_DATA"))


@pytest.fixture(scope="module")
def figures() -> dict[str, str]:
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    try:
        return improve_costs.figures(improve_costs.count(with_summeval=WITH_DATA))
    finally:
        mp.undo()


def _page(name: str) -> str:
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def test_every_figure_is_on_its_pages(figures: dict[str, str]) -> None:
    improving, reproducing = _page("improving.md"), _page("reproducing.md")
    missing = [
        k for k, text in figures.items() if k not in REPRODUCING_ONLY and " ".join(text.split()) not in improving
    ]
    missing += [f"{key} (reproducing)" for key in ON_REPRODUCING & set(figures) if figures[key] not in reproducing]
    assert not missing, (
        f"figures the pages do not hold (run python -m logic_consistency.tasks.improve_costs): {missing}"
    )
    if not WITH_DATA:
        pytest.skip("the REPAIR figures need the SummEval copy (LOGIC_CONSISTENCY_DATA)")


def test_the_gv_counts_come_from_the_prompts(figures: dict[str, str]) -> None:
    counts = improve_costs.count(with_summeval=False)
    # the validator's bound holds App. G's two worked examples and the shown answer at the generator's 32
    assert counts.gv_validator > 2 * counts.gv_generator and counts.gv_generated == 32 + 48
    # App. H's set shows two validator prompts per document, each as long as the CoT validator's frame
    assert counts.gv_app_h > counts.gv_validator and counts.gv_app_h_generated == 2 * 48
    assert f"at most {int(counts.gv_generator + counts.gv_validator + 0.999) + 80} tokens" in figures["gv_per_document"]


def test_a_longer_template_moves_the_page_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_consistency.tasks.gv import arithmetic

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = improve_costs.count(with_summeval=False)
    monkeypatch.setattr(arithmetic, "GENERATOR_TEMPLATE", "Think hard. " * 20 + arithmetic.GENERATOR_TEMPLATE)
    monkeypatch.setattr(
        arithmetic, "_zero_shot_prompts", arithmetic.GV.generator_prompts(arithmetic.GENERATOR_TEMPLATE)
    )
    after = improve_costs.count(with_summeval=False)
    assert after.gv_generator > before.gv_generator + 20
    assert improve_costs.figures(after)["gv_per_document"] not in _page("improving.md")


@pytest.mark.skipif(not WITH_DATA, reason="the GV tasks read TriviaQA and AdvBench")
def test_the_gv_rows_of_the_cost_plan_page_are_the_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_consistency.harness_ext.plan.counts import plan_tasks
    from logic_consistency.harness_ext.plan.table import render

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    plans = plan_tasks(["logic_consistency_gv"], tokenizer="smollm2-135m-instruct")
    table = render(plans, lc_chat_max_tokens=1, price_in=0.5, price_out=1.5, tokenizer="smollm2-135m-instruct")
    rows = [line for line in table.splitlines() if line.startswith("| logic_consistency_gv_")]
    assert len(rows) == 6 and all(row in (DOCS / "api-judges.md").read_text(encoding="utf-8") for row in rows)
    total = next(line for line in table.splitlines() if line.startswith("| total"))
    tokens = sum(int(part.strip("≤≈ ").replace(",", "")) for part in total.split(" | ")[4].split(" + "))
    assert f"≤{round(tokens / 1000)} k prompt tokens" in _page("reproducing.md")
