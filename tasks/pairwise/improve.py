"""``logic-consistency improve repair``: the pairwise paper's fine-tuning experiment (Liu et al. §4,
Table 3) as one study.

The human preferences of the task's ``instance_split: train`` documents (every pair with distinct human
scores, :func:`.preferences.from_loader`) are perturbed (``flip``: the paper flips 10% of the labels),
then REPAIR-ed (:func:`.repair.repair`, win-loss rate). Rows: zero-shot (the base), perturbed, REPAIR-ed,
and REPAIR-ed + Neg. (the negated question with the other letter too), each a LoRA adapter on the base
trained with the recipe's defaults, each evaluated on ``instance_split: test`` documents through
``lm_eval --model hf --model_args pretrained=BASE,peft=ADAPTER``. Training prompts are the task's own
(its ``normal`` and ``negated`` templates, rendered by the task class), formatted as the evaluation
formats them. ``--train-data summarize_feedback`` takes the training preferences from Summarize from
Feedback instead, the paper's data (:mod:`.improve_data`); evaluation stays on the task's test split.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.training.adapter import check_base
from logic_consistency.harness_ext.training.devices import evaluation_dtype
from logic_consistency.harness_ext.training.prompts import format_examples
from logic_consistency.harness_ext.training.recipes import settings_for
from logic_consistency.harness_ext.training.study import (
    LmEvalRun,
    RanOn,
    Study,
    StudyExecutor,
    StudyOptions,
    StudyUnit,
    check_disjoint,
    load_split,
    metric_summary,
    run_lm_eval,
    run_locally,
    table_markdown,
)
from logic_consistency.harness_ext.training.study_identity import row_identity
from logic_consistency.harness_ext.training.trainer import TrainingError, TrainJob, train_adapter
from logic_consistency.outputs import atomic_write, atomic_write_json

from .improve_data import (
    FEEDBACK,
    FeedbackData,
    check_contexts_disjoint,
    check_prompt_shows_context,
    load_feedback,
    load_test_split,
    parse_train_data,
    write_training_data,
)
from .preferences import PreferenceSet, from_loader
from .repair import flip_labels, repair

__all__ = ["ROWS", "columns", "RepairStudyOptions", "run_repair_study"]

#: Table 3's rows: (row folder, label).
ROWS = (
    ("zero_shot", "Zero-shot"),
    ("perturbed", "Perturbed"),
    ("repaired", "REPAIR-ed"),
    ("repaired_neg", "REPAIR-ed + Neg."),
)


def columns(metadata: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Table 3's columns: H, s_tran(K) for the largest K of the run's ``ks`` (the paper's 5), s_comm, s_neg."""
    k = max(metadata.get("ks") or (5,))
    return (("H", "human_agreement"), (f"s_tran({k})", f"s_tran_{k}"), ("s_comm", "s_comm"), ("s_neg", "s_neg"))


@dataclass(frozen=True)
class RepairStudyOptions(StudyOptions):
    """The ``improve repair`` settings: the common ones, the labels flipped, the rows to run and the
    training data (``task``, ``summarize_feedback`` or ``summarize_feedback:PATH``, :mod:`.improve_data`)."""

    tasks: str = "logic_consistency_caters"
    flip: float = 0.1
    rows: tuple[str, ...] = tuple(name for name, _ in ROWS)
    train_data: str = "task"


def _train_task(task_name: str, metadata: Mapping[str, Any], limit: int | None) -> tuple[Any, list[dict[str, Any]]]:
    """The task (its prompt renderer) and its first ``limit`` ``instance_split: train`` documents."""
    return load_split(task_name, metadata, "train", limit)


