"""``logic-consistency improve repair``: the pairwise paper's fine-tuning experiments (Liu et al. §4,
Table 3; Appendices L-N, Tables 5-7: :mod:`.improve_rows`) as one study.

The human preferences of the task's ``instance_split: train`` documents (every pair with distinct human
scores, :func:`.preferences.from_loader`) are perturbed (``flip``: the paper flips 10% of the labels),
then REPAIR-ed (:func:`.repair.repair`, win-loss rate). Rows: zero-shot (the base), perturbed, REPAIR-ed,
and REPAIR-ed + Neg. (the negated question with the other letter too), each a LoRA adapter on the base
trained with the recipe's defaults, each evaluated on ``instance_split: test`` documents through
``lm_eval --model hf --model_args pretrained=BASE,peft=ADAPTER``. Training prompts are the task's own
(its ``normal`` and ``negated`` templates, rendered by the task class), formatted as the evaluation
formats them. ``--train-data summarize_feedback`` takes the training preferences from Summarize from
Feedback instead, the paper's data (:mod:`.improve_data`), and ``msmarco`` from MS MARCO with GPT-3.5
rankings (Table 5's data); evaluation stays on the task's test split. ``--method`` (Table 7), ``--downsample-to``
(Table 6), ``--pairs`` (Table 5's PairS) and ``--transfer`` (the transfer table) add the other layouts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.training.adapter import check_base
from logic_consistency.harness_ext.training.devices import check_devices, evaluation_dtype
from logic_consistency.harness_ext.training.prompts import format_examples
from logic_consistency.harness_ext.training.recipes import TrainSettings, settings_for
from logic_consistency.harness_ext.training.study import (
    LmEvalRun,
    RanOn,
    Study,
    StudyExecutor,
    StudyUnit,
    check_disjoint,
    load_split,
    metric_summary,
    run_lm_eval,
    run_locally,
    table_markdown,
)
from logic_consistency.harness_ext.training.study_identity import base_identity, row_identity
from logic_consistency.harness_ext.training.study_lock import study_lock
from logic_consistency.harness_ext.training.study_options import StudyRecipe
from logic_consistency.harness_ext.training.trainer import Example, TrainingError, TrainJob, train_adapter
from logic_consistency.harness_ext.training.transfer import evaluate_transfer, write_transfer_table
from logic_consistency.outputs import atomic_write, atomic_write_json
from logic_consistency.tasks.transfer import transfer_families

from .improve_data import (
    MSMARCO,
    FeedbackData,
    check_contexts_disjoint,
    check_prompt_shows_context,
    load_external,
    load_test_split,
    parse_train_data,
    write_training_data,
)
from .improve_options import RepairStudyOptions
from .improve_rows import BASE_ROWS, ESTIMATORS, WIN_LOSS, RowSpec, downsample, layout_names, row_specs
from .preferences import PreferenceSet, from_loader
from .repair import flip_labels, repair

__all__ = ["ROWS", "columns", "RepairStudyOptions", "run_repair_study"]

#: The family this study improves (its column of the transfer table is the rows' own evaluation).
FAMILY = "pairwise"
#: Where Liu et al. evaluate Table 5: the 200 test queries of their MS MARCO sample (App. B).
MSMARCO_TASK = "logic_consistency_msmarco"
#: Table 5's PairS columns (:mod:`.pairs_task`).
PAIRS_METRICS = ("pairs_spearman", "pairs_spearman_calibrated")
#: Table 3's rows: (row folder, label); ``--method`` and ``--downsample-to`` derive the others (:mod:`.improve_rows`).
ROWS = BASE_ROWS


def columns(metadata: Mapping[str, Any], *, pairs: bool = False) -> tuple[tuple[str, str], ...]:
    """Table 3's columns: H, s_tran(K) for the largest K of the run's ``ks`` (the paper's 5), s_comm, s_neg;
    with ``pairs`` Table 5's PairS and PairS calibrated (mean Spearman, :mod:`.pairs_task`)."""
    k = max(metadata.get("ks") or (5,))
    base = (("H", "human_agreement"), (f"s_tran({k})", f"s_tran_{k}"), ("s_comm", "s_comm"), ("s_neg", "s_neg"))
    return base + ((("PairS", "pairs_spearman"), ("PairS calibrated", "pairs_spearman_calibrated")) if pairs else ())


def pairs_task(task: str) -> str:
    """The PairS variant of a pairwise task (``logic_consistency_caters`` -> ``logic_consistency_caters_pairs``)."""
    return f"{task}_pairs"


def check_pairs_task(task: str) -> None:
    """Refuse ``--pairs`` for a task without a PairS variant (before any training).

    Raises:
        TrainingError: Naming the task and the PairS tasks there are.
    """
    from lm_eval.tasks import TaskManager

    known = TaskManager().all_tasks
    if pairs_task(task) not in known:
        found = sorted(name for name in known if name.startswith("logic_consistency_") and name.endswith("_pairs"))
        raise TrainingError(f"--pairs: {task} has no PairS variant ({pairs_task(task)}); PairS tasks: {found}")


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


def _check_pairwise(task: Any, name: str) -> None:
    """Refuse a task of another family (its documents are no pairwise comparisons), before any training.

    Raises:
        TrainingError: Naming ``--tasks`` and the task.
    """
    from .task import PairwiseConsistencyTask

    if not isinstance(task, PairwiseConsistencyTask):
        raise TrainingError(
            f"--tasks {name}: not a pairwise task ({type(task).__name__}); improve repair trains and evaluates a "
            "pairwise task (logic_consistency_caters, _summeval, _noveleval, ...); the GV tasks are improve gv's"
        )


def _training_set(
    options: RepairStudyOptions, feedback: FeedbackData | None
) -> tuple[Any, list[dict[str, Any]], PreferenceSet, dict[str, Any]]:
    """The task (its prompt renderer), the training documents, their human preferences and their source,
    once the training texts are checked against the test documents."""
    if feedback is None:
        task, docs = _train_task(options.tasks, options.metadata, options.limit)
        _check_pairwise(task, options.tasks)
        check_disjoint([options.tasks], options.metadata, options.limit)
        return task, docs, from_loader(docs), {"name": options.tasks, "split": "train", "documents": len(docs)}
    task, test_docs = load_test_split(options.tasks, dict(options.metadata))
    _check_pairwise(task, options.tasks)
    check_prompt_shows_context(task, options.tasks, feedback.source["name"])
    check_contexts_disjoint(feedback.docs, options.tasks, test_docs, feedback.source["name"])
    return task, feedback.docs, feedback.prefs, feedback.source


def _identity(
    options: RepairStudyOptions, base: Path, hyperparameters: dict[str, Any], feedback: FeedbackData | None
) -> dict[str, Any]:
    """What makes the study's rows comparable (``study.json``)."""
    identity: dict[str, Any] = {
        "study": "repair",
        "base": options.base_label or str(base),
        "tasks": options.tasks,
        "limit": options.limit,
        "flip": options.flip,
        "metadata": dict(options.metadata),
        "hyperparameters": hyperparameters,
        "chat_template": options.chat_template,  # the identity of everything that changes a row's numbers
        "eval_backend": options.eval_backend,  # lc-hf and hf agree within a tolerance, not bit for bit
        "base_path": str(base.resolve()),
        **base_identity(base, chat_template=options.chat_template),
    }
    # each only where set, so that study folders written before these options still resume
    if feedback is not None:
        identity["train_data"] = feedback.source
    if tuple(options.methods) != (WIN_LOSS,):
        identity["methods"] = list(options.methods)
    for key in ("downsample_to", "pairs", "transfer"):
        if getattr(options, key):
            identity[key] = getattr(options, key)
    return identity


def run_repair_study(options: RepairStudyOptions, executor: StudyExecutor = run_locally) -> list[dict[str, Any]]:
    """Run (or resume) the study under its folder's lock (:func:`~...study_lock.study_lock`); write
    Table 3 and the README; return the rows in order.

    The training data is built here; each unfinished row is one unit of ``executor`` (default: here,
    in order); the table and README are written once every unit has ended.

    Raises:
        StudyFolderError: ``out`` holds another study.
        TrainingError: Train and test instances overlap, too few examples, a NaN loss, out of memory, ...
        StudyUnitError: A row failed (naming the row and its error).
    """
    with study_lock(options.out):
        return _run_repair_study(options, executor)


def _run_repair_study(options: RepairStudyOptions, executor: StudyExecutor) -> list[dict[str, Any]]:
    base = check_base(options.base)
    specs = row_specs(options.methods, options.rows, sampled=options.downsample_to is not None)
    settings = settings_for("repair", options.train_overrides)
    if executor is run_locally and any(spec.kind != "zero_shot" for spec in specs):
        check_devices(settings)  # QLoRA without a GPU, several GPUs: refused before the zero-shot evaluation
    train_data = parse_train_data(options.train_data)
    feedback = load_external(train_data, options.limit)
    if options.pairs:
        check_pairs_task(options.tasks)
    identity = _identity(options, base, settings.as_dict(), feedback)
    study = Study(options.out, identity, options.rebuild_mismatched)
    study.open()
    task, docs, human, source = _training_set(options, feedback)
    perturbed, flipped = flip_labels(human, options.flip, seed=settings.seed)
    perturbed_size = len(_pairs(task, docs, perturbed, negated=False))
    repaired = {m: repair(perturbed, method=ESTIMATORS[m]) for m in options.methods}
    # the training data is built here, in the driver; each row is checked against it (study_identity), each
    # row not kept is then one unit (train + evaluate)
    units = []
    for spec in specs:
        record: dict[str, Any] = {
            "flipped_labels": flipped if spec.kind != "zero_shot" else None,
            "method": spec.method,
        }
        examples = None
        if spec.kind != "zero_shot":
            prefs = perturbed if spec.method is None else repaired[spec.method]
            pairs = _pairs(task, docs, prefs, negated=spec.kind == "repaired_neg")
            if options.downsample_to is not None and spec.method is not None:
                pairs, record["downsampled"] = downsample(pairs, perturbed_size, seed=settings.seed)
            examples = format_examples(base, pairs, chat_template=options.chat_template)
        expected = row_identity(identity, spec.name, label=spec.label, recipe="repair", examples=examples)
        if study.kept(spec.name, expected) is not None:
            merge = study.merge_unit(spec.name) if options.merge_weights else None
            units += [merge] if merge is not None else []  # a kept row's merged weights: made in a unit
            continue
        job = _job(study, options, base, settings, spec, examples, source) if examples is not None else None
        work = partial(_run_row, study, options, base, settings, spec, expected, job, record)
        units.append(StudyUnit(spec.name, (spec.name,), work))
    ran = {unit.name: result[0] for unit, result in zip(units, executor(units), strict=True)}
    rows = [ran.get(spec.name) or study.finished(spec.name) for spec in specs]
    _write_report(study, [row for row in rows if row is not None])
    return [row for row in rows if row is not None]


def _job(
    study: Study,
    options: RepairStudyOptions,
    base: Path,
    settings: Any,
    spec: RowSpec,
    examples: list[Example],
    source: Mapping[str, Any],
) -> TrainJob:
    """A trained row's job: its examples (written to ``train.jsonl``) and adapter folder."""
    write_training_data(study.row_dir(spec.name) / "train.jsonl", examples)
    return TrainJob(base, examples, study.row_dir(spec.name) / "adapter", settings, "repair", spec.label, "train",
                    options.min_examples, options.merge_weights, data_source=dict(source))  # fmt: skip


def _run_row(
    study: Study,
    options: RepairStudyOptions,
    base: Path,
    settings: TrainSettings,
    spec: RowSpec,
    identity: dict[str, Any],
    job: TrainJob | None,
    record: Mapping[str, Any],
    ran_on: RanOn,
) -> list[dict[str, Any]]:
    """One row's unit, wherever its executor runs it: train its adapter (none for zero-shot), evaluate it
    on the test split (with PairS, and on the other families, where asked), write its ``row.json``
    (with its ``identity``) last."""
    manifest = train_adapter(job) if job is not None else None
    adapter = job.out if job is not None else None
    run = LmEvalRun(
        base=base,
        tasks=options.tasks,
        metadata={**options.metadata, "instance_split": "test"},
        limit=options.limit,
        out=study.row_dir(spec.name) / "test_eval",
        adapter=adapter,
        apply_chat_template=options.chat_template,
        dtype=evaluation_dtype(settings, manifest),  # the training dtype
        row_identity=identity,
        backend=options.eval_backend,
    )
    samples = run_lm_eval(run, label=f"{spec.label} (test split)")
    keys = [key for _, key in columns(options.metadata)]
    metrics = metric_summary(samples, keys)
    if options.pairs:
        pairs_run = replace(run, tasks=pairs_task(options.tasks), out=study.row_dir(spec.name) / "pairs_eval")
        metrics.update(metric_summary(run_lm_eval(pairs_run, label=f"{spec.label} (PairS)"), PAIRS_METRICS))
    done = {
        "row": spec.name,
        "label": spec.label,
        "adapter": str(adapter) if adapter else None,
        "metrics": metrics,
        "training": manifest,
        **record,
        "ran_on": dict(ran_on),
        "identity": identity,
    }
    if options.transfer:  # the study's own family is its test evaluation above; the others run here
        others = [f for f in transfer_families(FAMILY, options.tasks, options.metadata) if f.family != FAMILY]
        own = {"task": options.tasks, "metrics": {key: metrics.get(key) for key in keys}}
        done["transfer"] = {FAMILY: own, **evaluate_transfer(run, others, study.row_dir(spec.name) / "transfer",
                                                             label=spec.label)}  # fmt: skip
    study.finish(spec.name, done)
    return [done]


def _origin(source: Mapping[str, Any] | None) -> str:
    """Where the training preferences came from, in words."""
    if not source:
        return "`instance_split: train`"
    where = f"`{source.get('file') or source.get('hub') or source.get('url')}`"
    if source["name"] == MSMARCO:
        drawn = source.get("sample") or {}
        of = (
            f" of the {drawn['train_queries']} training queries of a seeded {drawn['sampled']}-query sample"
            if drawn
            else ""
        )
        return (f"MS MARCO ({source['queries']} queries{of}, {source['comparisons']} comparisons from the GPT-3.5 "
                f"rankings of {where}, Sun et al. 2023)")  # fmt: skip
    split = ", train split" if source.get("split") else ""
    return f"Summarize from Feedback ({source['posts']} posts, {source['comparisons']} comparisons of {where}{split})"


def _variants(identity: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """What the layout adds to Table 3, and where it is the suite's variant rather than the paper's."""
    notes = []
    if identity.get("methods"):
        notes.append("Table 7: one REPAIR-ed row per rank estimation method (W-L win-loss rate, ELO Elo rating, "
                     "B-T Bradley-Terry; `metrics/ranking.py`).")  # fmt: skip
    sampled = [
        f"{r['label']} {r['downsampled']['from']} -> {r['downsampled']['to']}" for r in rows if r.get("downsampled")
    ]
    if identity.get("downsample_to"):
        notes.append("Table 6: each REPAIR-ed row's training examples down-sampled at random (seeded) to the "
                     f"perturbed row's count: {'; '.join(sampled) or 'no trained row yet'}.")  # fmt: skip
    if identity.get("pairs"):
        where = ("the 200 test queries of the paper's MS MARCO sample, as the paper" if identity["tasks"] == MSMARCO_TASK
                 else "the task's own test split, not the paper's MS MARCO test queries: the suite's variant")  # fmt: skip
        notes.append(f"Table 5: PairS columns from `{pairs_task(identity['tasks'])}` (mean Spearman over "
                     f"`pairs_runs` runs), evaluated on {where}.")  # fmt: skip
    return notes


def _write_report(study: Study, rows: list[dict[str, Any]]) -> None:
    identity = study.identity
    methods = identity.get("methods") or [WIN_LOSS]
    names = layout_names(methods=methods, downsampled=bool(identity.get("downsample_to")),
                         pairs=bool(identity.get("pairs")), train_data=(identity.get("train_data") or {}).get("name", ""))  # fmt: skip
    table = table_markdown(
        [(r["label"], r["metrics"]) for r in rows], columns(identity["metadata"], pairs=bool(identity.get("pairs")))
    )
    atomic_write(study.out / "table.md", [table.encode()])
    atomic_write_json(study.out / "table.json", {"study": dict(identity), "rows": rows, "layout": names}, indent=2)
    lines = [
        f"# REPAIR fine-tuning study (Liu et al. {', '.join(names)} layout)",
        "",
        f"Base `{identity['base']}`, task `{identity['tasks']}`, `--limit {identity['limit']}` documents per split, "
        f"{identity['flip']:.0%} of the training labels flipped in the perturbed data. Training data from "
        f"{_origin(identity.get('train_data'))}, every row evaluated on `instance_split: test`. Cells: mean in "
        "percent [95% bootstrap interval] (instances).",
        "",
        *[f"- {note}" for note in _variants(identity, rows)],
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
    if identity.get("transfer"):
        families = transfer_families(FAMILY, identity["tasks"], identity["metadata"])
        lines += ["", write_transfer_table(study.out, [(r["label"], r.get("transfer") or {}) for r in rows], families)]
    atomic_write(study.out / "README.md", ["\n".join(lines).encode() + b"\n"])


#: ``improve repair`` (:func:`logic_consistency.tasks.improve_recipes.recipes` finds it).
RECIPE = StudyRecipe("repair", "the pairwise paper's REPAIR study (Liu et al.)", RepairStudyOptions, run_repair_study)
