"""PairS ranking as an lm-eval task (Liu et al., "Aligning with Logic", section 5, Table 4).

Every instance's items are sorted by the PairS merge sort with the model as comparator
(:mod:`logic_consistency.metrics.pairs`), ``pairs_runs`` times (default 100, as the paper) from
seeded random initial orders, raw and calibrated (each comparison judged from both orders). The
merge is ``pairs_method``: ``greedy`` (default, as the authors) or their ``beam`` search
(:mod:`~logic_consistency.tasks.pairwise.pairs_search`). The merge rounds depend on earlier answers,
so they run while lm-eval builds its requests: each round sends every comparison still needed, over
all documents, in ONE batched ``loglikelihood`` call
(:func:`~logic_consistency.harness_ext.task.current_run.call_once`, so ``--use_cache`` resumes); a prompt
is asked at most once per document. The prompt is the ``normal`` template (log-likelihood only).

Metrics (means over instances; meanings in tasks/pairwise/README.md): ``pairs_spearman[_calibrated]``,
``pairs_[calibrated_]comparisons_ratio``, ``pairs_model_calls_ratio``, ``pairs_rounds``, ``n_ties``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.metrics import mean

from logic_consistency.harness_ext.chat.choice_reading import MISSING_METRIC, count_missing
from logic_consistency.harness_ext.task.base import total
from logic_consistency.harness_ext.task.current_run import call_once, start_build
from logic_consistency.metrics import UndefinedMetricError
from logic_consistency.metrics.pairs import PairsSorter
from logic_consistency.metrics.pairs_sort import PairsSearch
from logic_consistency.tasks.answers import first_option_probability
from logic_consistency.tasks.pairwise.cost import pairs_notes
from logic_consistency.tasks.pairwise.prebuilt import PrebuiltTask
from logic_consistency.tasks.pairwise.task import TIES_METRIC

eval_logger = logging.getLogger(__name__)

METRICS = (
    "pairs_spearman",
    "pairs_spearman_calibrated",
    "pairs_comparisons_ratio",
    "pairs_calibrated_comparisons_ratio",
    "pairs_model_calls_ratio",
    "pairs_rounds",
)


class PairsRankingTask(PrebuiltTask):
    """PairS merge-sort ranking with the model as comparator (see module docstring)."""

    PLACEHOLDER_PROMPT = "(PairS: every comparison of this document was asked in the merge rounds)"

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config=config, **kwargs)
        task = self.config.task
        if self._generate:
            raise ValueError(f"task {task!r}: PairS needs probabilities; use output_type: loglikelihood")
        if self.options.pairs_runs < 1:
            raise ValueError(f"task {task!r}: metadata.pairs_runs must be >= 1 for a PairS task")
        self.declare_metrics(
            {name: (mean, not name.endswith(("ratio", "rounds"))) for name in METRICS}
            | {MISSING_METRIC: (total, False), TIES_METRIC: (total, False)}
        )  # n_choices_missing on choice-reading backends (lc-chat) only

    def metric_names(self) -> list[str]:  # noqa: D102
        return list(METRICS)

    def human_metrics(self) -> list[str]:  # noqa: D102 - PairS ranks against the human scores: every metric
        return list(METRICS)

    def cost_plan_notes(self, docs: Sequence[dict[str, Any]]) -> list[tuple[str, Any]]:
        """Lines of ``logic-consistency plan``: the full matrix against PairS's bounds."""
        return pairs_notes(docs, pairs_runs=self.options.pairs_runs)

    def _probability(self, doc: dict[str, Any], pair: tuple[int, int], responses: Sequence[Any]) -> float:
        return first_option_probability(responses[0][0], responses[1][0])

    def build_all_requests(self, **kwargs: Any) -> None:  # noqa: D102 - the PairS merge rounds, then lm-eval's build
        lm, docs = start_build(self, kwargs, model_needed_for="asks the model between merge rounds")
        states = {doc_id: self._start_sorting(doc) for doc_id, doc in docs}
        round_number = 0
        while batch := _next_round(states):
            round_number += 1
            requests = self._round_requests(states, batch)
            eval_logger.info("[%s] PairS round %d: %d comparisons", self.config.task, round_number, len(batch))
            responses = call_once(lm, "loglikelihood", requests)
            for k, (doc_id, pair) in enumerate(batch):
                self._record_answer(states[doc_id], pair, responses[2 * k : 2 * k + 2])
        search = self.options.pairs_search
        self._docs = {doc_id: {**state.doc, "pairs": _pairs_record(state, search)} for doc_id, state in states.items()}
        super().build_all_requests(**kwargs)

    def _start_sorting(self, doc: dict[str, Any]) -> _DocSorting:
        """One document's raw and calibrated sorters, sharing one memo of judged pairs."""
        memo: dict[tuple[int, int], float] = {}
        sorters = {
            name: PairsSorter(
                len(doc["items"]),
                calibrated=calibrated,
                runs=self.options.pairs_runs,
                seed=self.options.seed,
                memo=memo,
                search=self.options.pairs_search,
            )
            for name, calibrated in (("raw", False), ("calibrated", True))
        }
        return _DocSorting(doc=doc, memo=memo, sorters=sorters)

    def _round_requests(
        self, states: dict[int, _DocSorting], batch: list[tuple[int, tuple[int, int]]]
    ) -> list[Instance]:
        """One round's requests: each pair's ``normal`` prompt with every answer choice."""
        delimiter = self.continuation_delimiter()
        requests: list[Instance] = []
        for doc_id, (i, j) in batch:
            doc = states[doc_id].doc
            context = self.format_prompt(self.render("normal", doc, i, j))
            for choice in self.options.choices:
                requests.append(
                    Instance(
                        "loglikelihood",
                        doc,
                        (context, f"{delimiter}{choice}"),
                        len(requests),
                        (self.config.task, doc_id, 1),
                    )
                )
        return requests

    def _record_answer(self, state: _DocSorting, pair: tuple[int, int], responses: Sequence[Any]) -> None:
        """Store one pair's probability in its document's memo and count a missing choice."""
        if (missing := count_missing(responses)) is not None:
            state.missing = (state.missing or 0) + missing
        state.memo[pair] = self._probability(state.doc, pair, responses)

    def process_results(self, doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        """The PairS metrics of one instance, computed during the rounds."""
        if self.predict_only():
            return {"bypass": None}
        record = doc["pairs"]
        all_pairs = record["all_pairs"]
        counts = record["comparisons"]
        out: dict[str, Any] = {
            "pairs_comparisons_ratio": sum(counts["raw"]) / len(counts["raw"]) / all_pairs,
            "pairs_calibrated_comparisons_ratio": 2 * sum(counts["calibrated"]) / len(counts["calibrated"]) / all_pairs,
            "pairs_model_calls_ratio": record["model_calls"] / all_pairs,
            "pairs_rounds": float(record["rounds"]),
        }
        if record.get(MISSING_METRIC) is not None:
            out[MISSING_METRIC] = record[MISSING_METRIC]
        out[TIES_METRIC] = record.get(TIES_METRIC, 0)
        if "undefined" in record:
            eval_logger.warning(
                "[%s] PairS Spearman undefined for %s: %s",
                self.config.task,
                doc.get("instance_id"),
                record["undefined"],
            )
        else:
            out["pairs_spearman"] = record["spearman_raw"]
            out["pairs_spearman_calibrated"] = record["spearman_calibrated"]
        return out


@dataclasses.dataclass
class _DocSorting:
    """One document's PairS sort in progress: its sorters, the memo they share, its rounds and missing choices."""

    doc: dict[str, Any]
    memo: dict[tuple[int, int], float]
    sorters: dict[str, PairsSorter]
    rounds: int = 0
    missing: int | None = None


def _next_round(states: dict[int, _DocSorting]) -> list[tuple[int, tuple[int, int]]]:
    """The pairs every document's sorters still want, counting a round for each document that wants any."""
    batch: list[tuple[int, tuple[int, int]]] = []
    for doc_id, state in states.items():
        wanted = sorted({p for s in state.sorters.values() for p in s.wanted()})
        if wanted:
            state.rounds += 1
        batch += [(doc_id, pair) for pair in wanted]
    return batch


def _pairs_record(state: _DocSorting, search: PairsSearch) -> dict[str, Any]:
    """The ``pairs`` record of one sorted document: counts, Spearman per sorter (or why undefined), a few orders."""
    n = len(state.doc["items"])
    record: dict[str, Any] = {
        "search": dataclasses.asdict(search),
        "rounds": state.rounds,
        MISSING_METRIC: state.missing,
        "model_calls": len(state.memo),
        TIES_METRIC: sum(1 for p in state.memo.values() if p == 0.5),
        "comparisons": {name: s.counts for name, s in state.sorters.items()},
        "orders": {},
    }
    try:
        for name, sorter in state.sorters.items():
            result = sorter.result(state.doc["human_scores"], model_calls=len(state.memo), rounds=state.rounds)
            record[f"spearman_{name}"] = result.spearman
            record["orders"][name] = result.orders[:5]  # a few, for the sample log
    except UndefinedMetricError as error:
        record["undefined"] = str(error)
    record["all_pairs"] = n * (n - 1)
    return record