def _pairs(
    task: Any, docs: list[dict[str, Any]], prefs: PreferenceSet, *, negated: bool
) -> list[tuple[str, str, bool]]:
    """(task prompt, answer letter, scored) for every comparison, rendered with the task's templates."""
    by_id = {str(doc["instance_id"]): doc for doc in docs}
    first, second = task.options.choices
    pairs = []
    for key, instance in prefs.items():
        doc = by_id[key]
        index = {str(item): n for n, item in enumerate(doc["item_ids"])}
        for c in instance.comparisons:
            i, j = index[c.first], index[c.second]
            pairs.append((task.render("normal", doc, i, j), first if c.winner == c.first else second, True))
            if negated and "negated" in task.options.templates:
                pairs.append((task.render("negated", doc, i, j), second if c.winner == c.first else first, True))
    return pairs


def _training_set(
    options: RepairStudyOptions, feedback: FeedbackData | None
) -> tuple[Any, list[dict[str, Any]], PreferenceSet, dict[str, Any]]:
    """The task (its prompt renderer), the training documents, their human preferences and their source,
    once the training texts are checked against the test documents."""
    if feedback is None:
        check_disjoint([options.tasks], options.metadata, options.limit)
        task, docs = _train_task(options.tasks, options.metadata, options.limit)
        return task, docs, from_loader(docs), {"name": options.tasks, "split": "train", "documents": len(docs)}
    task, test_docs = load_test_split(options.tasks, dict(options.metadata))
    check_prompt_shows_context(task, options.tasks)
    check_contexts_disjoint(feedback.docs, options.tasks, test_docs)
    return task, feedback.docs, feedback.prefs, feedback.source


def run_repair_study(options: RepairStudyOptions, executor: StudyExecutor = run_locally) -> list[dict[str, Any]]:
    """Run (or resume) the study; write Table 3 and the README; return the rows in order.

    The training data is built here; each unfinished row is one unit of ``executor`` (default: here,
    in order); the table and README are written once every unit has ended.

    Raises:
        StudyFolderError: ``out`` holds another study.
        TrainingError: Train and test instances overlap, too few examples, a NaN loss, out of memory, ...
        StudyUnitError: A row failed (naming the row and its error).
    """
    base = check_base(options.base)
    unknown = sorted(set(options.rows) - {name for name, _ in ROWS})
    if unknown:
        raise TrainingError(f"--rows: unknown row(s) {unknown}; rows: {[name for name, _ in ROWS]}")
    if "," in options.tasks:
        raise TrainingError(f"--tasks: improve repair takes one pairwise task, got {options.tasks!r}")
    settings = settings_for("repair", options.train_args)
    train_data = parse_train_data(options.train_data)
    feedback = load_feedback(train_data.path, options.limit) if train_data.kind == FEEDBACK else None
    identity = {
        "study": "repair",
        "base": options.base_label or str(base),
        "tasks": options.tasks,
        "limit": options.limit,
        "flip": options.flip,
        "metadata": dict(options.metadata),
        "hyperparameters": settings.as_dict(),
        "chat_template": options.chat_template,  # the identity of everything that changes a row's numbers
        "base_path": str(base.resolve()),
    }
    if feedback is not None:  # absent for the task's own data, so earlier study folders still resume
        identity["train_data"] = feedback.source
    study = Study(options.out, identity, options.rebuild_mismatched)
    study.open()
    task, docs, human, source = _training_set(options, feedback)
    perturbed, flipped = flip_labels(human, options.flip, seed=settings.seed)
    repaired = repair(perturbed, method="win_loss")
    data = {"perturbed": (perturbed, False), "repaired": (repaired, False), "repaired_neg": (repaired, True)}
    # the training data is built here, in the driver; each row is checked against it (study_identity), each
    # row not kept is then one unit (train + evaluate)
    units = []
    for name, label in (row for row in ROWS if row[0] in options.rows):
        job, examples = None, None
        if name in data:
            prefs, negated = data[name]
            pairs = _pairs(task, docs, prefs, negated=negated)
            examples = format_examples(base, pairs, chat_template=options.chat_template)
        expected = row_identity(identity, name, label=label, recipe="repair", examples=examples)
        if study.kept(name, expected, merge_weights=options.merge_weights) is not None:
            continue
        if examples is not None:
            write_training_data(study.row_dir(name) / "train.jsonl", examples)
            job = TrainJob(base, examples, study.row_dir(name) / "adapter", settings, "repair", label, "train",
                           options.min_examples, options.merge_weights, data_source=source)  # fmt: skip
        flips = flipped if name != "zero_shot" else None
        work = partial(_run_row, study, options, base, expected, job, flips)
        units.append(StudyUnit(name, (name,), work))
    ran = {unit.name: result[0] for unit, result in zip(units, executor(units), strict=True)}
    rows = [ran.get(name) or study.finished(name) for name, _ in ROWS if name in options.rows]
    _write_report(study, [row for row in rows if row is not None])
    return [row for row in rows if row is not None]


