"""The GV study's outputs: Table 3's layout (rows x GV-consistency and correctness, each with its 95%
bootstrap interval), the Figure 5 Pareto plot (generator correctness against GV-consistency per round,
one line per chain) and a README-style summary, all in the study's folder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from logic_consistency.harness_ext.training.study import Study, table_markdown
from logic_consistency.outputs import atomic_write, atomic_write_json

__all__ = ["COLUMNS", "write_report"]

COLUMNS = (
    ("GV-consistency", "gv_consistency"),
    ("generator correctness", "generator_accuracy"),
    ("validator accuracy", "validator_accuracy"),
)


def _mean(row: Mapping[str, Any], metric: str) -> float | None:
    """A row's mean of ``metric`` (``None``: undefined, or the row was not trained)."""
    mean: float | None = (row["metrics"].get(metric) or {}).get("mean")
    return mean


def _pareto_png(study: Study, rows: Sequence[Mapping[str, Any]]) -> None:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(5.5, 4.5))
    base = [r for r in rows if r["round"] == 0]
    for chain, marker in (("consistency FT", "o"), ("SelfTrain", "s")):
        line = base + [r for r in rows if r["chain"] == chain]
        means = [(_mean(r, "generator_accuracy"), _mean(r, "gv_consistency"), r["round"]) for r in line]
        points = [(x, y, round_) for x, y, round_ in means if x is not None and y is not None]
        if points:
            axes.plot([p[0] for p in points], [p[1] for p in points], marker=marker, label=chain)
            for x, y, round_ in points:
                axes.annotate(str(round_), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    axes.set_xlabel("generator correctness (test split)")
    axes.set_ylabel("GV-consistency (test split)")
    axes.set_title("GV-consistency against correctness per round (Li et al. Fig. 5)")
    if axes.lines:  # no line when every round is undefined or not trained
        axes.legend()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
    plt.close(figure)
    atomic_write(study.out / "pareto.png", [buffer.getvalue()])


def write_report(study: Study, rows: Sequence[Mapping[str, Any]], *, identity: Mapping[str, Any]) -> None:
    """Write ``table.md``, ``table.json``, ``pareto.png`` and ``README.md`` into the study folder."""
    table = table_markdown(
        [(f"{r['row']} (not trained)" if r.get("not_trained") else r["row"], r["metrics"]) for r in rows], COLUMNS
    )
    atomic_write(study.out / "table.md", [table.encode()])
    atomic_write_json(study.out / "table.json", {"study": dict(identity), "rows": list(rows)}, indent=2)
    _pareto_png(study, rows)
    trained = [r for r in rows if r.get("training")]
    lines = [
        "# GV consistency fine-tuning study",
        "",
        f"Base `{identity['base']}`, tasks `{identity['tasks']}`, {identity['rounds']} round(s), "
        f"`--limit {identity['limit']}` documents per split. Training data from `instance_split: train`, "
        "every row evaluated on `instance_split: test`. Cells: mean in percent [95% bootstrap interval] (documents).",
        "",
        table,
        *[f"- {r['not_trained']}" for r in rows if r.get("not_trained")],
        "",
        "![Pareto plot](pareto.png)",
        "",
        "| row | training examples | steps | train loss | tokens/s | wall s | device |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in trained:
        t = r["training"]
        lines.append(
            f"| {r['row']} | {t['data_examples']} | {t['steps']} | {t['train_loss']:.4f} | "
            f"{'undefined' if t['train_tokens_per_s'] is None else t['train_tokens_per_s']} | {t['wall_time_s']} | {t['device']} |"
        )
    atomic_write(study.out / "README.md", ["\n".join(lines).encode() + b"\n"])
