"""PNG scatter plots of ``logic-consistency correlate``'s report (``tasks/pairwise/report.py``).

* ``vs_human_agreement_<metric>.png``: one panel per dataset, one colour per model (its templates),
  each model's Pearson r, Spearman ρ and n in the legend (Figure 5's layout);
* ``vs_human_agreement_pooled_<metric>.png`` (with ``--pooled``): one panel per dataset, all points
  in one correlation, titled as pooled;
* ``s_tran_vs_self_agreement_<metric>.png``: one point per model (Figure 4).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logic_consistency.outputs import atomic_write

__all__ = ["plot_paths", "write_plots"]


def _corr_label(corr: dict[str, Any]) -> str:
    if "undefined" in corr:
        return f"undefined, n={corr['n']}"
    return f"r={corr['pearson']:.2f}, ρ={corr['spearman']:.2f}, n={corr['n']}"


#: Draws one dataset's panel of a figure: ``(axes, dataset, the figure's entry for the dataset)``.
PanelDrawer = Callable[[Any, str, Any], None]


def _draw_per_model(ax: Any, dataset: str, per_model: dict[str, Any]) -> None:
    """Figure 5: one colour per model (its templates), each model's correlation in the legend."""
    for model, corr in per_model.items():
        ax.scatter(
            [p[1] for p in corr["points"]],
            [p[2] for p in corr["points"]],
            label=f"{model}: {_corr_label(corr)}",
        )
    ax.set_title(f"{dataset}, per model across templates", fontsize=9)
    ax.legend(fontsize=6)
    ax.set_ylabel("H")


def _draw_pooled(ax: Any, dataset: str, corr: dict[str, Any]) -> None:
    """Every model's points in one correlation against H, titled as pooled."""
    ax.scatter([p[2] for p in corr["points"]], [p[3] for p in corr["points"]])
    ax.set_title(f"{dataset}, pooled over models: {_corr_label(corr)}", fontsize=8)
    ax.set_ylabel("H")


def _draw_self_agreement(ax: Any, dataset: str, corr: dict[str, Any]) -> None:
    """Figure 4: one point per model against its self-agreement."""
    ax.scatter([p[1] for p in corr["points"]], [p[2] for p in corr["points"]])
    ax.set_title(f"{dataset}: {_corr_label(corr)}", fontsize=9)
    ax.set_ylabel("self-agreement")


def _figures(report: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], PanelDrawer]]:
    """``(file stem, metric, entry, panel drawer)`` of every plot the report makes."""
    kinds: tuple[tuple[str, dict[str, Any], PanelDrawer], ...] = (
        ("vs_human_agreement", report["vs_human_agreement"], _draw_per_model),
        ("vs_human_agreement_pooled", report.get("vs_human_agreement_pooled", {}), _draw_pooled),
        ("s_tran_vs_self_agreement", report["s_tran_vs_self_agreement"], _draw_self_agreement),
    )
    return [
        (f"{prefix}_{metric}", metric, entry, draw)
        for prefix, section, draw in kinds
        for metric, entry in section.items()
    ]


def plot_paths(report: dict[str, Any], out: Path) -> list[Path]:
    """The PNG files :func:`write_plots` writes (to check them before anything is written)."""
    return [out / f"{stem}.png" for stem, _, _, _ in _figures(report)]


def write_plots(report: dict[str, Any], out: Path) -> list[Path]:
    """Write every plot of the report into ``out``; returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for stem, metric, entry, draw in _figures(report):
        panels = [d for d in entry if d != "all"] or list(entry)
        fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 4), squeeze=False)
        for ax, dataset in zip(axes[0], panels, strict=True):
            draw(ax, dataset, entry[dataset])
            ax.set_xlabel(metric)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        plt.close(fig)
        path = out / f"{stem}.png"
        atomic_write(path, [buffer.getvalue()])
        written.append(path)
    return written
