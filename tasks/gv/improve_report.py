"""The GV study's outputs, laid out as Li et al.: Table 3 (GV-consistency of each task and the average
over tasks, one row per method), Table 5 beside it (generator and validator accuracy of each task),
Figure 5 (one panel per task: correctness as App. I defines it against GV-consistency, 95% bootstrap
intervals on both axes, SelfTrain one point) and a README, all in the study's folder.

Rows: the base (the paper's "Alpaca-30B" row), consistency FT rounds 1..R, SelfTrain (one model
fine-tuned on the base's unfiltered pairs, as the paper's baseline) and, with ``--selftrain-rounds``
above 1, SelfTrain rounds 2.. labelled as the suite's variant (iterated SelfTrain; no paper row).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from logic_consistency.harness_ext.training.recipe_api import Study
from logic_consistency.outputs import atomic_write, atomic_write_json

from .improve_chains import ARITHMETIC_TASKS, POOLED, short
from .improve_figure import pareto_png
from .improve_tables import CORRECTNESS, CORRECTNESS_PAPER
from .validator_sets import APP_H_METRIC, GPT4_JUDGED, NO_SET, WRONG_ANSWER, task_kind

__all__ = ["ITERATED", "NOT_MEASURABLE", "correctness_table", "row_label", "setting_of", "write_report"]

#: What a column the suite cannot measure says in each cell (its header says why, and what the paper used).
NOT_MEASURABLE = "not measurable here"
#: How the suite's iterated SelfTrain rows are named wherever they appear.
ITERATED = "suite's variant: iterated SelfTrain"
#: The GV paper's fine-tuning setting (Li et al. App. G: arithmetic, chain-of-thought validator).
PAPER_TASK = "logic_consistency_gv_arithmetic_cot"


def row_label(row: Mapping[str, Any]) -> str:
    """The method a row stands for, as Li et al. name it (the suite's variants say so)."""
    round_ = row["round"]
    if round_ == 0:
        label = "base"
    elif row["row"].startswith("gv_"):
        label = f"consistency FT round {round_}"
    elif round_ == 1:
        label = "SelfTrain"
    else:
        label = f"SelfTrain round {round_} ({ITERATED})"
    return f"{label} (not trained)" if row.get("not_trained") else label


def setting_of(task: str, metadata: Mapping[str, Any]) -> str:
    """Whether ``task`` under ``metadata`` is the paper's fine-tuning setting or one of the suite's variants."""
    shots = metadata.get("generator_shots")
    if shots:
        return f"suite's variant: {shots} generator demonstrations (generator_shots) before Table 13's prompt"
    if task == PAPER_TASK:
        return "the paper's fine-tuning setting (Li et al. App. G: CoT validator, + - * under 4 digits)"
    if task == "logic_consistency_gv_arithmetic":
        return "suite's variant: Table 13's prompts without App. G's chain-of-thought validator"
    return f"one of Li et al.'s tasks ({3 if task in ARITHMETIC_TASKS else 6} epochs, App. F)"


def _cell(entry: Mapping[str, Any] | str | None) -> str:
    if isinstance(entry, str):  # a column the suite cannot measure says so in every cell
        return entry
    if not entry or entry.get("mean") is None:
        return "undefined"
    interval = entry.get("ci95")
    span = f" [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]" if interval else " [no interval]"
    return f"{100 * entry['mean']:.1f}{span} (n={entry['n']})"


def _tasks(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted({task for r in rows for task in (r["metrics"].get("per_task") or {})})


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, Any]]) -> str:
    """One line per row; ``columns``: (header, function of the row's metrics giving one summary)."""
    lines = ["| method | " + " | ".join(h for h, _ in columns) + " |", "|---|" + "---|" * len(columns)]
    for r in rows:
        lines.append(f"| {row_label(r)} | " + " | ".join(_cell(get(r["metrics"])) for _, get in columns) + " |")
    return "\n".join(lines) + "\n"


