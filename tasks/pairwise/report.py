"""``logic-consistency correlate RESULTS...``: the paper's model-level studies from results files.

Prints, and with ``--out DIR`` writes (JSON + PNG): per model and dataset, Pearson and Spearman
across the model's prompt templates of s_comm against H (Liu et al. §3.2, Figure 5; s_tran, s_neg,
position_bias and p_first_mean against H are the suite's additions); each metric's spread over the
templates; and per dataset s_tran against ``self_agreement``, one point per model (Figure 4). A
point is a task, never a group; the plain task and ``para01`` (the same prompt) count once, and a
template run twice counts from the newest file. CoT, ``_generate`` and ``_cot_sc`` tasks are kept
apart unless ``--include-variants`` adds them; everything left out is listed. ``--pooled`` adds one
correlation over all models' points, labelled pooled. A correlation with fewer than 3 points or a
constant side is undefined, never 0.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from logic_consistency.common import RESULTS_PATTERN, files_or_folders, read_text
from logic_consistency.metrics import UndefinedMetricError
from logic_consistency.metrics.correlation import correlation, spread
from logic_consistency.outputs import atomic_write_json, check_outputs
from logic_consistency.tasks.pairwise.report_plots import plot_paths

__all__ = [
    "Correlation",
    "collect_points",
    "correlate",
    "correlation_report",
    "read_results",
    "select_points",
    "write_correlation",
]

_TASK = re.compile(r"^logic_consistency_(?P<dataset>[a-z]+?)(?:_(?P<variant>para\d+|cot_sc|cot|generate|pairs))?$")
#: The paper's Figure 5 metric; the others are correlated with H the same way as the suite's additions.
FIGURE5_METRIC = "s_comm"
CONSISTENCY = ("s_comm", "s_neg", "position_bias", "p_first_mean")
SPREAD_METRICS = ("s_tran_3", "s_tran_5", "s_comm", "s_neg", "human_agreement", "position_bias", "p_first_mean")
#: Task variants that score the template-1 prompt another way: points only on request.
OTHER_VARIANTS = ("cot", "generate", "cot_sc")


def read_results(paths: Sequence[str | os.PathLike[str]]) -> list[tuple[str, Path, dict[str, Any]]]:
    """``(model label, path, results JSON)`` for every results file named or found in a folder.

    The model label is lm-eval's ``model_name``, else ``config.model_args``, else the file's folder,
    plus the chat template's and system instruction's hash when the run used them (a model run with
    and without its chat template is two models here); several files of one model share the label
    (their tasks are merged by :func:`select_points`).
    """
    files = files_or_folders(paths, RESULTS_PATTERN)
    out: list[tuple[str, Path, dict[str, Any]]] = []
    for path in files:
        try:
            data = json.loads(read_text(path))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not valid JSON ({error.msg})") from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise ValueError(f"{path}: not an lm-eval results file (no 'results' object)")
        config = data.get("config") or {}
        label = str(data.get("model_name") or config.get("model_args") or path.parent.name)
        for key, name in (("chat_template_sha", "chat template"), ("system_instruction_sha", "system instruction")):
            if data.get(key):
                label += f" [{name} {str(data[key])[:8]}]"
        out.append((label, path, data))
    return out


def _groups(data: dict[str, Any]) -> set[str]:
    """Names in ``results`` that are groups: listed as groups, or without a task config."""
    names = set(data.get("groups") or {}) | set(data.get("group_subtasks") or {})
    configs = data.get("configs")
    if isinstance(configs, dict) and configs:
        names |= set(data["results"]) - set(configs)
    return names


@dataclass(frozen=True)
class Point:
    """One pairwise task of one results file: a point of the studies (see :func:`collect_points`)."""

    model: str
    file: str
    date: float | None
    task: str
    dataset: str
    #: "" for the plain task, else ``paraNN``, ``cot``, ``cot_sc``, ``generate``.
    variant: str
    #: 1 for the plain task and every other variant, NN for ``paraNN``.
    template: int
    metrics: dict[str, float]

    @property
    def is_template(self) -> bool:
        """A log-likelihood template of Figure 5: the plain task or a paraphrase."""
        return self.variant == "" or self.variant.startswith("para")

    def has(self, *metrics: str) -> bool:
        return all(metric in self.metrics for metric in metrics)


@dataclass(frozen=True)
class LeftOut:
    """A point the studies do not use, and why."""

    model: str
    task: str
    file: str
    reason: str

    @classmethod
    def of(cls, point: Point, reason: str) -> LeftOut:
        return cls(point.model, point.task, point.file, reason)


def collect_points(runs: list[tuple[str, Path, dict[str, Any]]]) -> list[Point]:
    """One :class:`Point` per (results file, pairwise task); groups are never points."""
    return [point for label, path, data in runs for point in _file_points(label, path, data)]


def _file_points(label: str, path: Path, data: dict[str, Any]) -> list[Point]:
    """The points of one results file: its pairwise tasks (with ``s_comm`` or ``self_agreement``), no group."""
    groups = _groups(data)
    date = data.get("date")
    points = []
    for task, values in data["results"].items():
        match = _TASK.match(task)
        if not match or not isinstance(values, dict) or task in groups:
            continue
        metrics = _numeric_metrics(values)
        if "s_comm" not in metrics and "self_agreement" not in metrics:
            continue  # not a pairwise task (e.g. the PairS task)
        variant = match["variant"] or ""
        points.append(
            Point(
                model=label,
                file=str(path),
                date=date if isinstance(date, (int, float)) else None,
                task=task,
                dataset=match["dataset"],
                variant=variant,
                template=_template_number(variant),
                metrics=metrics,
            )
        )
    return points


def _numeric_metrics(values: dict[str, Any]) -> dict[str, float]:
    """A task's numeric ``<metric>,none`` values (no stderr, no boolean), by metric name."""
    return {
        key.split(",")[0]: float(value)
        for key, value in values.items()
        if key.endswith(",none")
        and "_stderr" not in key
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
    }


