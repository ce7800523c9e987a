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
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from logic_consistency.common import find_files, read_samples, task_of_samples_file
from logic_consistency.harness_ext.training.devices import evaluation_dtype
from logic_consistency.harness_ext.training.driver import (
    PlannedUnit,
    Stages,
    StudyBase,
    StudyExecutor,
    StudyPlan,
    StudyRecipe,
    run_locally,
    run_study,
)
from logic_consistency.harness_ext.training.prompts import format_examples
from logic_consistency.harness_ext.training.study import Study
from logic_consistency.harness_ext.training.study_eval import LmEvalRun, run_lm_eval
from logic_consistency.harness_ext.training.study_executor import RanOn, StudyUnit
from logic_consistency.harness_ext.training.study_identity import row_identity
from logic_consistency.harness_ext.training.trainer import Example, TrainJob, train_adapter
from logic_consistency.harness_ext.training.transfer import evaluate_transfer, write_transfer_table
from logic_consistency.tasks.improve_splits import check_disjoint
from logic_consistency.tasks.transfer import transfer_families

from .export import pairs_of_sample
from .improve_chains import CHAINS, Chain, chain_plan, short
from .improve_options import GVStudyOptions
from .improve_report import row_label, write_report
from .improve_tables import GV_METRICS, task_metrics
from .validator_sets import with_fixed_sets

__all__ = ["GV_METRICS", "RECIPE", "GVStudyOptions", "run_gv_study"]

#: A kept row to check, with the identity this run would make it with (:class:`~...driver.PlannedUnit`).
Check = tuple[str, Mapping[str, Any]]


def _of_task(samples: Sequence[Path], task: str | None) -> list[Path]:
    """The samples files of ``task`` (all of them for ``None``)."""
    return [path for path in samples if task is None or task_of_samples_file(path) == task]


def _identity(options: GVStudyOptions, base: StudyBase, chains: Sequence[Chain]) -> dict[str, Any]:
    """What makes the study's rows comparable (``study.json``)."""
    per_task = any(chain.task for chain in chains)
    hyperparameters = (
        {chain.task: chain.settings.as_dict() for chain in chains if chain.kind == "gv"}
        if per_task
        else chains[0].settings.as_dict()
    )
    own = {"rounds": options.rounds, "selftrain_rounds": options.selftrain_rounds}
    return {
        **base.identity(options, own, hyperparameters),
        **({"transfer": True} if options.transfer else {}),  # absent otherwise: earlier folders resume
        **({"pooled": True} if options.pooled and "," in options.tasks else {}),
    }


