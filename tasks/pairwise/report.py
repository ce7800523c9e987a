"""``logic-consistency correlate RESULTS...``: the paper's model-level studies from results files.

Given lm-eval results JSON files (several models, or one run of the paraphrase tasks), prints and,
with ``--out DIR``, writes (JSON + PNG scatter plots):

* **Paraphrase spread** (Liu et al., section 3.2): for every run and dataset that ran the
  ``*_paraNN`` tasks, each metric's min, max, mean and sample std over the templates;
* **Consistency vs human agreement** (Figure 5): Pearson and Spearman (with n) of each of s_tran(K),
  s_comm, s_neg, position_bias and p_first_mean against H, over all points (one point = one run x one pairwise
  task, e.g. a model under one template), per dataset and pooled;
* **Transitivity vs self-agreement** (Figure 4): per dataset, one point per run: s_tran(K) of the
  run's plain task (log-likelihood; else its CoT task) against ``self_agreement`` of its ``*_cot_sc``
  task.

A correlation with fewer than 3 points, or a constant side, is printed as undefined, never as 0.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logic_consistency.common import (
    RESULTS_PATTERN, atomic_write, atomic_write_json, check_outputs, files_or_folders, read_text,
)
from logic_consistency.metrics import UndefinedMetricError
from logic_consistency.metrics.correlation import correlation, spread

__all__ = ["add_cli", "collect_points", "correlation_report", "read_results"]

_TASK = re.compile(r"^logic_consistency_(?P<dataset>[a-z]+?)(?:_(?P<variant>para\d+|cot_sc|cot|generate|pairs))?$")
CONSISTENCY = ("s_comm", "s_neg", "position_bias", "p_first_mean")
SPREAD_METRICS = ("s_tran_3", "s_tran_5", "s_comm", "s_neg", "human_agreement", "position_bias", "p_first_mean")


def read_results(paths: Sequence[str | os.PathLike[str]]) -> list[tuple[str, dict[str, Any]]]:
    """``(label, results JSON)`` for every results file named or found (``results_*.json``) in a folder."""
    files = files_or_folders(paths, RESULTS_PATTERN)
    out: list[tuple[str, dict[str, Any]]] = []
    labels: dict[str, int] = defaultdict(int)
    for path in files:
        try:
            data = json.loads(read_text(path))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not valid JSON ({error.msg})") from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise ValueError(f"{path}: not an lm-eval results file (no 'results' object)")
        config = data.get("config") or {}
        label = str(data.get("model_name") or config.get("model_args") or path.parent.name)
        labels[label] += 1
        if labels[label] > 1:
            label = f"{label} #{labels[label]}"
        out.append((label, data))
    return out


def collect_points(runs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One point per (run, pairwise task): run label, dataset, variant and the task's metrics."""
    points = []
    for label, data in runs:
        for task, values in data["results"].items():
            match = _TASK.match(task)
            if not match or not isinstance(values, dict):
                continue
            metrics = {
                key.split(",")[0]: float(value)
                for key, value in values.items()
                if key.endswith(",none") and "_stderr" not in key and isinstance(value, (int, float))
            }
            if "s_comm" not in metrics and "self_agreement" not in metrics:
                continue  # not a pairwise task (e.g. the PairS task) or a group
            points.append({"run": label, "task": task, "dataset": match["dataset"], "variant": match["variant"] or "",
                           "metrics": metrics})
    return points


def _safe_correlation(xs: list[float], ys: list[float]) -> dict[str, Any]:
    try:
        return correlation(xs, ys)
    except UndefinedMetricError as error:
        return {"undefined": str(error), "n": len(xs)}


def correlation_report(points: list[dict[str, Any]]) -> dict[str, Any]:
    """Spread over templates, consistency-vs-H and s_tran-vs-self-agreement correlations."""
    report: dict[str, Any] = {"spread": {}, "vs_human_agreement": {}, "s_tran_vs_self_agreement": {}}
    by_run_dataset: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for point in points:
        if point["variant"].startswith("para"):
            by_run_dataset[(point["run"], point["dataset"])].append(point)
    for (run, dataset), group in sorted(by_run_dataset.items()):
        entry: dict[str, Any] = {}
        for metric in SPREAD_METRICS:
            values = [p["metrics"][metric] for p in group if metric in p["metrics"]]
            if values:
                # one template has no spread: its std is undefined, null in the JSON (never NaN)
                entry[metric] = {k: None if isinstance(v, float) and math.isnan(v) else v
                                 for k, v in spread(values).items()}
        report["spread"][f"{run} / {dataset}"] = entry

    datasets = sorted({p["dataset"] for p in points})
    scored = [p for p in points if "human_agreement" in p["metrics"] and p["variant"] != "cot_sc"]
    stran_keys = sorted({m for p in points for m in p["metrics"] if m.startswith("s_tran_")})
    for metric in (*stran_keys, *CONSISTENCY):
        entry = {}
        for dataset in (*datasets, "all"):
            chosen = [p for p in scored if metric in p["metrics"] and dataset in (p["dataset"], "all")]
            if chosen:
                entry[dataset] = {
                    **_safe_correlation([p["metrics"][metric] for p in chosen], [p["metrics"]["human_agreement"] for p in chosen]),
                    "points": [(p["run"], p["task"], p["metrics"][metric], p["metrics"]["human_agreement"]) for p in chosen],
                }
        if entry:
            report["vs_human_agreement"][metric] = entry

    for key in stran_keys:
        entry = {}
        for dataset in datasets:
            xs, ys, names = [], [], []
            for run in sorted({p["run"] for p in points}):
                mine = {p["variant"]: p for p in points if p["run"] == run and p["dataset"] == dataset}
                source = mine.get("") or mine.get("cot")
                sampled = mine.get("cot_sc")
                if source and sampled and key in source["metrics"] and "self_agreement" in sampled["metrics"]:
                    xs.append(source["metrics"][key])
                    ys.append(sampled["metrics"]["self_agreement"])
                    names.append(run)
            if xs:
                entry[dataset] = {**_safe_correlation(xs, ys), "points": list(zip(names, xs, ys, strict=True))}
        if entry:
            report["s_tran_vs_self_agreement"][key] = entry
    return report