def _template_number(variant: str) -> int:
    """NN for ``paraNN``, 1 for the plain task and every other variant."""
    return int(variant[4:]) if variant.startswith("para") else 1


def select_points(points: list[Point]) -> tuple[list[Point], list[LeftOut]]:
    """``(kept, left_out)``: each model's tasks once (see the module docstring).

    A task run for one model in several files is kept from the newest (lm-eval's ``date``; files
    without one count as older than dated ones, in the order given); the plain task is left out when
    ``para01`` (the same prompt) ran for the same model and dataset.
    """
    left_out: list[LeftOut] = []
    newest: dict[tuple[str, str, str], Point] = {}
    ordered = sorted(enumerate(points), key=lambda ip: (ip[1].date is not None, ip[1].date or 0.0, ip[0]))
    for _, point in ordered:
        key = (point.model, point.dataset, point.task)
        if key in newest:
            left_out.append(LeftOut.of(newest[key], f"superseded by the newer run in {point.file}"))
        newest[key] = point
    kept = []
    for point in newest.values():
        if point.variant == "" and (point.model, point.dataset, f"{point.task}_para01") in newest:
            left_out.append(LeftOut.of(point, "same prompt as para01, counted once (para01 kept)"))
            continue
        kept.append(point)
    return sorted(kept, key=lambda p: (p.model, p.dataset, p.variant != "", p.task)), left_out


def _safe_correlation(xs: list[float], ys: list[float]) -> dict[str, Any]:
    try:
        return correlation(xs, ys)
    except UndefinedMetricError as error:
        return {"undefined": str(error), "n": len(xs)}


#: A model's points on one dataset, keyed by (model, dataset).
Series = dict[tuple[str, str], list[Point]]


def _series(kept: list[Point], include_variants: Sequence[str], left_out: list[LeftOut]) -> Series:
    """Each model's Figure 5 points per dataset; other variants not asked for go to ``left_out``."""
    series: Series = defaultdict(list)
    for point in kept:
        if point.is_template or point.variant in include_variants:
            series[(point.model, point.dataset)].append(point)
        elif point.variant in OTHER_VARIANTS:
            reason = (
                f"{point.variant} scoring kept apart from the Figure 5 templates (--include-variants {point.variant})"
            )
            left_out.append(LeftOut.of(point, reason))
    return dict(sorted(series.items()))


def _spread_section(series: Series) -> dict[str, Any]:
    """Per model and dataset with a paraphrase run: each metric's spread over the templates."""
    section: dict[str, Any] = {}
    for (model, dataset), group in series.items():
        templates = [p for p in group if p.is_template]
        if not any(p.variant.startswith("para") for p in templates):
            continue  # no paraphrase run: no spread to report
        section[f"{model} / {dataset}"] = _template_spreads(templates)
    return section


