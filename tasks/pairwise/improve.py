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

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.training.devices import evaluation_dtype
from logic_consistency.harness_ext.training.driver import (
    PlannedUnit,
    Stages,
    StudyBase,
    StudyPlan,
    StudyRecipe,
    run_study,
)
from logic_consistency.harness_ext.training.prompts import format_examples
from logic_consistency.harness_ext.training.recipes import TrainSettings
from logic_consistency.harness_ext.training.study import Study
from logic_consistency.harness_ext.training.study_eval import LmEvalRun, run_lm_eval
from logic_consistency.harness_ext.training.study_executor import RanOn, StudyExecutor, StudyUnit, run_locally
from logic_consistency.harness_ext.training.study_identity import row_identity
from logic_consistency.harness_ext.training.study_report import metric_summary
from logic_consistency.harness_ext.training.trainer import Example, TrainingError, TrainJob, train_adapter
from logic_consistency.harness_ext.training.transfer import evaluate_transfer
from logic_consistency.tasks.improve_splits import check_disjoint, load_split
from logic_consistency.tasks.transfer import transfer_families

from .improve_data import (
    FeedbackData,
    check_contexts_disjoint,
    check_prompt_shows_context,
    load_external,
    load_test_split,
    write_training_data,
)
from .improve_options import RepairStudyOptions
from .improve_report import FAMILY, PAIRS_METRICS, columns, pairs_task, write_report
from .improve_rows import BASE_ROWS, ESTIMATORS, WIN_LOSS, RowSpec, downsample, row_specs
from .preferences import PreferenceSet, from_loader
from .repair import flip_labels, repair

__all__ = ["RECIPE", "ROWS", "RepairStudyOptions", "columns", "run_repair_study"]

#: Table 3's rows: (row folder, label); ``--method`` and ``--downsample-to`` derive the others (:mod:`.improve_rows`).
ROWS = BASE_ROWS


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


def answer_letters(examples: Sequence[Example]) -> dict[str, int]:
    """How many training examples answer each letter (A / B): a set whose answers follow the position
    would teach the model the position (the loaders show pairs in a balanced seeded order)."""
    return dict(sorted(Counter(example.answer.strip() for example in examples).items()))


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


def _identity(options: RepairStudyOptions, base: StudyBase, feedback: FeedbackData | None) -> dict[str, Any]:
    """What makes the study's rows comparable (``study.json``)."""
    identity = base.identity(options, {"flip": options.flip}, base.settings.as_dict())
    # each only where set, so that study folders written before these options still resume
    if feedback is not None:
        identity["train_data"] = feedback.source
    if tuple(options.methods) != (WIN_LOSS,):
        identity["methods"] = list(options.methods)
    for key in ("downsample_to", "pairs", "transfer"):
        if getattr(options, key):
            identity[key] = getattr(options, key)
    return identity


@dataclass(frozen=True)
class _TrainingData:
    """The study's training documents and preferences: human, perturbed (``flipped`` labels) and REPAIR-ed
    per method; each trained row's examples are drawn from them (:meth:`examples`)."""

    task: Any
    docs: list[dict[str, Any]]
    perturbed: PreferenceSet
    flipped: Any
    repaired: Mapping[str, PreferenceSet]
    source: Mapping[str, Any]

    def examples(self, spec: RowSpec, options: RepairStudyOptions, base: StudyBase) -> tuple[list[Example], Any]:
        """A trained row's examples, and how they were down-sampled (``None``: they were not)."""
        prefs = self.perturbed if spec.method is None else self.repaired[spec.method]
        pairs = _pairs(self.task, self.docs, prefs, negated=spec.kind == "repaired_neg")
        sampled = None
        if options.downsample_to is not None and spec.method is not None:
            size = len(_pairs(self.task, self.docs, self.perturbed, negated=False))
            pairs, sampled = downsample(pairs, size, seed=base.settings.seed)
        return format_examples(base.path, pairs, chat_template=options.chat_template), sampled


def _plan(options: RepairStudyOptions, base: StudyBase) -> StudyPlan:
    """One ``improve repair`` run's plan: the training source read, ``--pairs``'s task checked, the identity
    made (data, once); its rows' data and units built once the study is open (:func:`_stages`)."""
    specs = row_specs(options.methods, options.rows, sampled=options.downsample_to is not None)
    feedback = load_external(options.train_source, options.limit)
    if options.pairs:
        check_pairs_task(options.tasks)
    identity = _identity(options, base, feedback)
    return StudyPlan(identity, partial(_stages, options, base, specs, feedback), trains=options.trains)