class _GVStudy:
    """One ``improve gv`` run: round 0, then one unit per chain, its report (its plan: :func:`_plan`).

    Its units run its methods wherever the executor puts them (it is pickled with them): ``study`` is
    the study's folder, given by the driver once it is open (:meth:`stages`).
    """

    study: Study

    def __init__(self, options: GVStudyOptions, base: StudyBase) -> None:
        self.options = options
        self.base = base.path
        self.tasks = options.tasks.split(",")
        self.chains = chain_plan(self.tasks, base.settings, options.train_overrides, pooled=options.pooled)
        self.settings = self.chains[0].settings  # the dtype every row is scored in (the chains differ in epochs only)
        self.identity = _identity(options, base, self.chains)
        #: Each row's identity once its unit has built it (what its evaluations are stamped with).
        self.identities: dict[str, Mapping[str, Any]] = {}

    def stages(self, study: Study) -> Stages:
        """Round 0 first (with the train-split evaluation every chain's round 1 trains from); then the
        chains, independent of each other, each one unit: its rounds are strictly sequential (round k
        trains on data round k-1's model generates), so a unit per round would run no faster. Last, from
        the rows sent back: Table 3, Table 5, Figure 5 and the README; with ``--transfer``,
        ``transfer.md`` beside them (a row not trained has no cell: undefined)."""
        self.study = study
        check_disjoint(self.tasks, self.options.metadata, self.options.limit)
        first = StudyUnit("round_0", ("round_0",), partial(_round_zero, self))
        rows = yield [PlannedUnit(first, verify_kept(self), (study.row_dir("round_0") / "train_eval" / "done",))]
        # each chain's kept rows are checked once round 0's train-split evaluation, their data, is there
        rows += yield [PlannedUnit(self.chain_unit(chain), verify_kept(self, chain)) for chain in self.chains]
        write_report(study, rows, identity=dict(study.identity), table_rows=method_rows(self, rows))
        if self.options.transfer:
            families = transfer_families("gv", self.options.tasks, self.options.metadata)
            write_transfer_table(study.out, [(_row_name(r), r.get("transfer") or {}) for r in rows], families)

    def chain_unit(self, chain: Chain) -> StudyUnit:
        """One chain's unit: its rounds 1..R (:func:`_chain`)."""
        return StudyUnit(
            chain.name, tuple(chain.row(k) for k in _rounds(self.options, chain)), partial(_chain, self, chain)
        )

    def identity_of(self, chain: Chain) -> dict[str, Any]:
        """The study's identity with the chain's own hyperparameters (what its adapters' manifests hold)."""
        return {**self.identity, "hyperparameters": chain.settings.as_dict()}

    def evaluate(self, row: str, split: str, adapter: Path | None, tasks: str | None = None) -> list[Path]:
        """The row on ``split``: its test evaluation, or (train) the data of the round after it; kept
        only for the same row identity (:func:`~...study.evaluation_stamp`)."""
        tasks = tasks or self.options.tasks
        identity = self.identities.get(row) or (self.study.finished(row) or {}).get("identity") or {}
        tasks = with_fixed_sets(tasks) if split == "test" else tasks  # Table 5's validator: App. H's sets
        run = LmEvalRun.of_study(self.options, self.base, tasks, {**self.options.metadata, "instance_split": split},
                                 self.study.row_dir(row) / f"{split}_eval", adapter=adapter,
                                 dtype=evaluation_dtype(self.settings, None),  # every row in the training dtype
                                 identity=identity)  # fmt: skip
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
        run = LmEvalRun.of_study(self.options, self.base, tasks, {}, self.study.row_dir(row) / "transfer",
                                 adapter=adapter, dtype=evaluation_dtype(self.settings, None),
                                 identity=self.identities.get(row) or {})  # fmt: skip
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

    def examples(self, chain: Chain, round_: int) -> tuple[list[Example] | None, str]:
        """Round ``round_``'s training examples, or (``None``) why there are too few to train on."""
        samples = self.train_samples(chain, round_)
        pairs = self.training_pairs(samples, consistent_only=chain.kind == "gv")
        if len(pairs) < self.options.min_examples:
            kind = "GV-consistent" if chain.kind == "gv" else "complete"
            documents = sum(1 for path in samples for _ in read_samples(path))
            return None, (f"{len(pairs) // 2} {kind} pairs from {documents} train documents: {len(pairs)} examples, "
                          f"fewer than --min-examples {self.options.min_examples}")  # fmt: skip
        return format_examples(self.base, pairs, chat_template=self.options.chat_template), ""

    def expect(self, row: str, identity: dict[str, Any]) -> dict[str, Any]:
        """The row's identity, once what its folder keeps (an adapter from an earlier try) is checked against it."""
        self.study.kept(row, identity)
        self.identities[row] = identity
        return identity

    def row(
        self, chain: Chain, round_: int, previous: Mapping[str, Any] | None = None, ran_on: RanOn | None = None
    ) -> dict[str, Any]:
        """Round ``round_`` of ``chain`` (round 0: the base), finished here unless it was already."""
        name = chain.row(round_)
        done = self.study.finished(name)
        if done is not None:  # checked by the driver before any unit ran
            return done
        if previous is not None and previous.get("not_trained"):
            return self.not_trained(chain, round_, f"its data would come from {previous['row']}, which was not trained")
        if round_ == 0:
            return self.measure(chain, 0, self.expect(name, row_identity(self.identity, name)), None, ran_on)
        examples, reason = self.examples(chain, round_)
        if examples is None:
            return self.not_trained(chain, round_, reason)
        label = chain.label(round_)
        identity = self.expect(name, row_identity(self.identity_of(chain), name, label=label, recipe="gv",
                                                  examples=examples))  # fmt: skip
        job = TrainJob(self.base, examples, self.study.row_dir(name) / "adapter", chain.settings, "gv", label, "train",
                       self.options.min_examples, self.options.merge_weights)  # fmt: skip
        return self.measure(chain, round_, identity, job, ran_on)

    def measure(
        self, chain: Chain, round_: int, identity: dict[str, Any], job: TrainJob | None, ran_on: RanOn | None
    ) -> dict[str, Any]:
        """Train the round's adapter (none for round 0), evaluate it on the test split (and on the other
        families, where asked) and record the row as finished."""
        name = chain.row(round_)
        manifest = train_adapter(job) if job is not None else None
        adapter = job.out if job is not None else None
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

    def kept_identity(self, chain: Chain, round_: int) -> dict[str, Any]:
        """The identity a finished round of ``chain`` would be made with now: its data are the pairs of
        round ``round_ - 1``'s kept train-split evaluation (unknown while it has none)."""
        source = chain.row(round_ - 1)
        evaluation = self.study.row_dir(source) / "train_eval"
        known: dict[str, Any] = {"unknown_data": f"{source} has no finished train-split evaluation"}
        if (evaluation / "done").is_file():
            samples = _of_task(find_files(evaluation, "samples_*.jsonl"), chain.task)
            pairs = self.training_pairs(samples, consistent_only=chain.kind == "gv")
            known = {"examples": format_examples(self.base, pairs, chat_template=self.options.chat_template)}
        return row_identity(self.identity_of(chain), chain.row(round_), label=chain.label(round_), recipe="gv",
                            **known)  # fmt: skip


