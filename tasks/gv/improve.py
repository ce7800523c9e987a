"""``logic-consistency improve gv``: the GV paper's consistency fine-tuning (Li et al. §4-6, Tables 3
and 5, Figure 5) as one study.

The default task is the paper's fine-tuning setting, arithmetic with Appendix G's chain-of-thought
validator (``logic_consistency_gv_arithmetic_cot``); Table 13's plain arithmetic and ``generator_shots``
are the suite's variants, named so in the report. Round 0 is the base. For round k the model of round
k-1 generates and validates its own answers on ``instance_split: train`` documents (``lm_eval
--log_samples``); the GV-consistent pairs (D_filtered, :func:`.export.pairs_of_sample`) fine-tune the
*base* with LoRA. SelfTrain (§5 "Baseline") fine-tunes the base once on every complete pair of the
base's answers; ``selftrain_rounds`` above 1 iterates it (the suite's variant, labelled so). Each task
has its own chains with App. F's epochs (:mod:`.improve_chains`; ``pooled``: the suite's variant).
Every row is evaluated on ``instance_split: test`` documents through ``lm_eval --model hf --model_args
pretrained=BASE,peft=ADAPTER``; the prompts trained on are the logged task prompts, formatted as the
evaluation formats them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from logic_consistency.common import find_files, read_samples, task_of_samples_file
from logic_consistency.harness_ext.training.adapter import check_base
from logic_consistency.harness_ext.training.devices import check_devices, evaluation_dtype
from logic_consistency.harness_ext.training.prompts import format_examples
from logic_consistency.harness_ext.training.study import (
    LmEvalRun,
    RanOn,
    Study,
    StudyExecutor,
    StudyOptions,
    StudyUnit,
    check_disjoint,
    run_lm_eval,
    run_locally,
)
from logic_consistency.harness_ext.training.study_flags import option
from logic_consistency.harness_ext.training.study_identity import base_identity, row_identity
from logic_consistency.harness_ext.training.study_lock import study_lock
from logic_consistency.harness_ext.training.study_options import StudyRecipe
from logic_consistency.harness_ext.training.trainer import TrainJob, train_adapter
from logic_consistency.harness_ext.training.transfer import evaluate_transfer, write_transfer_table
from logic_consistency.tasks.transfer import transfer_families

from .export import pairs_of_sample
from .improve_chains import CHAINS, Chain, chain_plan, short
from .improve_report import PAPER_TASK, row_label, write_report
from .improve_tables import GV_METRICS, task_metrics
from .validator_sets import with_fixed_sets

__all__ = ["GV_METRICS", "GVStudyOptions", "run_gv_study"]


@dataclass(frozen=True)
class GVStudyOptions(StudyOptions):
    """The ``improve gv`` settings (each field's ``help`` is its meaning): the common ones and the rounds
    of each chain, checked once, here."""

    option_folders: ClassVar[tuple[str, ...]] = ("gv", "data")
    recipe: ClassVar[str] = "gv"

    tasks: str = option(
        PAPER_TASK, help="the task(s), comma-separated (the default is the paper's fine-tuning setting)"
    )
    rounds: int = option(3, help="rounds of consistency fine-tuning (the paper's Table 3: 3)", declared="rounds")
    selftrain_rounds: int = option(
        1,
        help="rounds of SelfTrain (1: the paper's baseline; more: the suite's iterated variant)",
        declared="selftrain_rounds",
    )
    pooled: bool = option(
        False,
        help="several --tasks: one adapter per round trained on every task's pairs together (the suite's "
        "variant; by default each task has its own chains with Li et al. App. F's epochs: arithmetic 3, others 6)",
        switch=True,
    )

    def rounds_of(self, chain: str) -> int:
        """How many rounds ``chain`` (``gv`` or ``selftrain``) runs."""
        return self.rounds if chain == "gv" else self.selftrain_rounds


def _of_task(samples: Sequence[Path], task: str | None) -> list[Path]:
    """The samples files of ``task`` (all of them for ``None``)."""
    return [path for path in samples if task is None or task_of_samples_file(path) == task]


class _GVStudy:
    def __init__(self, options: GVStudyOptions) -> None:
        self.options = options
        self.base = check_base(options.base)
        self.tasks = options.tasks.split(",")
        self.chains = chain_plan(self.tasks, options.train_overrides, pooled=options.pooled)
        self.settings = self.chains[0].settings  # the dtype every row is scored in (the chains differ in epochs only)
        per_task = any(chain.task for chain in self.chains)
        hyperparameters = (
            {chain.task: chain.settings.as_dict() for chain in self.chains if chain.kind == "gv"}
            if per_task
            else self.settings.as_dict()
        )
        self.study = Study(
            options.out,
            {
                "study": "gv",
                "base": options.base_label or str(options.base),
                "tasks": options.tasks,
                "limit": options.limit,
                "rounds": options.rounds,
                "selftrain_rounds": options.selftrain_rounds,
                "metadata": dict(options.metadata),
                "hyperparameters": hyperparameters,
                "chat_template": options.chat_template,  # the identity of everything that changes a row's numbers
                "eval_backend": options.eval_backend,  # lc-hf and hf agree within a tolerance, not bit for bit
                "base_path": str(self.base.resolve()),
                **base_identity(self.base, chat_template=options.chat_template),
                **({"transfer": True} if options.transfer else {}),  # absent otherwise: earlier folders resume
                **({"pooled": True} if options.pooled and len(self.tasks) > 1 else {}),
            },
            options.rebuild_mismatched,
        )
        #: Each row's identity once its unit has built it (what its evaluations are stamped with).
        self.identities: dict[str, Mapping[str, Any]] = {}

    def identity_of(self, chain: Chain) -> dict[str, Any]:
        """The study's identity with the chain's own hyperparameters (what its adapters' manifests hold)."""
        return {**self.study.identity, "hyperparameters": chain.settings.as_dict()}

    def evaluate(self, row: str, split: str, adapter: Path | None, tasks: str | None = None) -> list[Path]:
        """The row on ``split``: its test evaluation, or (train) the data of the round after it; kept
        only for the same row identity (:func:`~...study.evaluation_stamp`)."""
        tasks = tasks or self.options.tasks
        identity = self.identities.get(row) or (self.study.finished(row) or {}).get("identity") or {}
        run = LmEvalRun(
            base=self.base,
            tasks=with_fixed_sets(tasks) if split == "test" else tasks,  # Table 5's validator: App. H's sets
            metadata={**self.options.metadata, "instance_split": split},
            limit=self.options.limit,
            out=self.study.row_dir(row) / f"{split}_eval",
            adapter=adapter,
            apply_chat_template=self.options.chat_template,
            dtype=evaluation_dtype(self.settings, None),  # every row and round in the dtype the study trains in
            row_identity=identity,
            backend=self.options.eval_backend,
        )
        return run_lm_eval(run, label=f"{row} ({split} split)")

    def training_pairs(self, samples: Sequence[Path], *, consistent_only: bool) -> list[tuple[str, str, bool]]:
        pairs = []
        for path in samples:
            for number, sample in read_samples(path):
                records = pairs_of_sample(sample, path.stem, where=f"{path} line {number}")
                if records and (records[0]["consistent"] or not consistent_only):
                    pairs += [(r["prompt"], r["response"], r["role"] == "validator") for r in records]
        return pairs

    def train_samples(self, chain: Chain, round_: int) -> list[Path]:
        """Round ``round_``'s data: the chain's task's samples of round ``round_ - 1`` on the train split
        (round 0's train-split evaluation covers every task; a later round's its chain's task only)."""
        source = chain.row(round_ - 1)
        if round_ == 1:
            return _of_task(self.evaluate(source, "train", None), chain.task)
        adapter = self.study.row_dir(source) / "adapter"
        return _of_task(self.evaluate(source, "train", adapter, **self.tasks_of(chain.tasks)), chain.task)

    def tasks_of(self, tasks: str) -> dict[str, str]:
        """``evaluate``'s ``tasks`` argument: given only where a row's tasks are not the study's."""
        return {} if tasks == self.options.tasks else {"tasks": tasks}

    def transfer(self, row: str, adapter: Path | None, metrics: Mapping[str, Any], tasks: str) -> dict[str, Any]:
        """The row on the other families (``--transfer``), in the training dtype as every evaluation of the
        study; its GV column is its own test evaluation."""
        run = LmEvalRun(base=self.base, tasks=tasks, metadata={}, limit=self.options.limit,
                        out=self.study.row_dir(row) / "transfer", adapter=adapter,
                        apply_chat_template=self.options.chat_template,
                        dtype=evaluation_dtype(self.settings, None),
                        row_identity=self.identities.get(row) or {},
                        backend=self.options.eval_backend)  # fmt: skip
        families = transfer_families("gv", self.options.tasks, self.options.metadata)
        others = [f for f in families if f.family != "gv"]
        # the row's own GV column: its test evaluation's average over its tasks (Table 3's Average)
        own = {"task": tasks, "metrics": dict(metrics.get("average") or {})}
        return {"gv": own, **evaluate_transfer(run, others, self.study.row_dir(row) / "transfer", label=row)}

    def not_trained(self, chain: Chain, round_: int, reason: str) -> dict[str, Any]:
        """A round that is not trained (too few examples, or its data's round was not): said, never silent.

        Not recorded as finished, so a rerun (more documents, a lower ``--min-examples``) tries again.
        """
        message = f"{chain.name} round {round_}: not trained ({reason})"
        print(f"logic-consistency improve gv: {message}", file=sys.stderr)
        return {"row": chain.row(round_), "chain": CHAINS[chain.kind], "round": round_, "adapter": None,
                "metrics": {}, "training": None, "not_trained": message, **_task_of(chain)}  # fmt: skip

    def row(
        self, chain: Chain, round_: int, previous: Mapping[str, Any] | None = None, ran_on: RanOn | None = None
    ) -> dict[str, Any]:
        name = chain.row(round_)
        done = self.study.finished(name)
        if done is not None:  # checked by verify_kept before any unit ran
            return done
        if previous is not None and previous.get("not_trained"):
            return self.not_trained(chain, round_, f"its data would come from {previous['row']}, which was not trained")
        adapter = None
        manifest: dict[str, Any] | None = None
        if round_ > 0:
            samples = self.train_samples(chain, round_)
            pairs = self.training_pairs(samples, consistent_only=chain.kind == "gv")
            if len(pairs) < self.options.min_examples:
                kind = "GV-consistent" if chain.kind == "gv" else "complete"
                documents = sum(1 for path in samples for _ in read_samples(path))
                return self.not_trained(
                    chain,
                    round_,
                    f"{len(pairs) // 2} {kind} pairs from {documents} train documents: {len(pairs)} examples, "
                    f"fewer than --min-examples {self.options.min_examples}",
                )
            label = chain.label(round_)
            examples = format_examples(self.base, pairs, chat_template=self.options.chat_template)
            identity = row_identity(self.identity_of(chain), name, label=label, recipe="gv", examples=examples)
            self.study.kept(name, identity)  # an adapter kept from an earlier try must be this row's
            self.identities[name] = identity
            adapter = self.study.row_dir(name) / "adapter"
            job = TrainJob(self.base, examples, adapter, chain.settings, "gv", label, "train",
                           self.options.min_examples, self.options.merge_weights)  # fmt: skip
            manifest = train_adapter(job)
        else:
            identity = row_identity(self.study.identity, name)
            self.study.kept(name, identity)
            self.identities[name] = identity
        tasks = chain.tasks if round_ else self.options.tasks
        summary: dict[str, Any] = {
            "row": name,
            "chain": CHAINS[chain.kind] if round_ else "base",
            "round": round_,
            **(_task_of(chain) if round_ else {}),
            "adapter": str(adapter) if adapter else None,
            "metrics": task_metrics(self.evaluate(name, "test", adapter, **self.tasks_of(tasks))),
            "training": manifest,
            "ran_on": dict(ran_on or {}),
            "identity": identity,
        }
        if self.options.transfer:
            summary["transfer"] = self.transfer(name, adapter, summary["metrics"], tasks)
        self.study.finish(name, summary)
        return summary


def _task_of(chain: Chain) -> dict[str, str]:
    """A per-task row's ``task`` field (none for a row over every task)."""
    return {"task": chain.task} if chain.task else {}


def run_gv_study(options: GVStudyOptions, executor: StudyExecutor = run_locally) -> list[dict[str, Any]]:
    """Run (or resume) the study under its folder's lock (:func:`~...study_lock.study_lock`); write its
    table, Pareto plot and README; return the rows in order.

    Round 0 is one unit of ``executor`` (default: here, in order), then each chain (per task) is one;
    the report is written once every unit has ended. A chain whose rows are all finished is not run again.

    Raises:
        StudyFolderError: ``out`` holds another study.
        TrainingError: A NaN loss, out of memory, ... (a round whose filtered set is smaller than
            ``min_examples`` is a row marked ``not_trained`` naming the round and its counts, never trained).
        StudyUnitError: Round 0 or a chain failed (naming it and its error).
    """
    with study_lock(options.out):
        return _run_gv_study(options, executor)


def _run_gv_study(options: GVStudyOptions, executor: StudyExecutor) -> list[dict[str, Any]]:
    study = _GVStudy(options)
    if executor is run_locally:  # QLoRA without a GPU, several GPUs: refused before round 0's evaluations
        check_devices(study.settings)
    study.study.open()
    check_disjoint(options.tasks.split(","), options.metadata, options.limit)
    merges = verify_kept(study, chains=False)
    # round 0 first (with the train-split evaluation every chain's round 1 trains from); then the
    # chains, independent of each other, each one unit: its rounds are strictly sequential (round k
    # trains on data round k-1's model generates), so a unit per round would run no faster
    first = StudyUnit("round_0", ("round_0",), partial(_round_zero, study))
    if (
        study.study.finished("round_0") is None
        or not (study.study.row_dir("round_0") / "train_eval" / "done").is_file()
    ):
        executor([first])
    merges += verify_kept(study, chains=True)  # once round 0's train-split evaluation, their data, is there
    if merges:  # --merge-weights on kept rows: each a unit, before the chains that might read the rows
        executor(merges)
    units = [
        StudyUnit(chain.name, tuple(chain.row(k) for k in _rounds(options, chain)), partial(_chain, study, chain))
        for chain in study.chains
    ]
    pending = [unit for unit in units if not _all_finished(study, unit)]
    ran = {unit.name: result for unit, result in zip(pending, executor(pending), strict=True)}
    rows = [study.row(study.chains[0], 0)]
    for chain, unit in zip(study.chains, units, strict=True):
        rows += ran.get(unit.name) or [study.row(chain, k) for k in _rounds(options, chain)]
    write_report(study.study, rows, identity=dict(study.study.identity), table_rows=method_rows(study, rows))
    if options.transfer:  # transfer.md beside the README (a row not trained has no cell: undefined)
        families = transfer_families("gv", options.tasks, options.metadata)
        labelled = [(_row_name(r), r.get("transfer") or {}) for r in rows]
        write_transfer_table(study.study.out, labelled, families)
    return rows


def _row_name(row: Mapping[str, Any]) -> str:
    """A row as every table names it (:func:`.improve_report.row_label`, with its task where it has one)."""
    return row_label(row) + (f" [{short(row['task'])}]" if row.get("task") else "")


def _rounds(options: GVStudyOptions, chain: Chain) -> range:
    return range(1, options.rounds_of(chain.kind) + 1)


def method_rows(study: _GVStudy, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Table 3's rows, one per method: with one chain per task, each task's cells come from that task's
    own adapter (its chain's row of that round) and the average is over the tasks, as the paper's."""
    if not any(chain.task for chain in study.chains):
        return list(rows)
    table: list[Mapping[str, Any]] = [rows[0]]
    for kind in CHAINS:
        for k in range(1, study.options.rounds_of(kind) + 1):
            names = {chain.row(k) for chain in study.chains if chain.kind == kind}
            members = [r for r in rows if r["row"] in names]
            trained = [r for r in members if not r.get("not_trained")]
            folders = [study.study.row_dir(r["row"]) / "test_eval" for r in trained]
            samples = [path for folder in folders for path in find_files(folder, "samples_*.jsonl")]
            entry: dict[str, Any] = {"row": f"{kind}_round_{k}", "chain": CHAINS[kind], "round": k,
                                     "metrics": task_metrics(samples, tasks=study.tasks),
                                     "adapters": {r["task"]: r["adapter"] for r in members}}  # fmt: skip
            if not trained:
                entry["not_trained"] = "; ".join(r["not_trained"] for r in members)
            table.append(entry)
    return table


def _all_finished(study: _GVStudy, unit: StudyUnit) -> bool:
    return all(study.study.finished(row) is not None for row in unit.rows)


def _round_zero(study: _GVStudy, ran_on: RanOn) -> list[dict[str, Any]]:
    """Round 0's unit: the base evaluated on the test split (its row) and on the train split (round 1's data)."""
    row = study.row(study.chains[0], 0, ran_on=ran_on)
    study.evaluate("round_0", "train", None)
    return [row]


def _chain(study: _GVStudy, chain: Chain, ran_on: RanOn) -> list[dict[str, Any]]:
    """One chain's unit: its rounds 1..R in order, each trained on data the previous round's model made."""
    previous = study.study.finished("round_0")
    rows = []
    for k in _rounds(study.options, chain):
        previous = study.row(chain, k, previous, ran_on=ran_on)
        rows.append(previous)
    return rows


def verify_kept(study: _GVStudy, *, chains: bool) -> list[StudyUnit]:
    """Check round 0, or each chain's kept rows in order, against this run's identity and their data now:
    round k's data are the pairs of round k-1's kept train-split evaluation. A row rebuilt on request
    takes its evaluations with it, so the rounds trained on its data are rebuilt after it.

    Returns:
        With ``--merge-weights``, the units that write the merged weights of the kept rows lacking them.

    Raises:
        RowMismatch: A kept row was made otherwise (naming it, the field, kept and now).
    """
    options = study.options
    if not chains:
        study.study.kept("round_0", row_identity(study.study.identity, "round_0"))
        return []
    merges = []
    for chain in study.chains:
        for k in _rounds(options, chain):
            name, source = chain.row(k), chain.row(k - 1)
            if study.study.finished(name) is None:
                continue  # an unfinished row's kept adapter is checked when its unit builds its data
            evaluation = study.study.row_dir(source) / "train_eval"
            known: dict[str, Any] = {"unknown_data": f"{source} has no finished train-split evaluation"}
            if (evaluation / "done").is_file():
                samples = _of_task(find_files(evaluation, "samples_*.jsonl"), chain.task)
                pairs = study.training_pairs(samples, consistent_only=chain.kind == "gv")
                known = {"examples": format_examples(study.base, pairs, chat_template=options.chat_template)}
            identity = row_identity(study.identity_of(chain), name, label=chain.label(k), recipe="gv", **known)
            if study.study.kept(name, identity) is not None and options.merge_weights:
                merges += [unit for unit in [study.study.merge_unit(name)] if unit is not None]
    return merges


#: ``improve gv`` (:func:`logic_consistency.tasks.improve_recipes.recipes` finds it).
RECIPE = StudyRecipe("gv", "the GV paper's consistency fine-tuning study (Li et al.)", GVStudyOptions, run_gv_study)
