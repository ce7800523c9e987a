"""Li et al.'s Figure 5: correctness against GV-consistency, one panel per task.

Correctness is "the mean of the generator/validator performance" (App. I), computed per document in
:mod:`.improve_tables` (the suite's choice; the README gives App. I's reading beside it); each point carries its 95% bootstrap interval on both axes. The base and
SelfTrain are one point each, as in the paper; the consistency FT rounds are joined in order (the
paper's frontier); the suite's iterated SelfTrain rounds, where a study has them, are hollow grey
points labelled as the suite's variant.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_consistency.outputs import atomic_write

from .improve_tables import CORRECTNESS

__all__ = ["pareto_png"]

Row = Mapping[str, Any]


def _point(row: Row, task: str) -> tuple[float, float, list[float], list[float]] | None:
    """``(x, y, x error, y error)`` of a row on a task's panel; ``None`` when either axis is undefined."""
    metrics = ((row["metrics"].get("per_task") or {}).get(task)) or {}
    x, y = metrics.get(CORRECTNESS) or {}, metrics.get("gv_consistency") or {}
    if x.get("mean") is None or y.get("mean") is None:
        return None

    def error(entry: Mapping[str, Any]) -> list[float]:
        low, high = entry.get("ci95") or (entry["mean"], entry["mean"])
        return [entry["mean"] - low, high - entry["mean"]]

    return x["mean"], y["mean"], error(x), error(y)


def _sides(errors: Sequence[Sequence[float]]) -> list[list[float]]:
    """Error bars as matplotlib takes them: the lower sides, then the upper sides."""
    return [[error[0] for error in errors], [error[1] for error in errors]]


def _draw(
    axes: Any, rows: Sequence[Row], task: str, label: Callable[[Row], str], style: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Draw ``rows`` as one series; return its points as written to ``figure5.json``."""
    points = [(p, r) for r in rows if (p := _point(r, task)) is not None]
    if not points:
        return []
    xs, ys, x_err, y_err = (list(column) for column in zip(*(p for p, _ in points), strict=True))
    name = style.get("name") or label(points[0][1])
    axes.errorbar(
        xs, ys, xerr=_sides(x_err), yerr=_sides(y_err), capsize=3, label=name,
        **{k: v for k, v in style.items() if k != "name"},
    )  # fmt: skip
    return [
        {"series": name, "row": r["row"], "x": p[0], "y": p[1], "x_ci95": [p[0] - p[2][0], p[0] + p[2][1]],
         "y_ci95": [p[1] - p[3][0], p[1] + p[3][1]]}
        for p, r in points
    ]  # fmt: skip


#: The axes of every panel, as written on the plot and in ``figure5.json``.
X_AXIS = "correctness: mean of generator and validator accuracy (test split)"
Y_AXIS = "GV-consistency (test split)"


#: Figure 5's series in the order they are drawn, each with its style (:func:`_series_of`).
SERIES: Mapping[str, Mapping[str, Any]] = {
    "base": {"fmt": "o", "color": "black"},
    "consistency": {"fmt": "-o", "name": "consistency FT (rounds in order)"},
    "selftrain": {"fmt": "s", "color": "tab:red"},
    "iterated": {"fmt": "s", "mfc": "none", "color": "grey", "name": "SelfTrain rounds 2+ (suite's variant: iterated)"},
}


def _series_of(row: Row) -> str | None:
    """The series a row is a point of (``None``: none, as a round that was not trained)."""
    if row["round"] == 0:
        return "base"
    if row.get("not_trained"):
        return None
    if row["row"].startswith("gv_"):
        return "consistency"
    if row["row"] == "selftrain_round_1":
        return "selftrain"
    return "iterated" if row["row"].startswith("selftrain_") and row["round"] > 1 else None


def _series(rows: Sequence[Row]) -> list[tuple[list[Row], Mapping[str, Any]]]:
    """Figure 5's series, each with its rows and its style."""
    return [([r for r in rows if _series_of(r) == name], style) for name, style in SERIES.items()]


def _panel(
    axes: Any,
    task: str,
    series: Sequence[tuple[list[Row], Mapping[str, Any]]],
    label: Callable[[Row], str],
    empty: str = "no row has both values",
) -> list[dict[str, Any]]:
    """One task's panel: every series, its axes and title, a legend (or ``empty``: why nothing is drawn)."""
    points = [point for rows, style in series for point in _draw(axes, rows, task, label, style)]
    axes.set_xlabel(X_AXIS)
    axes.set_ylabel(Y_AXIS)
    axes.set_title(f"{task.removeprefix('logic_consistency_gv_')} (Li et al. Fig. 5)")
    if points:
        axes.legend(fontsize=7)
    else:
        axes.text(0.5, 0.5, empty, ha="center", wrap=True, transform=axes.transAxes)
    return points


def pareto_png(
    path: Path,
    rows: Sequence[Row],
    tasks: Sequence[str],
    label: Callable[[Row], str],
    unmeasurable: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Write Figure 5 to ``path`` (a panel per task; an empty panel says that nothing was defined, or, for a
    task in ``unmeasurable``, why its correctness is not measurable here).

    Returns:
        What was drawn: the axes and each panel's points with their intervals (``figure5.json``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = list(tasks) or ["(no task)"]
    figure, panels = plt.subplots(1, len(shown), figsize=(6.5 * len(shown), 4.5), squeeze=False)
    drawn: dict[str, Any] = {"x": X_AXIS, "y": Y_AXIS, "panels": {}}
    for axes, task in zip(panels[0], shown, strict=True):
        why = (unmeasurable or {}).get(task)
        drawn["panels"][task] = _panel(axes, task, _series(rows), label, *([why] if why else []))
        if why:
            drawn.setdefault("not_measurable", {})[task] = why
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
    plt.close(figure)
    atomic_write(path, [buffer.getvalue()])
    return drawn