def _short(task: str) -> str:
    return task.removeprefix("logic_consistency_gv_")


def tables(rows: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """Table 3 (GV-consistency per task and the average) and Table 5 (accuracies per task), Markdown."""
    tasks = _tasks(rows)

    def per(task: str, metric: str) -> Any:
        return lambda m: ((m.get("per_task") or {}).get(task) or {}).get(metric)

    consistency = [(_short(t), per(t, "gv_consistency")) for t in tasks]
    consistency.append(("Average", lambda m: (m.get("average") or {}).get("gv_consistency")))
    accuracy = [column for t in tasks for column in _accuracy_columns(t, rows, per)]
    return _table(rows, consistency), _table(rows, accuracy)


def _not_measurable(why: str) -> tuple[str, Any]:
    return f"{NOT_MEASURABLE} ({why})", lambda _metrics: NOT_MEASURABLE


def _accuracy_columns(task: str, rows: Sequence[Mapping[str, Any]], per: Any) -> list[tuple[str, Any]]:
    """Table 5's two columns of ``task``: each a measure as the paper states it, or said not measurable here."""
    kind, name = task_kind(task), _short(task)
    if kind in GPT4_JUDGED:
        generator = _not_measurable("the paper scores these generations with GPT-4, §5.3; no judge here")
        columns = [(f"{name} generator: {generator[0]}", generator[1])]
    else:
        columns = [(f"{name} generator", per(task, "generator_accuracy"))]
    if any((per(task, APP_H_METRIC)(r["metrics"]) or {}).get("n") for r in rows):
        choice = f"; {WRONG_ANSWER[kind]}" if kind in WRONG_ANSWER else ""
        columns.append((f"{name} validator (App. H set{choice})", per(task, APP_H_METRIC)))
    elif kind in NO_SET:
        validator = _not_measurable(f"App. H's set: {NO_SET[kind]}")
        columns.append((f"{name} validator: {validator[0]}", validator[1]))
    else:
        columns.append((f"{name} validator (suite's measure: its own answers; no App. H set in this study)",
                        per(task, "validator_accuracy")))  # fmt: skip
    return columns


def correctness_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Figure 5's correctness of each task both ways (:mod:`.improve_tables`): the suite's per-document
    mean (plotted) and App. I's mean of Table 5's two columns; not measurable where Table 5's columns are not."""
    columns: list[tuple[str, Any]] = []
    for task in _tasks(rows):
        if task_kind(task) in GPT4_JUDGED:
            columns.append(_not_measurable(f"{_short(task)}: Table 5's generator column is GPT-4's"))
            continue
        for key, how in ((CORRECTNESS, "per-document mean, plotted"), (CORRECTNESS_PAPER, "App. I: mean of the two")):
            columns.append((f"{_short(task)} ({how})", _metric(task, key)))
    return _table(rows, columns)


def _metric(task: str, metric: str) -> Any:
    return lambda m: ((m.get("per_task") or {}).get(task) or {}).get(metric)


def _layout(identity: Mapping[str, Any]) -> str:
    """How the study's adapters were trained: one task, each task on its own (the paper's), or pooled."""
    tasks = str(identity["tasks"]).split(",")
    if len(tasks) == 1:
        return f"One consistency FT chain and one SelfTrain model on `{tasks[0]}`."
    if identity.get("pooled"):
        return f"Every task's pairs trained together, one adapter per round ({POOLED})."
    epochs = {short(t): h.get("epochs") for t, h in (identity.get("hyperparameters") or {}).items()}
    said = ", ".join(f"{task} {value:g}" for task, value in epochs.items())
    return (
        "Each task fine-tuned on its own, as Li et al.: one consistency FT chain and one SelfTrain model per "
        f"task, each with App. F's epochs ({said}); a method's row takes each task from that task's adapter."
    )


def _name(row: Mapping[str, Any]) -> str:
    return row_label(row) + (f" [{short(row['task'])}]" if row.get("task") else "")


def write_report(
    study: Study,
    rows: Sequence[Mapping[str, Any]],
    *,
    identity: Mapping[str, Any],
    table_rows: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """Write ``table.md`` (Table 3), ``accuracy.md`` (Table 5), ``table.json``, ``pareto.png`` (Figure 5, its
    points in ``figure5.json``) and ``README.md``. ``table_rows``: one row per method (each task's cells
    from its own adapter, :func:`.improve.method_rows`); by default ``rows``."""
    trained_rows, rows = rows, list(table_rows if table_rows is not None else rows)
    table3, table5 = tables(rows)
    atomic_write(study.out / "table.md", [table3.encode()])
    atomic_write(study.out / "accuracy.md", [table5.encode()])
    payload = {"study": dict(identity), "rows": list(trained_rows), "table_rows": rows}
    atomic_write_json(study.out / "table.json", payload, indent=2)
    figure = pareto_png(study.out / "pareto.png", rows, _tasks(rows), row_label, _unmeasurable(rows))
    atomic_write_json(study.out / "figure5.json", figure, indent=2)
    metadata = identity.get("metadata") or {}
    settings = [f"- `{t}`: {setting_of(t, metadata)}" for t in str(identity["tasks"]).split(",")]
    lines = [
        "# GV consistency fine-tuning study",
        "",
        f"Base `{identity['base']}`, {identity['rounds']} round(s) of consistency fine-tuning, "
        f"{identity.get('selftrain_rounds', 1)} of SelfTrain, `--limit {identity['limit']}` documents per split. "
        "Training data from `instance_split: train`, every row evaluated on `instance_split: test`. "
        "Cells: mean in percent [95% bootstrap interval] (documents).",
        "",
        *settings,
        "",
        _layout(identity),
        "",
        "Table 3 (Li et al.): GV-consistency of each task and the average over tasks (the mean of the task "
        "scores; its interval resamples each task's documents on its own).",
        "",
        table3,
        "Table 5 (Li et al.): generator and validator accuracy of each task; the validator on App. H's fixed set "
        "(a right and a verified wrong answer per test document, `tasks/gv/validator_sets.py`) where the suite "
        "builds one, else on the model's own answers (the suite's measure, its column says why); a column the "
        f"suite cannot measure says {NOT_MEASURABLE!r}, why, and what the paper used.",
        "",
        table5,
        *[f"- {r['not_trained']}" for r in trained_rows if r.get("not_trained")],
        "",
        f"![Figure 5](pareto.png): {CORRECTNESS} (x), the suite's choice, is the mean of generator and validator "
        "accuracy per document, against GV-consistency (y), with 95% intervals on both. Li et al. App. I takes "
        "'the mean of the generator/validator performance', read as the mean of Table 5's two columns; both:",
        "",
        correctness_table(rows),
        "| row | training examples | steps | train loss | tokens/s | wall s | device |",
        "|---|---|---|---|---|---|---|",
        *_training_lines(trained_rows),
    ]
    atomic_write(study.out / "README.md", ["\n".join(lines).encode() + b"\n"])


def _unmeasurable(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Figure 5's tasks whose correctness the suite cannot measure (task -> why): those the paper judged
    with GPT-4 (its generator column is GPT-4's)."""
    return {t: f"correctness {NOT_MEASURABLE}: the paper's generator column is GPT-4's"
            for t in _tasks(rows) if task_kind(t) in GPT4_JUDGED}  # fmt: skip


def _training_lines(trained_rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The README's training table rows: one per trained row (examples, steps, loss, tokens/s or
    ``undefined``, wall seconds, device)."""
    lines: list[str] = []
    for r in (r for r in trained_rows if r.get("training")):
        t = r["training"]
        rate = "undefined" if t["train_tokens_per_s"] is None else t["train_tokens_per_s"]
        lines.append(
            f"| {_name(r)} | {t['data_examples']} | {t['steps']} | {t['train_loss']:.4f} | {rate} | "
            f"{t['wall_time_s']} | {t['device']} |"
        )
    return lines