def _fmt_corr(entry: dict[str, Any]) -> str:
    if "undefined" in entry:
        return f"undefined (n = {entry['n']}: {entry['undefined']})"
    return f"Pearson {entry['pearson']:+.3f} (p {entry['pearson_p']:.3g}), Spearman {entry['spearman']:+.3f} (p {entry['spearman_p']:.3g}), n = {entry['n']}"


def print_report(report: dict[str, Any]) -> None:
    """Human-readable tables of :func:`correlation_report`."""
    if report["spread"]:
        print("Spread over paraphrased templates (min / max / mean / std, n templates)")
        for name, entry in report["spread"].items():
            print(f"  {name}")
            for metric, s in entry.items():
                print(f"    {metric:16} {s['min']:.4f} / {s['max']:.4f} / {s['mean']:.4f} / {'-' if s['std'] is None else format(s['std'], '.4f')}  (n = {s['n']})")
    for title, section in (("vs human agreement H (Figure 5)", "vs_human_agreement"),
                           ("s_tran vs self-agreement (Figure 4)", "s_tran_vs_self_agreement")):
        if not report[section]:
            print(f"{title}: no points")
            continue
        print(title)
        for metric, entry in report[section].items():
            for dataset, corr in entry.items():
                print(f"  {metric:14} {dataset:10} {_fmt_corr(corr)}")


def _plots(report: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for section, ylabel, xcol, ycol in (("vs_human_agreement", "H", 2, 3), ("s_tran_vs_self_agreement", "self-agreement", 1, 2)):
        for metric, entry in report[section].items():
            panels = [d for d in entry if d != "all"] or list(entry)
            fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.5), squeeze=False)
            for ax, dataset in zip(axes[0], panels, strict=True):
                pts = entry[dataset]["points"]
                ax.scatter([p[xcol] for p in pts], [p[ycol] for p in pts])
                corr = entry[dataset]
                title = dataset if "undefined" in corr else f"{dataset}: r={corr['pearson']:.2f}, ρ={corr['spearman']:.2f}, n={corr['n']}"
                ax.set_title(title, fontsize=9)
                ax.set_xlabel(metric)
                ax.set_ylabel(ylabel)
            fig.tight_layout()
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=100)
            plt.close(fig)
            path = out / f"{section}_{metric}.png"
            atomic_write(path, [buffer.getvalue()])
            written.append(path)
    return written


def _run(args: argparse.Namespace) -> int:
    files = files_or_folders(args.results, RESULTS_PATTERN)  # walked once: read, then kept from --out
    runs = read_results(files)
    points = collect_points(runs)
    if not points:
        raise ValueError("no pairwise-task results in the given files")
    report = correlation_report(points)
    print_report(report)
    if args.out:
        out = Path(args.out)
        target = out / "correlation_report.json"
        plots = [out / f"{section}_{metric}.png" for section in ("vs_human_agreement", "s_tran_vs_self_agreement")
                 for metric in report[section]]
        check_outputs([(target, "json"), *((plot, "png") for plot in plots)], files, argument="--out")
        atomic_write_json(target, report, indent=2)
        print(f"wrote {target}")
        for path in _plots(report, out):
            print(f"wrote {path}")
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``correlate`` (``logic-consistency correlate RESULTS... [--out DIR]``)."""
    parser = subparsers.add_parser(
        "correlate", help="correlations of consistency with H and self-agreement, spread over paraphrases",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("results", nargs="+", help="lm-eval results_*.json files or folders holding them")
    parser.add_argument("--out", help="folder for correlation_report.json and PNG scatter plots")
    parser.set_defaults(run=_run)
    return parser