def _run_row(
    study: Study,
    options: RepairStudyOptions,
    base: Path,
    identity: dict[str, Any],
    job: TrainJob | None,
    flipped: Any,
    ran_on: RanOn,
) -> list[dict[str, Any]]:
    """One row's unit, wherever its executor runs it: train its adapter (none for zero-shot), evaluate it
    on the test split, write its ``row.json`` (with its ``identity``) last."""
    name, label = identity["row"], identity["label"]
    manifest = train_adapter(job) if job is not None else None
    adapter = job.out if job is not None else None
    run = LmEvalRun(
        base=base,
        tasks=options.tasks,
        metadata={**options.metadata, "instance_split": "test"},
        limit=options.limit,
        out=study.row_dir(name) / "test_eval",
        adapter=adapter,
        apply_chat_template=options.chat_template,
        dtype=evaluation_dtype(settings_for("repair", options.train_args), manifest),  # the training dtype
    )
    samples = run_lm_eval(run, label=f"{label} (test split)")
    done = {
        "row": name,
        "label": label,
        "adapter": str(adapter) if adapter else None,
        "metrics": metric_summary(samples, [key for _, key in columns(options.metadata)]),
        "training": manifest,
        "flipped_labels": flipped,
        "ran_on": dict(ran_on),
        "identity": identity,
    }
    study.finish(name, done)
    return [done]


def _write_report(study: Study, rows: list[dict[str, Any]]) -> None:
    identity = study.identity
    feedback = identity.get("train_data")
    origin = (
        f"Summarize from Feedback ({feedback['posts']} posts, {feedback['comparisons']} comparisons of "
        f"`{feedback.get('file') or feedback.get('hub')}`{', train split' if feedback.get('split') else ''})"
        if feedback
        else "`instance_split: train`"
    )
    table = table_markdown([(r["label"], r["metrics"]) for r in rows], columns(identity["metadata"]))
    atomic_write(study.out / "table.md", [table.encode()])
    atomic_write_json(study.out / "table.json", {"study": dict(identity), "rows": rows}, indent=2)
    lines = [
        "# REPAIR fine-tuning study (Liu et al. Table 3 layout)",
        "",
        f"Base `{identity['base']}`, task `{identity['tasks']}`, `--limit {identity['limit']}` documents per split, "
        f"{identity['flip']:.0%} of the training labels flipped in the perturbed data. Training data from "
        f"{origin}, every row evaluated on `instance_split: test`. Cells: mean in percent "
        "[95% bootstrap interval] (instances).",
        "",
        table,
        "| row | training examples | steps | train loss | tokens/s | wall s | device |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t = r.get("training")
        if t:
            lines.append(
                f"| {r['label']} | {t['data_examples']} | {t['steps']} | {t['train_loss']:.4f} | "
                f"{'undefined' if t['train_tokens_per_s'] is None else t['train_tokens_per_s']} | {t['wall_time_s']} | {t['device']} |"
            )
    atomic_write(study.out / "README.md", ["\n".join(lines).encode() + b"\n"])
