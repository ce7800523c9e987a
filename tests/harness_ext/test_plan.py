"""``logic-consistency plan`` counts what a real ``dummy`` run sends, without calling any model.

The reference is lm-eval's own ``dummy`` model run through ``simple_evaluate`` (the real evaluator,
with the multi-stage runner published), wrapped to count every request it receives, per task and
request type: earlier stages, PairS rounds and samples included. The plan must give the same
numbers (earlier stages exactly; a later stage as a bound on what would follow parseable answers).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.models.dummy import DummyLM
from lm_eval.tasks import TaskManager

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.plan import counts as plan_module
from logic_consistency.harness_ext.plan.counts import (
    StageBound,
    Tally,
    TaskPlan,
    context_lengths,
    count_tokens,
    load_tokenizer,
    plan_tasks,
)
from logic_consistency.harness_ext.plan.report import DEFAULT_TOKENIZER, api_costs, as_json, render
from logic_consistency.harness_ext.plan.table import render_shards, shard_totals
from logic_consistency.harness_ext.shards.shard import Shard
from logic_consistency.harness_ext.task import multistage
from logic_consistency.tasks.pairwise import pairs_task, self_agreement_task

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
METADATA = {"max_items": 5, "pairs_runs": 5, "samples": 2, "n_docs": 3}
#: The keys of METADATA each family reads: a run of one task is given only its family's (another family's
#: option is refused, harness_ext/task/option_scope.py).
FAMILY_KEYS = {"gv": {"n_docs"}, "causal": set(), "pairwise": {"max_items", "pairs_runs", "samples"}}


def _task_metadata(task: str) -> dict[str, Any]:
    family = "gv" if "_gv_" in task else "causal" if "_causal_" in task else "pairwise"
    return {key: value for key, value in METADATA.items() if key in FAMILY_KEYS[family]}


LIMIT = 2
#: A few tasks of each family: pairwise (log-likelihood, generated, PairS, sampled), GV, causal.
TASKS = [
    "logic_consistency_summeval",
    "logic_consistency_noveleval_generate",
    "logic_consistency_caters_pairs",
    "logic_consistency_caters_cot_sc",
    "logic_consistency_gv_arithmetic",
    "logic_consistency_gv_triviaqa_generate",
    "logic_consistency_causal_ranking",
]


class CountingDummy(DummyLM):
    """lm-eval's ``dummy`` model, counting the requests it receives per (task, request type)."""

    #: No tokenizer: ``DummyLM.tokenizer`` fetches gpt2's from the hub, which ``simple_evaluate`` asks
    #: for (``add_tokenizer_info``) and, with no network, waits out its retries before giving up.
    tokenizer = None

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[tuple[str, str], list[str]] = defaultdict(list)

    def _count(self, requests: list[Any]) -> None:
        for request in requests:
            self.seen[request.task_name, request.request_type].append(str(request.args[0]))

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        self._count(requests)
        return super().loglikelihood(requests, disable_tqdm)

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        self._count(requests)
        return super().generate_until(requests, disable_tqdm)


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return load_tokenizer(DEFAULT_TOKENIZER)


@pytest.fixture(scope="module")
def runs(tokenizer: Any) -> tuple[dict[str, TaskPlan], CountingDummy]:
    mp = pytest.MonkeyPatch()
    mp.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    mp.setenv("HF_DATASETS_OFFLINE", "1")
    mp.setenv("HF_HUB_OFFLINE", "1")
    try:
        plans = {plan.task: plan for plan in plan_tasks(TASKS, limit=LIMIT, metadata=METADATA, tokenizer=tokenizer)}
        dummy = CountingDummy()
        for task in TASKS:  # one run per task: a run shares equal earlier-stage requests between tasks
            metadata = _task_metadata(task)
            manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
            simple_evaluate(model=dummy, tasks=[task], limit=LIMIT, task_manager=manager, bootstrap_iters=0)
    finally:
        mp.undo()
    return plans, dummy


def _sent(dummy: CountingDummy, task: str) -> dict[str, list[str]]:
    """What the dummy received for ``task`` (placeholders never reach it: harness_ext/task/placeholders.py)."""
    return {kind: contexts for (name, kind), contexts in dummy.seen.items() if name == task}