def _template_spreads(templates: list[Point]) -> dict[str, Any]:
    """Each metric of :data:`SPREAD_METRICS` that some template has: its spread over those templates."""
    entry: dict[str, Any] = {}
    for metric in SPREAD_METRICS:
        values = [p.metrics[metric] for p in templates if p.has(metric)]
        if values:
            # one template has no spread: its std is undefined, null in the JSON (never NaN)
            entry[metric] = {
                k: None if isinstance(v, float) and math.isnan(v) else v for k, v in spread(values).items()
            }
    return entry


def _correlation_with_h(chosen: list[Point], metric: str) -> dict[str, Any]:
    """``metric`` against human agreement H over ``chosen`` (each has both)."""
    return _safe_correlation([p.metrics[metric] for p in chosen], [p.metrics["human_agreement"] for p in chosen])


def _vs_human_agreement(series: Series, metric: str) -> dict[str, Any]:
    """Per dataset and model: ``metric`` against H across that model's points (Figure 5)."""
    per_dataset: dict[str, Any] = {}
    for (model, dataset), group in series.items():
        chosen = [p for p in group if p.has(metric, "human_agreement")]
        if chosen:
            per_dataset.setdefault(dataset, {})[model] = {
                **_correlation_with_h(chosen, metric),
                "points": [(p.task, p.metrics[metric], p.metrics["human_agreement"]) for p in chosen],
            }
    return per_dataset


def _vs_human_agreement_pooled(series: Series, metric: str) -> dict[str, Any]:
    """Per dataset and over all: ``metric`` against H over every model's points at once."""
    datasets = sorted({dataset for _, dataset in series})
    entry: dict[str, Any] = {}
    for dataset in (*datasets, "all"):
        chosen = [
            p
            for (_, d), group in series.items()
            for p in group
            if dataset in (d, "all") and p.has(metric, "human_agreement")
        ]
        if chosen:
            entry[dataset] = {
                "pooled": "pooled over every model's points (not the paper's per-model Figure 5)",
                **_correlation_with_h(chosen, metric),
                "points": [(p.model, p.task, p.metrics[metric], p.metrics["human_agreement"]) for p in chosen],
            }
    return entry


def _stran_vs_self_agreement(kept: list[Point], key: str) -> dict[str, Any]:
    """Per dataset, one point per model: s_tran(K) of its template-1 (else CoT) task vs its self-agreement."""
    entry: dict[str, Any] = {}
    models = sorted({p.model for p in kept})
    for dataset in sorted({p.dataset for p in kept}):
        xs, ys, names = [], [], []
        for model in models:
            pair = _stran_and_self_agreement(kept, model, dataset, key)
            if pair is not None:
                xs.append(pair[0])
                ys.append(pair[1])
                names.append(model)
        if xs:
            entry[dataset] = {**_safe_correlation(xs, ys), "points": list(zip(names, xs, ys, strict=True))}
    return entry


def _stran_and_self_agreement(kept: list[Point], model: str, dataset: str, key: str) -> tuple[float, float] | None:
    """One model's Figure 4 point on one dataset: s_tran(K) of its template-1 task (else ``para01``, else CoT)
    and the self-agreement of its ``cot_sc`` task; ``None`` if either is missing."""
    mine = {p.variant: p for p in kept if p.model == model and p.dataset == dataset}
    source = mine.get("") or mine.get("para01") or mine.get("cot")
    sampled = mine.get("cot_sc")
    if source and sampled and source.has(key) and sampled.has("self_agreement"):
        return source.metrics[key], sampled.metrics["self_agreement"]
    return None


def correlation_report(
    points: list[Point], *, include_variants: Sequence[str] = (), pooled: bool = False
) -> dict[str, Any]:
    """Per-model Figure 5 correlations, spread over templates, Figure 4; ``pooled`` adds the pooled view."""
    unknown = sorted(set(include_variants) - set(OTHER_VARIANTS))
    if unknown:
        raise ValueError(f"include_variants: unknown variant(s) {unknown}; choose from {list(OTHER_VARIANTS)}")
    kept, left_out = select_points(points)
    series = _series(kept, include_variants, left_out)
    stran_keys = sorted({m for p in kept for m in p.metrics if m.startswith("s_tran_")})
    metrics = (*stran_keys, *CONSISTENCY)
    report: dict[str, Any] = {
        "options": {"include_variants": sorted(include_variants), "pooled": pooled},
        "figure5_metric": FIGURE5_METRIC,
        "spread": _spread_section(series),
        "vs_human_agreement": _non_empty({metric: _vs_human_agreement(series, metric) for metric in metrics}),
        "s_tran_vs_self_agreement": _non_empty({key: _stran_vs_self_agreement(kept, key) for key in stran_keys}),
        "left_out": [asdict(item) for item in left_out],
    }
    if pooled:
        report["vs_human_agreement_pooled"] = _non_empty(
            {metric: _vs_human_agreement_pooled(series, metric) for metric in metrics}
        )
    return report


