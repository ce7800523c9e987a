"""The multi-stage runner through lm-eval's real evaluator, with fake models whose answers we control."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
_QUESTION = re.compile(r"What is (\d+)\+(\d+)\?")
_CLAIM = re.compile(r"Claim: (\d+)\+(\d+)=(-?\d+)\.")


class Calculator(LM):
    """Generates sums (or babble for chosen questions) and validates claims (honestly or not)."""

    def __init__(self, *, honest: bool = True, babble: frozenset[int] = frozenset(), crash_on_validate: bool = False):
        super().__init__()
        self.honest, self.babble, self.crash_on_validate = honest, babble, crash_on_validate
        self.calls: dict[str, int] = {"generate_until": 0, "loglikelihood": 0}

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        out = []
        for request in requests:
            self.calls["generate_until"] += 1
            a, b = map(int, _QUESTION.search(request.args[0]).groups())
            answer = "I do not know" if a in self.babble else f" {a + b}"
            self.cache_hook.add_partial("generate_until", request.args, answer)
            out.append(answer)
        return out

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        if self.crash_on_validate:
            raise KeyboardInterrupt("interrupted during the validator stage")
        out = []
        for request in requests:
            self.calls["loglikelihood"] += 1
            context, continuation = request.args
            claim = _CLAIM.search(context)
            if claim is None:  # the placeholder request of an all-unparseable run
                out.append((-1.0, False))
                continue
            a, b, c = map(int, claim.groups())
            verdict = (a + b == c) == self.honest
            wanted = " True" if verdict else " False"
            out.append((math.log(0.9 if continuation == wanted else 0.1), False))
        return out

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError


def _run(model: LM, tasks: tuple[str, ...] = ("toy_two_stage",), **kwargs: Any) -> dict[str, Any]:
    manager = TaskManager(include_path=str(FIXTURES), include_defaults=False)
    return simple_evaluate(model=model, tasks=list(tasks), task_manager=manager, **kwargs)


def _metric(results: dict[str, Any], name: str) -> float:
    return results["results"]["toy_two_stage"][f"{name},none"]


def test_consistent_model_scores_one() -> None:
    model = Calculator()
    results = _run(model)
    assert _metric(results, "consistency") == 1.0
    assert _metric(results, "unparseable_generator") == 0
    # each stage is one batched call: 4 generations, then 4 x 2 letter scores
    assert model.calls == {"generate_until": 4, "loglikelihood": 8}


def test_inconsistent_validator_scores_zero() -> None:
    assert _metric(_run(Calculator(honest=False)), "consistency") == 0.0


def test_unparseable_generations_are_counted_and_skip_the_validator() -> None:
    model = Calculator(babble=frozenset({3, 7}))
    results = _run(model)
    assert _metric(results, "unparseable_generator") == 2
    assert _metric(results, "consistency") == 1.0  # over the two parseable documents
    # 2 documents x 2 letters; a skipped document's placeholder is answered without the model
    assert model.calls["loglikelihood"] == 2 * 2


def test_every_generation_unparseable_still_completes() -> None:
    model = Calculator(babble=frozenset({1, 3, 10, 7}))
    results = _run(model)
    assert _metric(results, "unparseable_generator") == 4
    assert model.calls["loglikelihood"] == 0  # only placeholders were left: no model call
    assert "consistency,none" not in results["results"]["toy_two_stage"]


def test_samples_show_stage_one_output_next_to_stage_two_prompt() -> None:
    results = _run(Calculator(), log_samples=True)
    sample = results["samples"]["toy_two_stage"][1]
    generator = sample["doc"]["stages"]["generator"]
    assert generator["outputs"]["answer"] == " 7"
    assert generator["parsed"] == {"answer": 7}
    assert "Claim: 3+4=7." in sample["arguments"][0][0]


def test_interrupted_run_resumes_from_cache(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    with pytest.raises(KeyboardInterrupt):
        _run(Calculator(crash_on_validate=True), use_cache=cache)
    resumed = Calculator()
    results = _run(resumed, use_cache=cache)
    assert _metric(results, "consistency") == 1.0
    assert resumed.calls["generate_until"] == 0  # stage 1 came from the cache
    again = Calculator()
    _run(again, use_cache=cache)
    assert again.calls == {"generate_until": 0, "loglikelihood": 0}


def test_stage_requests_shared_by_two_tasks_are_sent_once() -> None:
    model = Calculator()
    results = _run(model, tasks=("toy_two_stage", "toy_two_stage_again"))
    for task in ("toy_two_stage", "toy_two_stage_again"):
        assert results["results"][task]["consistency,none"] == 1.0
        sample_prompts = [s["doc"]["stages"]["generator"]["prompts"]["answer"] for s in results["samples"][task]]
        assert len(sample_prompts) == 4
    # the second task's four generator prompts were answered from the first task's answers;
    # the last stage is ordinary lm-eval requests (4 documents x 2 letters, per task)
    assert model.calls == {"generate_until": 4, "loglikelihood": 16}


class _CrashingCalculator(Calculator):
    """Answers without writing to the cache one by one (like many backends), and dies at a chosen request."""

    def __init__(self, crash_at: int | None = None) -> None:
        super().__init__()
        self.crash_at = crash_at

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        out = []
        for request in requests:
            if self.crash_at is not None and self.calls["generate_until"] == self.crash_at:
                raise KeyboardInterrupt("killed half-way through the generator stage")
            self.calls["generate_until"] += 1
            a, b = map(int, _QUESTION.search(request.args[0]).groups())
            out.append(f" {a + b}")
        return out


def test_a_run_killed_half_way_through_a_stage_resumes_from_the_answers_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from logic_consistency.harness_ext.task import current_run

    monkeypatch.setattr(current_run, "STAGE_CHUNK", 1)
    fresh = _CrashingCalculator()
    _run(fresh, use_cache=str(tmp_path / "fresh"))
    total = fresh.calls["generate_until"]
    assert total == 4  # the four fixture questions
    cache = str(tmp_path / "cache")
    killed = _CrashingCalculator(crash_at=2)
    with pytest.raises(KeyboardInterrupt):
        _run(killed, use_cache=cache)
    assert killed.calls["generate_until"] == 2
    resumed = _CrashingCalculator()
    results = _run(resumed, use_cache=cache)
    assert resumed.calls["generate_until"] == total - 2  # only the answers the killed run did not get
    assert _metric(results, "consistency") == 1.0


def test_construct_requests_outside_the_evaluator() -> None:
    """Called as lm-eval's generic task checks call it (no ``metadata``, a raw document): the next
    stage's requests, named after the task; a document that skipped a stage cannot be scored."""
    manager = TaskManager(include_path=str(FIXTURES), include_defaults=False)
    task = manager.load("toy_two_stage")["tasks"]["toy_two_stage"]
    doc = next(iter(task.test_docs()))
    (first,) = task.construct_requests(doc=doc, ctx="")
    assert first.request_type == "generate_until" and "What is" in first.args[0]
    assert (first.task_name, first.doc_id, first.repeats) == ("toy_two_stage", None, 1)
    answered = {**doc, "stages": {"generator": {"prompts": {}, "outputs": {}, "parsed": {"answer": 5}}}}
    last = task.construct_requests(doc=answered, ctx="", metadata=("toy_two_stage", 7, 1))
    assert [r.request_type for r in last] == ["loglikelihood", "loglikelihood"] and last[0].doc_id == 7
    assert "Claim:" in last[0].args[0]
    with pytest.raises(RuntimeError, match="without its 'generator' stage"):
        task.process_results({**doc, "stages": {}}, [(-1.0, False), (-2.0, False)])


def test_a_generating_last_stage_gives_the_task_its_generation_kwargs() -> None:
    """lm-eval records, and warns about, its own default generation_kwargs for a generate_until task without
    them; a two-stage task's are its last stage's (the ones lm-eval's request type is), never lm-eval's."""
    from logic_consistency.harness_ext.task.multistage import _with_last_stage_output_type

    kwargs = {"until": ["\n\n\n"], "max_gen_toks": 160, "do_sample": False}
    stages = [{"name": "a", "generation_kwargs": {"max_gen_toks": 96}}, {"name": "b", "generation_kwargs": kwargs}]
    config = _with_last_stage_output_type({"stages": stages})
    assert config["output_type"] == "generate_until" and config["generation_kwargs"] == kwargs
    scored = _with_last_stage_output_type({"stages": [stages[0], {"name": "b", "output_type": "loglikelihood"}]})
    assert scored["output_type"] == "loglikelihood" and "generation_kwargs" not in scored