def _stages(
    options: RepairStudyOptions, base: StudyBase, specs: Sequence[RowSpec], feedback: FeedbackData | None, study: Study
) -> Stages:
    """One stage: a unit per row (its data built here, each row checked against it by the driver); then,
    from the rows sent back, Table 3 (and its layout's other tables), its README and, with
    ``--transfer``, the transfer table."""
    task, docs, human, source = _training_set(options, feedback)
    perturbed, flipped = flip_labels(human, options.flip, seed=base.settings.seed)
    repaired = {m: repair(perturbed, method=ESTIMATORS[m]) for m in options.methods}
    data = _TrainingData(task, docs, perturbed, flipped, repaired, source)
    rows = yield [_planned(study, options, base, spec, data) for spec in specs]
    write_report(study, rows)


def _planned(
    study: Study, options: RepairStudyOptions, base: StudyBase, spec: RowSpec, data: _TrainingData
) -> PlannedUnit:
    """A row's unit, and the row to check with the identity it would be made with (plain data)."""
    record: dict[str, Any] = {"flipped_labels": None, "method": spec.method}
    examples: list[Example] | None = None
    job: TrainJob | None = None
    if spec.kind != "zero_shot":
        examples, sampled = data.examples(spec, options, base)
        record["flipped_labels"] = data.flipped
        record["answer_letters"] = answer_letters(examples)
        if sampled is not None:
            record["downsampled"] = sampled
        job = TrainJob(base.path, examples, study.row_dir(spec.name) / "adapter", base.settings, "repair",
                       spec.label, "train", options.min_examples, options.merge_weights,
                       data_source=dict(data.source))  # fmt: skip
    expected = row_identity(study.identity, spec.name, label=spec.label, recipe="repair", examples=examples)
    work = partial(_run_row, study, options, base.path, base.settings, spec, expected, job, record)
    return PlannedUnit(StudyUnit(spec.name, (spec.name,), work), kept=[(spec.name, expected)])


def _evaluate(run: LmEvalRun, options: RepairStudyOptions, spec: RowSpec, pairs_out: Path) -> dict[str, Any]:
    """The row's metrics on the test split, with PairS's where asked."""
    metrics = metric_summary(
        run_lm_eval(run, label=f"{spec.label} (test split)"), [k for _, k in columns(options.metadata)]
    )
    if options.pairs:
        pairs_run = replace(run, tasks=pairs_task(options.tasks), out=pairs_out)
        metrics.update(metric_summary(run_lm_eval(pairs_run, label=f"{spec.label} (PairS)"), PAIRS_METRICS))
    return metrics


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
    """One row's unit, wherever its executor runs it: train its adapter (none for zero-shot; its examples
    written to ``train.jsonl`` beside it), evaluate it on the test split (with PairS, and on the other
    families, where asked), write its ``row.json`` (with its ``identity``) last."""
    if job is not None:
        write_training_data(study.row_dir(spec.name) / "train.jsonl", job.examples)
    manifest = train_adapter(job) if job is not None else None
    adapter = job.out if job is not None else None
    test = {**options.metadata, "instance_split": "test"}
    dtype = evaluation_dtype(settings, manifest)  # the training dtype
    run = LmEvalRun.of_study(options, base, options.tasks, test, study.row_dir(spec.name) / "test_eval",
                             adapter=adapter, dtype=dtype, identity=identity)  # fmt: skip
    metrics = _evaluate(run, options, spec, study.row_dir(spec.name) / "pairs_eval")
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
        own = {"task": options.tasks, "metrics": {key: metrics.get(key) for _, key in columns(options.metadata)}}
        done["transfer"] = {FAMILY: own, **evaluate_transfer(run, others, study.row_dir(spec.name) / "transfer",
                                                             label=spec.label)}  # fmt: skip
    study.finish(spec.name, done)
    return [done]


#: ``improve repair`` as it declares itself to the study driver (:func:`logic_consistency.tasks.improve_recipes.recipes`
#: finds it): its plan reads the training source, checks ``--pairs``'s task and makes the identity.
RECIPE = StudyRecipe("repair", "the pairwise paper's REPAIR study (Liu et al.)", RepairStudyOptions, _plan)


def run_repair_study(options: RepairStudyOptions, executor: StudyExecutor = run_locally) -> list[dict[str, Any]]:
    """Run (or resume) the study (:func:`~...driver.run_study`): Table 3 and the README; the rows in order.

    Raises:
        StudyFolderError: ``out`` holds another study.
        TrainingError: Train and test instances overlap, too few examples, a NaN loss, out of memory, ...
        StudyUnitError: A row failed (naming the row and its error).
    """
    return run_study(RECIPE, options, executor)
