"""The invariance family's metrics: per-question values (lm-eval's ``mean``) and corpus statistics.

A question's record (``process_results``) holds, in the layout of ``metrics/invariance.py``: ``picks``
(the ORIGINAL option index picked under each variant), ``gold``, ``perms`` (the original option shown
at each displayed position, per variant), ``scores`` (the log-likelihood of each displayed label) and
``label_set``. Per-question metrics are computed from it here, one value per document, so lm-eval's
``mean`` and its stderr are clustered by question; a value the metric leaves undefined (NaN) is
``None`` in that document's results, left out of the mean (``harness_ext/task/undefined.py``, so lm-eval
does not warn of unequal document counts), and counted (``undefined_<metric>``), never reported as 0 or 1.
Corpus statistics (RStd, pick rates, their KL from uniform, PriDe's prior and debiased accuracy) are
aggregation functions over every document's record; each but the debiased accuracy declares its
bootstrap standard error over questions, which the autoload hook gives lm-eval as ``<metric>_stderr``
(``harness_ext/task/corpus_stderr.py``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from lm_eval.api.metrics import mean

from logic_consistency.harness_ext.task.base import total
from logic_consistency.harness_ext.task.corpus_stderr import declare_bootstrap_stderr
from logic_consistency.harness_ext.task.undefined import reported
from logic_consistency.metrics import invariance as inv
from logic_consistency.metrics import invariance_bias as bias
from logic_consistency.metrics import invariance_pride as pride
from logic_consistency.metrics import invariance_validation as validation
from logic_consistency.metrics._validation import UndefinedMetricError

__all__ = ["BALANCED", "VALIDATION_METRICS", "defined_values", "metric_specs", "question_values", "records_arrays"]

LOG = logging.getLogger(__name__)
#: Transforms that show every question's gold equally often at every position (balanced RStd, PriDe).
BALANCED = ("cyclic", "swap_gold", "permutations")
#: Transforms that show every option equally often at every position: PriDe's estimated prior per label.
PRIOR = ("cyclic", "permutations")
#: Per-question metrics from the picks and the gold: name -> (function, higher is better).
_PER_QUESTION: Mapping[str, tuple[Callable[..., Any], bool | None]] = {
    "acc_original": (inv.original_accuracy, True),
    "acc_mean": (inv.mean_accuracy, True),
    "acc_circular": (inv.circular_accuracy, True),
    "acc_any": (inv.any_correct, True),
    "order_sensitive": (inv.order_sensitive, False),
    "acc_majority": (inv.majority_vote_accuracy, True),
}
#: Per-question metrics of the picks alone.
_CONTENT: Mapping[str, tuple[Callable[..., Any], bool | None]] = {
    "content_consistency": (inv.content_consistency, True),
    "pairwise_agreement": (inv.pairwise_agreement, True),
}
#: Bootstrap resamples behind a corpus statistic's value (which does not depend on them); its standard error
#: uses lm-eval's ``bootstrap_iters``.
_RESAMPLES = 100


def records_arrays(records: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """The records stacked (questions x variants [x positions]); a question with fewer variants is padded
    with unparseable picks, the original order and missing (NaN) scores, which no statistic counts."""
    n_variants = max(len(record["picks"]) for record in records)
    k = len(records[0]["perms"][0])
    picks = np.full((len(records), n_variants), inv.UNPARSEABLE)
    perms = np.tile(np.arange(k), (len(records), n_variants, 1))
    scores = np.full((len(records), n_variants, k), np.nan)
    for q, record in enumerate(records):
        used = len(record["picks"])
        picks[q, :used], perms[q, :used], scores[q, :used] = record["picks"], record["perms"], record["scores"]
    gold = np.asarray([record["gold"] for record in records])
    return {"picks": picks, "gold": gold, "perms": perms, "scores": scores}


def _statistic(name: str, compute: Callable[[dict[str, np.ndarray]], float]) -> Callable[[Sequence[Any]], float]:
    """An lm-eval aggregation: ``compute`` over every document's record; NaN (logged) where undefined."""

    def aggregate(records: Sequence[Any]) -> float:
        try:
            return float(compute(records_arrays(records)))
        except UndefinedMetricError as error:
            LOG.warning("%s is undefined: %s", name, error)
            return math.nan

    aggregate.__name__ = name
    return aggregate