def _planned(plan: TaskPlan) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for part in (plan.building, plan.final):
        for kind, tally in part.items():
            out[kind] += tally._contexts_per_request
    return out


@pytest.mark.parametrize("task", TASKS)
def test_plan_counts_equal_what_a_dummy_run_sends(runs: Any, task: str) -> None:
    plans, dummy = runs
    plan, sent = plans[task], _sent(dummy, task)
    planned = _planned(plan)
    assert plan.documents == LIMIT
    assert {k for k, v in planned.items() if v} == {k for k, v in sent.items() if v}
    for kind, contexts in sent.items():
        # same requests, same distinct contexts (PairS: the recorder's random judge draws the
        # dummy's random numbers, seeded alike, so its rounds ask the same comparisons)
        assert len(planned[kind]) == len(contexts), kind
        assert Counter(planned[kind]) == Counter(contexts), kind


def test_the_shards_plans_partition_the_whole_plan(runs: Any, tokenizer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each shard is planned as it builds; together they ask exactly what the whole run asks."""
    plans, _ = runs
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # PairS rounds follow the recorder's random judge in call order, so they are left out here
    tasks = [task for task in TASKS if not task.endswith("_pairs")]
    shards = [
        plan_tasks(tasks, limit=LIMIT, metadata=METADATA, tokenizer=tokenizer, shard=Shard(index, 2))
        for index in range(2)
    ]
    for task in tasks:
        parts = [next(plan for plan in shard if plan.task == task) for shard in shards]
        assert [part.documents for part in parts] == [1, 1], task
        merged: dict[str, Counter[str]] = defaultdict(Counter)
        for part in parts:
            for kind, contexts in _planned(part).items():
                merged[kind].update(contexts)
        assert {k: v for k, v in merged.items() if v} == {
            k: Counter(v) for k, v in _planned(plans[task]).items() if v
        }, task
    totals = [shard_totals(shard, lc_chat_max_tokens=1) for shard in shards]
    assert [total.docs for total in totals] == [len(tasks), len(tasks)]
    table = render_shards(shards, lc_chat_max_tokens=1)
    assert "| 0/2 |" in table and "| 1/2 |" in table


def test_an_empty_shard_is_named_with_its_task(tokenizer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``plan --shards 3 --limit 2``: shard 2/3 has no document; the plan says so instead of lm-eval's
    "did not find any docs"."""
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    task = "logic_consistency_summeval"
    shards = [plan_tasks([task], limit=2, tokenizer=tokenizer, shard=Shard(index, 3)) for index in range(3)]
    assert [[plan.documents for plan in shard] for shard in shards] == [[1], [1], [0]]
    table = render_shards(shards, lc_chat_max_tokens=1)
    assert "shard 2/3 has no document of any task: nothing to send there" in table
    assert "shard 0/3 has no document" not in table and task not in table


def test_later_stages_are_bounded_from_the_stage_definitions(runs: Any) -> None:
    plans, dummy = runs
    gv = plans["logic_consistency_gv_arithmetic"]
    (validator,) = gv.later_stages
    # one validator prompt per document, scored on True and False
    assert (validator.stage, validator.request_type, validator.requests, validator.contexts) == (
        "validator",
        "loglikelihood",
        2 * LIMIT,
        LIMIT,
    )
    assert validator.context_tokens_estimate and validator.context_tokens_estimate > 0
    assert validator.bounded is not None and len(validator.bounded) == LIMIT  # rendered: a bound, not an estimate
    (ranking,) = plans["logic_consistency_causal_ranking"].later_stages
    assert (ranking.requests, ranking.generated_tokens) == (LIMIT, LIMIT * 160)
    # the dummy's "lol" is unparseable: each document's validator is skipped, and its placeholder
    # request is answered without the model (nor is it in the plan: it costs nothing)
    assert ("logic_consistency_gv_arithmetic", "loglikelihood") not in dummy.seen
    placeholder_prompts = (
        multistage.PLACEHOLDER_PROMPT,
        pairs_task.PairsRankingTask.PLACEHOLDER_PROMPT,
        self_agreement_task.SelfAgreementTask.PLACEHOLDER_PROMPT,
    )
    assert not [c for contexts in dummy.seen.values() for c in contexts if c in placeholder_prompts]


def _characters(texts: list[str], add_special_tokens: bool = False) -> dict[str, list[list[str]]]:
    """A tokenizer of one token per character (piecewise counts equal whole counts)."""
    return {"input_ids": [list(text) for text in texts]}


def test_later_stage_prompt_tokens_are_the_mean_first_stage_prompt_plus_answers() -> None:
    # two documents, first-stage prompts of 10 and 30 tokens, 8 generated tokens bound each; the
    # later stage has one prompt per document: 2 x (mean 20 + 8), not the longest (2 x (30 + 8))
    first = Tally(
        requests=2, contexts={"a" * 10, "b" * 30}, generated_tokens=16, _contexts_per_request=["a" * 10, "b" * 30]
    )
    bound = StageBound(
        "validator", "loglikelihood", requests=4, contexts=2, context_tokens_estimate=None, generated_tokens=0
    )
    plan = TaskPlan(task="t", documents=2, building={"generate_until": first}, later_stages=[bound])
    count_tokens([plan], _characters)
    assert bound.context_tokens_estimate == 2 * (20 + 8)
    assert plan.tokens["later_stage_tokens_estimate"] == 56
    # the module docstring says the same (the report marks it ≈, an estimate, not a ≤ bound)
    assert "mean first-stage prompt" in " ".join(str(plan_module.__doc__).split())


def test_api_calls_follow_the_backends_rules(runs: Any) -> None:
    plans, _ = runs
    summeval = api_costs(plans["logic_consistency_summeval"], lc_chat_max_tokens=1)
    contexts = len(plans["logic_consistency_summeval"].final["loglikelihood"].contexts)
    assert summeval["lc-chat"]["calls"] == contexts  # both letters of a prompt: one call
    assert not summeval["local-chat-completions"]["runnable"]
    generate = api_costs(plans["logic_consistency_noveleval_generate"], lc_chat_max_tokens=1)
    requests = plans["logic_consistency_noveleval_generate"].final["generate_until"].requests
    assert generate["lc-chat"]["calls"] == generate["local-chat-completions"]["calls"] == requests


def test_multi_token_log_likelihoods_are_refused_on_lc_chat(tokenizer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    (plan,) = plan_tasks(["logic_consistency_causal_ctp_so"], limit=1, tokenizer=tokenizer)
    costs = api_costs(plan, lc_chat_max_tokens=1)
    assert not costs["lc-chat"]["runnable"] and "multi-token" in costs["lc-chat"]["reason"]
    assert plan.later_stages[0].requests == 10  # one effect per intermediate


def test_table_and_json_show_prices_and_pairs_bounds(runs: Any) -> None:
    plans, _ = runs
    ordered = [plans[task] for task in TASKS]
    table = render(ordered, lc_chat_max_tokens=1, price_in=1.0, price_out=2.0, tokenizer=DEFAULT_TOKENIZER)
    assert "lc-chat $" in table and "PairS per run, worst case" in table and DEFAULT_TOKENIZER in table
    data = as_json(ordered, lc_chat_max_tokens=1, price_in=1.0, price_out=2.0, tokenizer=DEFAULT_TOKENIZER)
    json.dumps(data)  # serialisable
    summeval = next(t for t in data["tasks"] if t["task"] == "logic_consistency_summeval")
    lc = summeval["api"]["lc-chat"]
    assert lc["usd"] == pytest.approx((lc["prompt_tokens"] * 1.0 + lc["generated_tokens_bound"] * 2.0) / 1e6)


def test_piecewise_token_counts_equal_whole_text_counts(runs: Any, tokenizer: Any) -> None:
    plans, _ = runs
    texts = sorted(
        {
            c
            for plan in plans.values()
            for part in (plan.building, plan.final)
            for tally in part.values()
            for c in tally.contexts
        }
    )
    whole = [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    assert context_lengths(tokenizer, texts) == dict(zip(texts, whole, strict=True))


def test_a_tokenizer_that_breaks_piecewise_counting_is_counted_whole() -> None:
    def per_call(texts: list[str], add_special_tokens: bool = False) -> dict[str, list[list[int]]]:
        return {"input_ids": [[0] * (len(text.split()) + 1) for text in texts]}  # one extra token per text

    texts = ["Article.\nSummary A: one.\nSummary B: two.", "Article.\nSummary A: two.\nSummary B: one."]
    assert context_lengths(per_call, texts) == {text: len(text.split()) + 1 for text in texts}
