"""Self-agreement of sampled chain-of-thought judgements (Liu et al., "Aligning with Logic", 3.1, Fig. 4).

Every judgement of the pairwise CoT task is sampled k times (``metadata.samples``, default 10, at
least 2; temperature 0.7 with ``do_sample: true``, the paper's settings) and parsed like the CoT
task's answers. Reported (means over instances): ``self_agreement``
(:func:`logic_consistency.metrics.self_agreement.self_agreement`), the consistency metrics of the
majority judgements (a tie has no majority and counts as missing), and the sums ``unparseable``,
``n_majority_ties`` and ``n_single_sample`` (a lone sample agrees with itself, so such a judgement
is left out of ``self_agreement``).

The k samples are k separate requests, never deduplicated, sent in one batched ``generate_until``
call while lm-eval builds its requests; each document then carries one placeholder request. Each
sample is cached by (prompt, generation settings, sample index), so ``--use_cache`` resumes without
re-sampling. Randomness comes from the backend's sampler, seeded by ``lm_eval --seed``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from lm_eval.api.instance import Instance
from lm_eval.api.metrics import mean
from lm_eval.api.model import hash_args

from logic_consistency.harness_ext.task.base import total
from logic_consistency.harness_ext.task.current_run import start_build
from logic_consistency.metrics import UndefinedMetricError, pairwise_consistency
from logic_consistency.metrics.position_bias import position_bias
from logic_consistency.metrics.self_agreement import (
    count_single_sample_rows,
    majority_choice,
    self_agreement,
)
from logic_consistency.options import read_option
from logic_consistency.tasks.answers import parse_choice
from logic_consistency.tasks.pairwise.prebuilt import PrebuiltTask

eval_logger = logging.getLogger(__name__)


def sample_generations(lm: Any, requests: Sequence[Instance], k: int) -> list[list[str]]:
    """k sampled generations per request, never deduplicated; resumable through lm-eval's cache.

    If ``lm`` is lm-eval's ``CachingLM`` (``--use_cache``), sample s of a request is stored under
    ``hash_args("generate_until", (context, gen_kwargs, "sample s of k"))`` in its database and
    read back from there on a re-run; the rest go to the wrapped model in one call.
    """
    keys = [hash_args("generate_until", (*r.args, f"sample {s} of {k}")) for r in requests for s in range(k)]
    flat = [r for r in requests for _ in range(k)]
    cache = getattr(lm, "dbdict", None)
    model = getattr(lm, "lm", lm) if cache is not None else lm
    answers: list[str | None] = [cache.get(key) if cache is not None else None for key in keys]
    _generate_missing(model, flat, answers, keys, cache)
    return [list(answers[i * k : (i + 1) * k]) for i in range(len(requests))]  # type: ignore[arg-type]


def _generate_missing(
    model: Any, flat: Sequence[Instance], answers: list[str | None], keys: Sequence[str], cache: Any
) -> None:
    """Fill the samples the cache did not hold (``None`` in ``answers``) in one call, storing each in the cache."""
    todo = [i for i, answer in enumerate(answers) if answer is None]
    if len(todo) < len(flat):
        eval_logger.info("%d of %d samples read from the cache", len(flat) - len(todo), len(flat))
    if not todo:
        return
    fresh = model.generate_until([flat[i] for i in todo])
    for i, answer in zip(todo, fresh, strict=True):
        answers[i] = answer
        if cache is not None:
            cache[keys[i]] = answer


class SelfAgreementTask(PrebuiltTask):
    """Pairwise CoT judgements sampled k times (see module docstring)."""

    PLACEHOLDER_PROMPT = "(self-agreement: every sample of this document was generated before)"

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config=config, **kwargs)
        task = self.config.task
        if not self._generate:
            raise ValueError(f"task {task!r}: self-agreement samples generations; use output_type: generate_until")
        self.declare_metrics(
            {
                name: (total, False)
                if name in ("unparseable", "n_majority_ties", "n_single_sample")
                else (mean, None if name == "position_bias" else True)
                for name in self.metric_names()
            }
        )

    def validate_options(self, config: dict[str, Any]) -> None:
        """The pairwise options, and ``samples`` (k, each a model call; its bounds and default, Figure 4's 10
        CoT inferences, are declared in ``_options_yaml``: at least ``MIN_PARSED`` = 2, since one sample
        always agrees with itself)."""
        super().validate_options(config)
        self.samples: int = read_option(config.get("metadata") or {}, "samples", where=f"task {config.get('task')!r}")

    def metric_names(self) -> list[str]:  # noqa: D102
        names = ["self_agreement"] + [f"s_tran_{k}" for k in self.options.ks] + ["s_comm"]
        if "negated" in self.options.templates:
            names.append("s_neg")
        return names + ["human_agreement", "position_bias", "unparseable", "n_majority_ties", "n_single_sample"]

    def build_all_requests(self, **kwargs: Any) -> None:  # noqa: D102
        lm, docs = start_build(self, kwargs, model_needed_for="samples every judgement k times")
        gen_kwargs = dict(self.config.generation_kwargs or {})
        requests: list[Instance] = []
        owners: list[int] = []
        for doc_id, doc in docs:
            for variant, i, j in self.plan(doc):
                context = self.format_prompt(self.render(variant, doc, i, j))
                requests.append(
                    Instance("generate_until", doc, (context, gen_kwargs), len(requests), (self.config.task, doc_id, 1))
                )
                owners.append(doc_id)
        eval_logger.info("[%s] %d prompts x %d samples", self.config.task, len(requests), self.samples)
        answers = sample_generations(lm, requests, self.samples) if requests else []
        by_doc: dict[int, list[list[str]]] = {doc_id: [] for doc_id, _ in docs}
        for doc_id, texts in zip(owners, answers, strict=True):
            by_doc[doc_id].append(texts)
        self._docs = {doc_id: {**doc, "sampled_answers": by_doc[doc_id]} for doc_id, doc in docs}
        super().build_all_requests(**kwargs)

    def process_results(self, doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        """Self-agreement and the consistency of the majority judgements of one instance."""
        if self.predict_only():
            return {"bypass": None}
        n = len(doc["items"])
        plan = self.plan(doc)
        sampled = doc["sampled_answers"]
        if len(sampled) != len(plan):
            raise ValueError(f"expected {len(plan)} sampled prompts for {doc['instance_id']}, got {len(sampled)}")
        table = self._parsed_table(sampled)
        unparseable = int(np.isnan(table).sum())
        majority = majority_choice(table)
        has_parsed = ~np.isnan(table).all(axis=1)
        ties = int((np.isnan(majority) & has_parsed).sum())
        matrices = {v: np.full((n, n), np.nan) for v in self.options.templates}
        for (variant, i, j), value in zip(plan, majority, strict=True):
            matrices[variant][i, j] = value
        prefs, neg_prefs = matrices["normal"], matrices.get("negated")
        scores = pairwise_consistency(
            prefs,
            neg_prefs,
            doc.get("human_scores"),
            ks=tuple(k for k in self.options.ks if k <= n),
            calibrated=self.options.calibrated,
            samples=self.options.transitivity_samples,
            seed=self.options.seed,
            nan_policy="omit",
        )
        scores["self_agreement"] = _undefined_as_none(lambda: self_agreement(table))
        scores["position_bias"] = _undefined_as_none(lambda: position_bias(prefs, nan_policy="omit"))
        out: dict[str, Any] = {
            "unparseable": unparseable,
            "n_majority_ties": ties,
            "n_single_sample": count_single_sample_rows(table),
        }
        out.update(self.defined_scores(doc, scores, [name for name in self.metric_names() if name not in out]))
        return out

    def _parsed_table(self, sampled: Sequence[Sequence[str]]) -> np.ndarray:
        """Prompts x samples: 1.0 where a sample picked the first choice, 0.0 the other, NaN unparseable."""
        choices = self.options.choices
        table = np.full((len(sampled), self.samples), np.nan)
        for row, texts in enumerate(sampled):
            for col, text in enumerate(texts):
                picked = parse_choice(text, choices)
                if picked is not None:
                    table[row, col] = 1.0 if picked == choices[0] else 0.0
        return table


def _undefined_as_none(compute: Callable[[], float]) -> float | None:
    """``compute()``, or ``None`` where the metric is undefined for this instance."""
    try:
        return compute()
    except UndefinedMetricError:
        return None
