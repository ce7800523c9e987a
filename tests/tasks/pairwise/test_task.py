"""The pairwise task class, run through lm-eval's real evaluator with fake models we control."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"
_OPTIONS = re.compile(r"Option A: item-(\d+)\nOption B: item-(\d+)\nQuestion: Which is (larger|smaller)\?")


class ScriptedJudge(LM):
    """A fake model whose pairwise answers follow a rule of the two item numbers.

    ``rule(a, b, negated)`` returns the option the model prefers, "A" or "B" (or any string, which
    generation mode then returns verbatim).
    """

    def __init__(self, rule: Any) -> None:
        super().__init__()
        self.rule = rule
        self.calls: list[str] = []

    def _answer(self, context: str) -> str:
        self.calls.append(context)
        a, b, relation = _OPTIONS.search(context).groups()
        return self.rule(int(a), int(b), relation == "smaller")

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        out = []
        for request in requests:
            context, continuation = request.args
            preferred = self._answer(context)
            out.append((math.log(0.9 if continuation.strip() == preferred else 0.1), False))
        return out

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        return [self._answer(request.args[0]) for request in requests]

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError


def perfect(a: int, b: int, negated: bool) -> str:
    better_is_a = a > b
    return "A" if better_is_a != negated else "B"


def always_a(a: int, b: int, negated: bool) -> str:
    return "A"


def _run(model: LM, task: str, metadata: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    # as `lm_eval --metadata`, which reaches tasks through the TaskManager
    manager = TaskManager(include_path=str(FIXTURES), include_defaults=False, metadata=metadata)
    return simple_evaluate(model=model, tasks=[task], task_manager=manager, **kwargs)


def _metrics(results: dict[str, Any], task: str) -> dict[str, float]:
    return {k.split(",")[0]: v for k, v in results["results"][task].items() if k.endswith(",none")}


def test_consistent_judge_scores_one_everywhere() -> None:
    judge = ScriptedJudge(perfect)
    metrics = _metrics(_run(judge, "toy_pairwise"), "toy_pairwise")
    for name in ("s_tran_3", "s_tran_4", "s_comm", "s_neg", "human_agreement"):
        assert metrics[name] == pytest.approx(1.0), name
    assert metrics["unparseable"] == 0
    # 5 items -> 20 ordered pairs, 4 items -> 12; two variants; one forward per letter.
    assert len(judge.calls) == (20 + 12) * 2 * 2


def test_position_biased_judge() -> None:
    """Always "A": both orders disagree (s_comm 0), negation never flips (s_neg 0), the
    upper-triangle graph is i beats j for i < j (transitive, s_tran 1), and H is the share of
    ordered pairs whose first item is the better one (exactly 1/2)."""
    metrics = _metrics(_run(ScriptedJudge(always_a), "toy_pairwise"), "toy_pairwise")
    assert metrics["s_comm"] == 0.0
    assert metrics["s_neg"] == 0.0
    assert metrics["s_tran_3"] == pytest.approx(1.0)
    assert metrics["human_agreement"] == pytest.approx(0.5)


def test_every_prompt_is_distinct_and_shares_the_context_prefix() -> None:
    judge = ScriptedJudge(perfect)
    _run(judge, "toy_pairwise_generate")
    # generation: one request per (variant, ordered pair), none repeated
    assert len(judge.calls) == (20 + 12) * 2
    assert len(set(judge.calls)) == len(judge.calls)
    assert all(call.startswith("Context: ") for call in judge.calls)


def test_generation_mode_counts_unparseable_answers() -> None:
    def sometimes_babbles(a: int, b: int, negated: bool) -> str:
        # pairs involving item 9 get an answer that names no option
        return "I cannot decide." if 9 in (a, b) else perfect(a, b, negated)

    results = _run(ScriptedJudge(sometimes_babbles), "toy_pairwise_generate")
    metrics = _metrics(results, "toy_pairwise_generate")
    # item 9 takes part in 8 ordered pairs of instance toy-0, asked normal and negated
    assert metrics["unparseable"] == 16
    # the remaining judgements are consistent; missing ones are left out, not guessed
    assert metrics["s_comm"] == pytest.approx(1.0)
    assert metrics["s_neg"] == pytest.approx(1.0)
    assert metrics["human_agreement"] == pytest.approx(1.0)


def test_small_instances_leave_larger_k_undefined() -> None:
    results = _run(ScriptedJudge(perfect), "toy_pairwise", metadata={"ks": [3, 5]})
    task = results["results"]["toy_pairwise"]
    # only toy-0 has 5 items: s_tran_5 averages one instance, s_tran_3 both
    assert task["s_tran_5,none"] == pytest.approx(1.0)
    assert results["n-samples"]["toy_pairwise"]["effective"] == 2


def test_predict_only_returns_outputs_without_metrics() -> None:
    results = _run(ScriptedJudge(perfect), "toy_pairwise", predict_only=True)
    assert "toy_pairwise" in results["results"]


def test_log_samples_keep_every_prompt() -> None:
    results = _run(ScriptedJudge(perfect), "toy_pairwise", log_samples=True)
    sample = results["samples"]["toy_pairwise"][0]
    assert len(sample["arguments"]) == 20 * 2 * 2
    assert sample["doc"]["instance_id"] == "toy-0"


def test_bad_options_name_the_key() -> None:
    with pytest.raises(ValueError, match="max_items"):
        _run(ScriptedJudge(perfect), "toy_pairwise", metadata={"max_items": 2})


def test_position_bias_is_one_for_an_always_a_judge() -> None:
    metrics = _metrics(_run(ScriptedJudge(always_a), "toy_pairwise"), "toy_pairwise")
    assert metrics["position_bias"] == 1.0
    # log-likelihood scoring: P(A) = 0.9 / (0.9 + 0.1) in every prompt
    assert metrics["p_first_mean"] == pytest.approx(0.9)


def test_consistent_judge_is_unbiased_and_ranks_perfectly() -> None:
    results = _run(ScriptedJudge(perfect), "toy_pairwise")
    metrics = _metrics(results, "toy_pairwise")
    assert metrics["position_bias"] == 0.5
    assert metrics["p_first_mean"] == pytest.approx(0.5)
    for name in ("rank_spearman_win_loss", "rank_spearman_bt", "pairs_spearman", "pairs_spearman_calibrated"):
        assert metrics[name] == pytest.approx(1.0), name
    # PairS sorts 5 and 4 items with at most 8 and 5 comparisons of 20 and 12 ordered pairs
    assert 0 < metrics["pairs_comparisons_ratio"] <= (8 / 20 + 5 / 12) / 2
    assert results["higher_is_better"]["toy_pairwise"]["position_bias"] is None


def test_generation_reports_position_bias_without_p_first() -> None:
    metrics = _metrics(_run(ScriptedJudge(always_a), "toy_pairwise_generate"), "toy_pairwise_generate")
    assert metrics["position_bias"] == 1.0
    assert "p_first_mean" not in metrics


def test_pairs_replay_can_be_switched_off() -> None:
    metrics = _metrics(_run(ScriptedJudge(perfect), "toy_pairwise", metadata={"pairs_runs": 0}), "toy_pairwise")
    assert "pairs_spearman" not in metrics and "rank_spearman_win_loss" in metrics
    with pytest.raises(ValueError, match="pairs_runs"):
        _run(ScriptedJudge(perfect), "toy_pairwise", metadata={"pairs_runs": -1})


def test_pairs_replay_runs_the_beam_when_asked() -> None:
    # An unpruned, unbounded beam asks every pair of each merge: n (n - 1) / 2 per run, half the matrix.
    metadata = {"pairs_method": "beam", "pairs_beam_size": 1000, "pairs_prob_gap": 0.5}
    judge = ScriptedJudge(perfect)
    metrics = _metrics(_run(judge, "toy_pairwise", metadata=metadata), "toy_pairwise")
    assert metrics["pairs_comparisons_ratio"] == pytest.approx(0.5)
    assert metrics["pairs_spearman"] == pytest.approx(1.0) and metrics["pairs_spearman_calibrated"] == pytest.approx(
        1.0
    )
    assert len(judge.calls) == 2 * 2 * (20 + 12)  # the replay asks the model nothing more


class TyingJudge(ScriptedJudge):
    """Both letters equally likely (P(A) = 0.5 exactly) where ``rule`` answers "tie", else as ScriptedJudge."""

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        out = []
        for request in requests:
            context, continuation = request.args
            preferred = self._answer(context)
            if preferred == "tie":
                out.append((math.log(0.5), False))
            else:
                out.append((math.log(0.9 if continuation.strip() == preferred else 0.1), False))
        return out


def test_a_judge_that_always_ties_wins_nothing_for_option_a() -> None:
    """Every P(A) = 0.5: counted as ties; no metric that needs a winner is reported (never 0 or 1)."""
    metrics = _metrics(_run(TyingJudge(lambda a, b, negated: "tie"), "toy_pairwise"), "toy_pairwise")
    # toy instances: 5 and 4 items, normal + negated: 2 * (20 + 12) judgements, all ties
    assert metrics["n_ties"] == 64
    for name in ("position_bias", "s_comm", "s_neg", "human_agreement", "s_tran_3"):
        assert name not in metrics, name  # undefined for every instance: left out, not 0 or 1
    assert metrics["p_first_mean"] == 0.5


class NearTieJudge(ScriptedJudge):
    """P(letter A) = 0.5 nudged up by ``gap`` in log-probability, letter B at log(0.5): a judge at 50/50."""

    def __init__(self, gap: float) -> None:
        super().__init__(always_a)
        self.gap = gap

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        return [(math.log(0.5) + (self.gap if r.args[1].strip() == "A" else 0.0), False) for r in requests]


@pytest.mark.parametrize(
    ("gap", "tie"),
    [(1e-12, True), (0.999e-6, True), (-0.999e-6, True), (1.001e-6, False), (-1.001e-6, False)],
    ids=["audit-1e-12", "just-inside", "just-inside-B", "just-outside", "just-outside-B"],
)
def test_log_probabilities_closer_than_the_tolerance_are_ties(gap: float, tie: bool) -> None:
    """The audit's 50/50 judge (A at log(0.5) + 1e-12) was published as always preferring the first item."""
    metrics = _metrics(_run(NearTieJudge(gap), "toy_pairwise"), "toy_pairwise")
    if tie:
        assert metrics["n_ties"] == 64  # every judgement of both matrices (2 * (20 + 12))
        assert "position_bias" not in metrics and "s_comm" not in metrics
        assert metrics["p_first_mean"] == 0.5
    else:
        assert metrics["n_ties"] == 0
        assert metrics["position_bias"] == (1.0 if gap > 0 else 0.0)  # a real preference, however small


def test_ties_are_left_out_of_position_bias_and_counted() -> None:
    # always A, except that the negated question and the pairs (a, b) with a > b are ties
    def rule(a: int, b: int, negated: bool) -> str:
        return "tie" if negated or a > b else "A"

    metrics = _metrics(_run(TyingJudge(rule), "toy_pairwise"), "toy_pairwise")
    assert metrics["position_bias"] == 1.0  # every decided judgement is A; ties are no win for A
    assert metrics["n_ties"] == (20 + 10) + (12 + 6)  # negated all tied, normal half tied
    assert "s_neg" not in metrics and "s_comm" not in metrics  # each pair is tied in one order