def _non_empty(sections: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: section for name, section in sections.items() if section}


def _fmt_corr(entry: dict[str, Any]) -> str:
    if "undefined" in entry:
        return f"undefined (n = {entry['n']}: {entry['undefined']})"
    return f"Pearson {entry['pearson']:+.3f} (p {entry['pearson_p']:.3g}), Spearman {entry['spearman']:+.3f} (p {entry['spearman_p']:.3g}), n = {entry['n']}"


def _print_spread(report: dict[str, Any]) -> None:
    if report["spread"]:
        print("Spread over paraphrased templates (min / max / mean / std, n templates)")
    for name, entry in report["spread"].items():
        print(f"  {name}")
        for metric, s in entry.items():
            std = "-" if s["std"] is None else format(s["std"], ".4f")
            print(f"    {metric:16} {s['min']:.4f} / {s['max']:.4f} / {s['mean']:.4f} / {std}  (n = {s['n']})")


def _print_vs_human_agreement(report: dict[str, Any]) -> None:
    title = (
        f"vs human agreement H, per model across its templates (Figure 5 is {report['figure5_metric']}; "
        "the other metrics are the suite's additions)"
    )
    print(title if report["vs_human_agreement"] else f"{title}: no points")
    for metric, per_dataset in report["vs_human_agreement"].items():
        for dataset, per_model in per_dataset.items():
            for model, corr in per_model.items():
                print(f"  {metric:14} {dataset:10} {model}: {_fmt_corr(corr)}")
    if "vs_human_agreement_pooled" in report:
        print("vs human agreement H, POOLED over models and templates (not the paper's per-model Figure 5)")
        for metric, entry in report["vs_human_agreement_pooled"].items():
            for dataset, corr in entry.items():
                print(f"  {metric:14} {dataset:10} pooled: {_fmt_corr(corr)}")


def _print_stran_vs_self_agreement(report: dict[str, Any]) -> None:
    if not report["s_tran_vs_self_agreement"]:
        print("s_tran vs self-agreement (Figure 4): no points")
        return
    print("s_tran vs self-agreement (Figure 4), one point per model")
    for metric, entry in report["s_tran_vs_self_agreement"].items():
        for dataset, corr in entry.items():
            print(f"  {metric:14} {dataset:10} {_fmt_corr(corr)}")


def print_report(report: dict[str, Any]) -> None:
    """Human-readable tables of :func:`correlation_report`."""
    _print_spread(report)
    _print_vs_human_agreement(report)
    _print_stran_vs_self_agreement(report)
    if report["left_out"]:
        reasons: dict[str, int] = defaultdict(int)
        for item in report["left_out"]:
            reasons[item["reason"].split(" (")[0].split(" by ")[0]] += 1
        print("Left out (listed in the JSON): " + "; ".join(f"{n} {reason}" for reason, n in sorted(reasons.items())))


@dataclass(frozen=True)
class Correlation:
    """What ``correlate`` computed: the results files read (never written over) and the report."""

    files: list[Path]
    report: dict[str, Any]


def correlate(
    results: Sequence[str | os.PathLike[str]], *, include_variants: Sequence[str] = (), pooled: bool = False
) -> Correlation:
    """:func:`correlation_report` of the results files named or found in folders (``correlate``)."""
    files = files_or_folders(results, RESULTS_PATTERN)  # walked once: read, then kept from --out
    points = collect_points(read_results(files))
    if not points:
        raise ValueError("no pairwise-task results in the given files")
    return Correlation(files, correlation_report(points, include_variants=include_variants, pooled=pooled))


def write_correlation(correlation: Correlation, out: str | os.PathLike[str]) -> Path:
    """Write ``out/correlation_report.json``, once every output (the plots too) is checked; returns its path.

    The plots follow with :func:`~logic_consistency.tasks.pairwise.report_plots.write_plots`.
    """
    folder = Path(out)
    target = folder / "correlation_report.json"
    plots = plot_paths(correlation.report, folder)
    check_outputs([(target, "json"), *((plot, "png") for plot in plots)], correlation.files, argument="--out")
    atomic_write_json(target, correlation.report, indent=2)
    return target