#: A corpus statistic with its bootstrap over questions: (stacked records, resamples) -> its estimate.
_Estimator = Callable[[dict[str, np.ndarray], int], bias.Estimate]


def _estimated(name: str, estimate: _Estimator) -> Callable[[Sequence[Any]], float]:
    """:func:`_statistic` of ``estimate``'s value, declaring its bootstrap standard error over questions
    (``Estimate.stderr``, ``bootstrap_iters`` resamples) as lm-eval's ``<name>_stderr``
    (``harness_ext/task/corpus_stderr.py``); NaN where the statistic is undefined."""
    aggregate = _statistic(name, lambda a: estimate(a, _RESAMPLES).value)

    def stderr(records: Sequence[Any], iters: int) -> float:
        try:
            return estimate(records_arrays(records), iters).stderr
        except UndefinedMetricError:  # the value is undefined too, and its aggregation logged why
            return math.nan

    declare_bootstrap_stderr(aggregate, stderr)
    return aggregate


def _rstd(balanced: bool) -> _Estimator:
    def estimate(a: dict[str, np.ndarray], n_resamples: int) -> bias.Estimate:
        return bias.rstd(a["picks"], a["gold"], a["perms"], balanced=balanced, n_resamples=n_resamples)

    return estimate


def _pick_rate(position: int) -> _Estimator:
    def estimate(a: dict[str, np.ndarray], n_resamples: int) -> bias.Estimate:
        return bias.pick_rate(a["picks"], a["perms"], position, n_resamples=n_resamples)

    return estimate


def _prior(position: int) -> _Estimator:
    def estimate(a: dict[str, np.ndarray], n_resamples: int) -> bias.Estimate:
        return pride.estimated_prior_at(a["scores"], a["perms"], position, n_resamples=n_resamples)

    return estimate


def _kl(a: dict[str, np.ndarray], n_resamples: int) -> bias.Estimate:
    return bias.pick_rate_kl(a["picks"], a["perms"], n_resamples=n_resamples)


def _pride(a: dict[str, np.ndarray]) -> float:
    values = pride.pride_debiased_accuracy(a["scores"], a["perms"], a["gold"])
    return float(np.nanmean(values)) if not np.isnan(values).all() else math.nan


#: The per-question metrics of ``ask_incorrect`` and of ``self_validate``.
_NEGATION = {"negation_contradiction": False, "negation_accuracy": True}
VALIDATION_METRICS = {"gv_consistency": True, "validator_accuracy": True, "self_endorsed_wrong": False}


