"""PNG scatter plots of ``logic-consistency correlate``'s report (``tasks/pairwise/report.py``).

* ``vs_human_agreement_<metric>.png``: one panel per dataset, one colour per model (its templates),
  each model's Pearson r, Spearman ρ and n in the legend (Figure 5's layout);
* ``vs_human_agreement_pooled_<metric>.png`` (with ``--pooled``): one panel per dataset, all points
  in one correlation, titled as pooled;
* ``s_tran_vs_self_agreement_<metric>.png``: one point per model (Figure 4).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from logic_consistency.outputs import atomic_write

__all__ = ["plot_paths", "write_plots"]


def _corr_label(corr: dict[str, Any]) -> str:
    if "undefined" in corr:
        return f"undefined, n={corr['n']}"
    return f"r={corr['pearson']:.2f}, ρ={corr['spearman']:.2f}, n={corr['n']}"


def _figures(report: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """``(file stem, metric, entry)`` of every plot the report makes."""
    out = [(f"vs_human_agreement_{metric}", metric, entry) for metric, entry in report["vs_human_agreement"].items()]
    out += [
        (f"vs_human_agreement_pooled_{metric}", metric, entry)
        for metric, entry in report.get("vs_human_agreement_pooled", {}).items()
    ]
    out += [
        (f"s_tran_vs_self_agreement_{metric}", metric, entry)
        for metric, entry in report["s_tran_vs_self_agreement"].items()
    ]
    return out


def plot_paths(report: dict[str, Any], out: Path) -> list[Path]:
    """The PNG files :func:`write_plots` writes (to check them before anything is written)."""
    return [out / f"{stem}.png" for stem, _, _ in _figures(report)]


def write_plots(report: dict[str, Any], out: Path) -> list[Path]:
    """Write every plot of the report into ``out``; returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for stem, metric, entry in _figures(report):
        panels = [d for d in entry if d != "all"] or list(entry)
        fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 4), squeeze=False)
        for ax, dataset in zip(axes[0], panels, strict=True):
            if stem.startswith("vs_human_agreement_pooled_"):
                corr = entry[dataset]
                ax.scatter([p[2] for p in corr["points"]], [p[3] for p in corr["points"]])
                ax.set_title(f"{dataset}, pooled over models: {_corr_label(corr)}", fontsize=8)
                ax.set_ylabel("H")
            elif stem.startswith("vs_human_agreement_"):
                for model, corr in entry[dataset].items():
                    ax.scatter(
                        [p[1] for p in corr["points"]],
                        [p[2] for p in corr["points"]],
                        label=f"{model}: {_corr_label(corr)}",
                    )
                ax.set_title(f"{dataset}, per model across templates", fontsize=9)
                ax.legend(fontsize=6)
                ax.set_ylabel("H")
            else:
                corr = entry[dataset]
                ax.scatter([p[1] for p in corr["points"]], [p[2] for p in corr["points"]])
                ax.set_title(f"{dataset}: {_corr_label(corr)}", fontsize=9)
                ax.set_ylabel("self-agreement")
            ax.set_xlabel(metric)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        plt.close(fig)
        path = out / f"{stem}.png"
        atomic_write(path, [buffer.getvalue()])
        written.append(path)
    return written
