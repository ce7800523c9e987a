"""``plan --price-in / --price-out``: dollars are computed exactly, and a cost that does not fit a float
is refused naming both prices (issue 42: ``$inf`` was printed with exit status 0)."""

from __future__ import annotations

import json

import pytest

from logic_consistency.harness_ext.plan.counts import Tally, TaskPlan
from logic_consistency.harness_ext.plan.report import DEFAULT_TOKENIZER, as_json, render
from logic_consistency.harness_ext.plan.table import dollars

HUGE = 1.7e308


def _plan(task: str, prompt_tokens: int) -> TaskPlan:
    tally = Tally(requests=1, contexts={"x"}, request_tokens=prompt_tokens, generated_tokens=4)
    return TaskPlan(task=task, documents=1, final={"generate_until": tally})


def _render(plans: list[TaskPlan]) -> str:
    return render(plans, lc_chat_max_tokens=1, price_in=HUGE, price_out=HUGE, tokenizer=DEFAULT_TOKENIZER)


def test_a_huge_price_whose_cost_fits_is_computed_exactly() -> None:
    # tokens * price overflows a float before the division by a million; the exact product does not
    usd = dollars({"prompt_tokens": 3648, "generated_tokens_bound": 0}, HUGE, HUGE)
    assert usd == pytest.approx(3648 * (HUGE / 1e6))
    table = _render([_plan("t", 3648)])
    assert "inf" not in table and "$6.20" in table
    data = as_json([_plan("t", 3648)], lc_chat_max_tokens=1, price_in=HUGE, price_out=HUGE, tokenizer="x")
    assert "Infinity" not in json.dumps(data)


def test_a_task_cost_that_overflows_is_refused_naming_the_prices() -> None:
    with pytest.raises(ValueError, match=r"--price-in 1.7e\+308 / --price-out 0: .*overflows"):
        dollars({"prompt_tokens": 10**7, "generated_tokens_bound": 0}, HUGE, None)
    with pytest.raises(ValueError, match="--price-in"):
        _render([_plan("t", 10**7)])
    with pytest.raises(ValueError, match="--price-out"):
        as_json([_plan("t", 10**7)], lc_chat_max_tokens=1, price_in=HUGE, price_out=HUGE, tokenizer="x")


def test_a_total_that_overflows_is_refused_naming_the_prices() -> None:
    # each task's cost fits a float; their sum does not
    plans = [_plan("a", 600_000), _plan("b", 600_000)]
    with pytest.raises(ValueError, match="--price-in .* / --price-out .*overflows"):
        _render(plans)