def _task_of(chain: Chain) -> dict[str, str]:
    """A per-task row's ``task`` field (none for a row over every task)."""
    return {"task": chain.task} if chain.task else {}


def _row_name(row: Mapping[str, Any]) -> str:
    """A row as every table names it (:func:`.improve_report.row_label`, with its task where it has one)."""
    return row_label(row) + (f" [{short(row['task'])}]" if row.get("task") else "")


def _rounds(options: GVStudyOptions, chain: Chain) -> range:
    return range(1, options.rounds_of(chain.kind) + 1)


def _test_samples(study: Study, rows: Sequence[Mapping[str, Any]]) -> list[Path]:
    """The samples files of the rows' test evaluations."""
    return [path for r in rows for path in find_files(study.row_dir(r["row"]) / "test_eval", "samples_*.jsonl")]


def _method_row(study: _GVStudy, kind: str, round_: int, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Table 3's row of one method and round over the per-task chains: each task's cells from its own adapter."""
    names = {chain.row(round_) for chain in study.chains if chain.kind == kind}
    members = [r for r in rows if r["row"] in names]
    trained = [r for r in members if not r.get("not_trained")]
    entry: dict[str, Any] = {"row": f"{kind}_round_{round_}", "chain": CHAINS[kind], "round": round_,
                             "metrics": task_metrics(_test_samples(study.study, trained), tasks=study.tasks),
                             "adapters": {r["task"]: r["adapter"] for r in members}}  # fmt: skip
    if not trained:
        entry["not_trained"] = "; ".join(r["not_trained"] for r in members)
    return entry


def method_rows(study: _GVStudy, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Table 3's rows, one per method: with one chain per task, each task's cells come from that task's
    own adapter (its chain's row of that round) and the average is over the tasks, as the paper's."""
    if not any(chain.task for chain in study.chains):
        return list(rows)
    methods = [
        _method_row(study, kind, k, rows) for kind in CHAINS for k in range(1, study.options.rounds_of(kind) + 1)
    ]
    return [rows[0], *methods]


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


def verify_kept(study: _GVStudy, chain: Chain | None = None) -> Iterator[Check]:
    """Round 0 (``chain`` ``None``), or each finished round of ``chain`` in order, with the identity this
    run would make it with, for the driver to check (:class:`~...driver.PlannedUnit`). Lazily: round k's
    data are the pairs of round k-1's kept train-split evaluation, and a row rebuilt on request takes its
    evaluations with it, so each identity is made once the round before it was checked. An unfinished
    row's kept adapter is checked when its unit builds its data.

    Raises:
        RowMismatch: A kept row was made otherwise (naming it, the field, kept and now).
    """
    if chain is None:
        yield "round_0", row_identity(study.identity, "round_0")
        return
    for k in _rounds(study.options, chain):
        if study.study.finished(chain.row(k)) is not None:
            yield chain.row(k), study.kept_identity(chain, k)


def _plan(options: GVStudyOptions, base: StudyBase) -> StudyPlan:
    """One ``improve gv`` run's plan: the chains laid out (per task, App. F's epochs), the identity made."""
    study = _GVStudy(options, base)
    return StudyPlan(study.identity, study.stages)


#: ``improve gv`` as it declares itself to the study driver (:func:`logic_consistency.tasks.improve_recipes.recipes`
#: finds it): its plan lays out the chains (per task, App. F's epochs) and makes the identity.
RECIPE = StudyRecipe("gv", "the GV paper's consistency fine-tuning study (Li et al.)", GVStudyOptions, _plan)


def run_gv_study(options: GVStudyOptions, executor: StudyExecutor = run_locally) -> list[dict[str, Any]]:
    """Run (or resume) the study (:func:`~...driver.run_study`): its table, Pareto plot and README; the rows
    in order. Round 0 is one unit of ``executor``, then each chain (per task) is one; a chain whose rows are
    all finished is not run again.

    Raises:
        StudyFolderError: ``out`` holds another study.
        TrainingError: A NaN loss, out of memory, ... (a round whose filtered set is smaller than
            ``min_examples`` is a row marked ``not_trained`` naming the round and its counts, never trained).
        StudyUnitError: Round 0 or a chain failed (naming it and its error).
    """
    return run_study(RECIPE, options, executor)