def _validation_values(record: Mapping[str, Any], picks: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """The self-validation metrics of one question: the verdict on its own original-order pick, the
    validator's accuracy over its options, and whether it endorses its own wrong answer."""
    verdicts = np.asarray([record["verdicts"]], dtype=np.float64)
    own = validation.own_verdicts(verdicts, picks[:, 0])
    return {
        "gv_consistency": validation.gv_consistency(own)[0],
        "validator_accuracy": validation.validator_accuracy(verdicts, validation.gold_truth(gold, verdicts.shape[1]))[
            0
        ],
        "self_endorsed_wrong": validation.self_endorsed_wrong(own, picks[:, 0] == gold)[0],
    }


def _undefined(transform: str, negation: bool, validate: bool = False) -> tuple[str, ...]:
    """The per-question metrics that can be undefined for a question (counted as ``undefined_<name>``)."""
    ids = ("label_consistency",) if transform == "ids" else ()
    return (
        "acc_majority",
        *_CONTENT,
        *ids,
        *(_NEGATION if negation else ()),
        *(VALIDATION_METRICS if validate else ()),
    )


def metric_specs(
    transform: str, labels: Sequence[str], *, negation: bool = False, validate: bool = False
) -> dict[str, tuple[Any, bool | None]]:
    """Every metric of a task under ``transform``: name -> (lm-eval aggregation, higher is better)."""
    specs: dict[str, tuple[Any, bool | None]] = {
        name: (mean, better) for name, (_, better) in {**_PER_QUESTION, **_CONTENT}.items()
    }
    if transform == "ids":
        specs["label_consistency"] = (mean, True)
    specs.update({name: (mean, better) for name, better in _NEGATION.items() if negation})
    specs.update({name: (mean, better) for name, better in VALIDATION_METRICS.items() if validate})
    specs.update({f"undefined_{name}": (total, False) for name in _undefined(transform, negation, validate)})
    specs["unparseable"] = (total, False)
    return {**specs, **_corpus_specs(transform, labels)}


def _corpus_specs(transform: str, labels: Sequence[str]) -> dict[str, tuple[Any, bool | None]]:
    """The corpus statistics of a task under ``transform``: name -> (aggregation over every record, higher is
    better); each but ``acc_pride`` declares its bootstrap standard error."""
    specs: dict[str, tuple[Any, bool | None]] = {"rstd": (_estimated("rstd", _rstd(False)), False)}
    if transform in BALANCED:
        specs["rstd_balanced"] = (_estimated("rstd_balanced", _rstd(True)), False)
        specs["acc_pride"] = (_statistic("acc_pride", _pride), True)  # no standard error (N/A)
    specs["pick_rate_kl"] = (_estimated("pick_rate_kl", _kl), False)
    for position, label in enumerate(labels):
        specs[f"pick_rate_{label}"] = (_estimated(f"pick_rate_{label}", _pick_rate(position)), None)
        if transform in PRIOR:
            specs[f"prior_{label}"] = (_estimated(f"prior_{label}", _prior(position)), None)
    return specs


def question_values(
    record: Mapping[str, Any], transform: str, labels: Sequence[str], *, negation: bool = False, validate: bool = False
) -> dict[str, Any]:
    """One document's results: each per-question metric (an undefined one ``None`` and counted), the
    record under each corpus statistic's name."""
    picks, gold = np.asarray([record["picks"]]), np.asarray([record["gold"]])
    values = _per_question_values(record, picks, gold, transform, negation=negation, validate=validate)
    out = defined_values(values, _undefined(transform, negation, validate))
    out["unparseable"] = inv.count_unparseable(picks)
    for name in metric_specs(transform, labels, negation=negation, validate=validate):
        if name not in out and name not in values:
            out[name] = dict(record)
    return out


def _per_question_values(
    record: Mapping[str, Any], picks: np.ndarray, gold: np.ndarray, transform: str, *, negation: bool, validate: bool
) -> dict[str, Any]:
    """Every per-question metric of one question (NaN where undefined): those of the picks and the gold,
    of the picks alone, ``label_consistency`` under ``ids``, and the negation and self-validation ones
    when asked."""
    values = {name: function(picks, gold)[0] for name, (function, _) in _PER_QUESTION.items()}
    values.update({name: function(picks)[0] for name, (function, _) in _CONTENT.items()})
    if transform == "ids":
        values["label_consistency"] = inv.label_set_consistency(picks, [record["perms"]], record["label_set"])[0]
    if negation:
        values.update(_negation_values(record, picks, gold))
    if validate:
        values.update(_validation_values(record, picks, gold))
    return values


def _negation_values(record: Mapping[str, Any], picks: np.ndarray, gold: np.ndarray) -> dict[str, Any]:
    """The negation metrics of one question: the share of variants whose option picked as correct is also
    picked as incorrect, and the share whose option picked as incorrect is not the gold."""
    negated = np.asarray([record["negation_picks"]])
    return {
        "negation_contradiction": validation.negation_contradiction(picks, negated)[0],
        "negation_accuracy": validation.negation_accuracy(negated, gold)[0],
    }


def defined_values(values: Mapping[str, Any], undefinable: Sequence[str]) -> dict[str, Any]:
    """``values`` as floats, each undefined (NaN) one ``None`` (left out of its mean by the autoload hook,
    or out of the document without it: :func:`~logic_consistency.harness_ext.task.undefined.reported`) and
    counted as ``undefined_<name>`` = 1; ``undefined_<name>`` = 0 for each other name of ``undefinable``."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if np.isnan(value):
            out[name], out[f"undefined_{name}"] = None, 1
        else:
            out[name] = float(value)
    for name in undefinable:
        out.setdefault(f"undefined_{name}", 0)
    return reported(out)
