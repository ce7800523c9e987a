"""The causal tasks through lm-eval's real evaluator, on fake models whose answers we control."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.loggers import EvaluationTracker
from lm_eval.models.dummy import DummyLM
from lm_eval.tasks import TaskManager

from logic_consistency.metrics.causal import CAUSAL_LABELS
from logic_consistency.tasks.causal import report
from logic_consistency.tasks.causal.hooks import label_key
from logic_consistency.tasks.data import DATA_ENV_VAR

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "tasks" / "causal"
FIXTURE_DATA = ROOT / "tests" / "fixtures" / "data"
N_DOCS = 5  # rows of tests/fixtures/data/delta_causal/shuffled_test_extended.csv
CONJUNCTIONS = ("so", "because", "since", "as", "therefore", "thus", "hence")

_GENERATION = re.compile(
    r"^Generate two (defeater|supporter)s for the cause-effect relationship in which ‘(.*?)’ leads to.*?"
    r"should be (weaker|stronger) than the original.*?The original \w+ is: ‘(.*)’\. Make sure",
    re.S,
)
_SHOWN = re.compile(r"^(\d+)\. (.*)$", re.M)
#: (argument type, strength) -> labels the prompt asks for, first and second
_LABELS = {
    ("defeater", "weaker"): (-2, -1),
    ("defeater", "stronger"): (-4, -5),
    ("supporter", "weaker"): (2, 1),
    ("supporter", "stronger"): (4, 5),
}


def _key(text: str) -> str:
    return text.strip().rstrip(".").casefold()


class SelfAwareLM(LM):
    """Generates intermediates it remembers the intended intensity of, then ranks them.

    ``order="consistent"`` ranks (or scores) by the intended label, ``"reversed"`` the other way.
    ``babble`` / ``bad_ranking``: causes (substrings) for which a generation answer holds one
    argument, or the ranking answer misses indices. ``chatty`` wraps every answer in chat-style
    decoration that the parsers must see through.
    """

    def __init__(
        self,
        *,
        order: str = "consistent",
        chatty: bool = False,
        babble: Iterable[str] = (),
        bad_ranking: Iterable[str] = (),
    ) -> None:
        super().__init__()
        self.sign = {"consistent": 1, "reversed": -1}[order]
        self.chatty, self.babble, self.bad_ranking = chatty, tuple(babble), tuple(bad_ranking)
        self.labels: dict[str, int] = {}
        self.calls = {"generate_until": 0, "loglikelihood": 0}

    def _generate(self, prompt: str) -> str:
        match = _GENERATION.match(prompt)
        if match is None:
            return self._answer_ranking(prompt)
        kind, cause, strength, original = match.groups()
        self.labels[_key(original)] = -3 if kind == "defeater" else 3
        texts = []
        for position, label in enumerate(_LABELS[(kind, strength)], start=1):
            text = f"Claim {kind[0]}{strength[0]}{position} about {cause}"
            self.labels[_key(text)] = label
            texts.append(text)
        if any(word in cause for word in self.babble) and (kind, strength) == ("supporter", "stronger"):
            return texts[0]
        if self.chatty:
            return f'Sure! Here are two {strength} {kind}s:\n\n1. **{texts[0]}**\n2. "{texts[1]}"\n\nI hope this helps!'
        return "\n".join(texts)

    def _answer_ranking(self, prompt: str) -> str:
        if not prompt.startswith("Given a defeasible cause-effect pair"):
            return ""  # the placeholder of a document whose generation was unparseable
        shown = {int(number): self.labels[_key(text)] for number, text in _SHOWN.findall(prompt)}
        numbers = sorted(shown, key=lambda number: self.sign * shown[number])
        cause = re.search(r"The cause is ‘(.*?)’", prompt).group(1)
        if any(word in cause for word in self.bad_ranking):
            numbers = numbers[:-2] + [numbers[0]]  # one index repeated, two missing
        if self.chatty:
            return "Sure, here is the ranking:\n\n" + " > ".join(f"Argument {n}" for n in numbers)
        return " ".join(map(str, numbers))

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        self.calls["generate_until"] += len(requests)
        return [self._generate(request.args[0]) for request in requests]

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        self.calls["loglikelihood"] += len(requests)
        out = []
        for request in requests:
            context = request.args[0].casefold()
            found = [key for key in self.labels if key in context]
            label = self.labels[max(found, key=len)] if found else 0
            out.append((float(self.sign * label), False))
        return out

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError


@pytest.fixture(autouse=True)
def fixture_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(FIXTURE_DATA))


def _run(model: Any, tasks: list[str], **kwargs: Any) -> dict[str, Any]:
    manager = TaskManager(include_path=str(TASKS), include_defaults=False)
    return simple_evaluate(model=model, tasks=tasks, task_manager=manager, **kwargs)


def _metrics(results: dict[str, Any], task: str) -> dict[str, float]:
    return {key.split(",")[0]: value for key, value in results["results"][task].items() if key.endswith(",none")}


PERFECT = {"tau_all": 1.0, "tau_defeaters": 1.0, "tau_supporters": 1.0, "cgp": 1.0, "igc": 1.0, "igc_density": 1.0}
REVERSED = {"tau_all": -1.0, "tau_defeaters": -1.0, "tau_supporters": -1.0, "cgp": 0.0, "igc": 1.0, "igc_density": 1.0}


@pytest.mark.parametrize(("order", "expected"), [("consistent", PERFECT), ("reversed", REVERSED)])
def test_ranking_task_scores_a_consistent_and_a_reversed_model(order: str, expected: dict[str, float]) -> None:
    model = SelfAwareLM(order=order)
    results = _run(model, ["logic_consistency_causal"])
    metrics = _metrics(results, "logic_consistency_causal_ranking")
    assert {name: metrics[name] for name in expected} == pytest.approx(expected)
    assert metrics["unparseable_generation"] == 0
    assert metrics["unparseable_ranking"] == 0
    # one batched generation stage (4 prompts per document), then one ranking prompt per document
    assert model.calls == {"generate_until": N_DOCS * 4 + N_DOCS, "loglikelihood": 0}
    group = _metrics(results, "logic_consistency_causal")
    assert group["tau_all"] == pytest.approx(expected["tau_all"])


def test_chatty_answers_are_parsed() -> None:
    results = _run(SelfAwareLM(chatty=True), ["logic_consistency_causal_ranking"])
    metrics = _metrics(results, "logic_consistency_causal_ranking")
    assert {name: metrics[name] for name in PERFECT} == pytest.approx(PERFECT)
    assert metrics["unparseable_generation"] == metrics["unparseable_ranking"] == 0


def test_unparseable_answers_are_counted_not_scored() -> None:
    # the two "solar" documents answer one stronger supporter; the three "ferry" ones rank badly
    model = SelfAwareLM(babble=["solar"], bad_ranking=["ferry"])
    metrics = _metrics(_run(model, ["logic_consistency_causal_ranking"]), "logic_consistency_causal_ranking")
    assert metrics["unparseable_generation"] == 2
    assert metrics["unparseable_ranking"] == 3
    assert "tau_all" not in metrics  # no document left to score
    # the blocked documents' placeholder requests are answered without a model call
    # (harness_ext/task/placeholders.py): 4 generations per document, then a ranking for the 3 parseable
    assert model.calls["generate_until"] == N_DOCS * 4 + 3


def test_malformed_generation_leaves_other_documents_scored() -> None:
    metrics = _metrics(
        _run(SelfAwareLM(babble=["solar"]), ["logic_consistency_causal_ranking"]), "logic_consistency_causal_ranking"
    )
    assert metrics["unparseable_generation"] == 2
    assert metrics["tau_all"] == 1.0  # the three other documents


def test_samples_show_intermediates_display_order_and_ranking() -> None:
    results = _run(SelfAwareLM(order="reversed"), ["logic_consistency_causal_ranking"], log_samples=True)
    samples = sorted(results["samples"]["logic_consistency_causal_ranking"], key=lambda s: s["doc_id"])
    orders = set()
    for sample in samples:
        doc = sample["doc"]
        generation = doc["stages"]["generation"]["parsed"]
        ranking = doc["stages"]["ranking"]["parsed"]
        assert list(generation["intermediates"]) == [label_key(label) for label in CAUSAL_LABELS]
        assert generation["intermediates"]["-3"] == doc["defeater"]
        assert generation["intermediates"]["+3"] == doc["supporter"]
        assert generation["shown_labels"] == [CAUSAL_LABELS[index] for index in doc["display_order"]]
        orders.add(tuple(generation["shown_labels"]))
        assert ranking["ranked_labels"] == sorted(CAUSAL_LABELS, reverse=True)
        assert [generation["shown_labels"][n - 1] for n in ranking["ranking"]] == ranking["ranked_labels"]
        prompt = sample["arguments"][0][0]
        first = generation["intermediates"][label_key(generation["shown_labels"][0])]
        assert f"The ten arguments are:\n1. {first}\n2. " in prompt
    assert len(orders) == N_DOCS  # each document has its own shuffle


@pytest.mark.parametrize(("order", "expected"), [("consistent", PERFECT), ("reversed", REVERSED)])
def test_ctp_tasks_rank_by_log_likelihood(order: str, expected: dict[str, float]) -> None:
    model = SelfAwareLM(order=order)
    results = _run(model, ["logic_consistency_causal_ctp"])
    for conjunction in CONJUNCTIONS:
        metrics = _metrics(results, f"logic_consistency_causal_ctp_{conjunction}")
        assert {name: metrics[name] for name in expected} == pytest.approx(expected), conjunction
        assert metrics["unparseable_generation"] == 0
    assert model.calls["loglikelihood"] == len(CONJUNCTIONS) * N_DOCS * 10
    assert _metrics(results, "logic_consistency_causal_ctp")["cgp"] == pytest.approx(expected["cgp"])


def test_ctp_samples_show_the_conjunction_in_every_request() -> None:
    results = _run(SelfAwareLM(), ["logic_consistency_causal_ctp_therefore"], log_samples=True)
    sample = results["samples"]["logic_consistency_causal_ctp_therefore"][0]
    assert sample["doc"]["conjunction"] == "therefore"
    assert len(sample["arguments"]) == 10
    for context, continuation in sample["arguments"]:
        assert context.endswith("; therefore,")
        assert continuation == " " + sample["doc"]["effect"]
    assert sample["doc"]["stages"]["ranking"]["parsed"]["ranked_labels"] == list(CAUSAL_LABELS)


def test_dummy_model_completes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The dummy model fetches a hub tokenizer only to log its metadata; there is no network here.
    monkeypatch.setattr(DummyLM, "tokenizer", None)
    results = _run("dummy", ["logic_consistency_causal", "logic_consistency_causal_ctp_so"])
    for task in ("logic_consistency_causal_ranking", "logic_consistency_causal_ctp_so"):
        metrics = _metrics(results, task)
        assert metrics["unparseable_generation"] == N_DOCS  # "lol" holds one argument, not two


def test_confusion_report_reads_a_real_samples_file(tmp_path: Path) -> None:
    # written as `lm_eval --output_path out --log_samples` writes them
    tracker = EvaluationTracker(output_path=str(tmp_path / "out"))
    results = _run(
        SelfAwareLM(babble=["solar"]),
        ["logic_consistency_causal_ranking"],
        log_samples=True,
        evaluation_tracker=tracker,
    )
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    tracker.save_results_samples("logic_consistency_causal_ranking", samples["logic_consistency_causal_ranking"])
    (samples_file,) = (tmp_path / "out").rglob("samples_logic_consistency_causal_ranking_*.jsonl")
    written = report.confusion_report([samples_file], tmp_path / "report")
    data = json.loads(written["logic_consistency_causal_ranking"]["json"].read_text(encoding="utf-8"))
    assert data["n_rankings"] == 3
    assert data["n_unparseable_generation"] == 2
    assert data["counts"] == [[3 if row == col else 0 for col in range(10)] for row in range(10)]
    assert written["logic_consistency_causal_ranking"]["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
