"""``logic-consistency improve gv``: the GV paper's consistency fine-tuning (Li et al. §4-6, Tables 3
and 5, Figure 5) as one study.

The default task is the paper's fine-tuning setting, arithmetic with Appendix G's chain-of-thought
validator (``logic_consistency_gv_arithmetic_cot``); Table 13's plain arithmetic and ``generator_shots``
are the suite's variants, named so in the report. Round 0 is the base. For round k the model of round
k-1 generates and validates its own answers on ``instance_split: train`` documents (``lm_eval
--log_samples``); the GV-consistent pairs (D_filtered, :func:`.export.pairs_of_sample`) fine-tune the
*base* with LoRA. SelfTrain (§5 "Baseline") fine-tunes the base once on every complete pair of the
base's answers; ``selftrain_rounds`` above 1 iterates it (the suite's variant, labelled so). Every row
is evaluated on ``instance_split: test`` documents through ``lm_eval --model hf --model_args
pretrained=BASE,peft=ADAPTER``; the prompts trained on are the logged task prompts, formatted as the
evaluation formats them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from logic_consistency.common import find_files, read_samples
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
    run_lm_eval,
    run_locally,
)
from logic_consistency.harness_ext.training.study_identity import row_identity
from logic_consistency.harness_ext.training.trainer import TrainingError, TrainJob, train_adapter
from logic_consistency.harness_ext.training.transfer import evaluate_transfer, write_transfer_table
from logic_consistency.tasks.transfer import transfer_families

from .export import pairs_of_sample
from .improve_report import PAPER_TASK, write_report
from .improve_tables import GV_METRICS, task_metrics

__all__ = ["GV_METRICS", "GVStudyOptions", "run_gv_study"]

CHAINS = {"gv": "consistency FT", "selftrain": "SelfTrain"}
#: The tasks Li et al. train 3 epochs (App. F: arithmetic "has an abundance of training data"); 6 for the others.
ARITHMETIC_TASKS = frozenset({"logic_consistency_gv_arithmetic", PAPER_TASK})


@dataclass(frozen=True)
class GVStudyOptions(StudyOptions):
    """The ``improve gv`` settings: the common ones and the rounds of each chain.

    ``rounds``: consistency FT iterations (Li et al. Table 3 reports 3). ``selftrain_rounds``: 1 is the
    paper's SelfTrain; more is the suite's iterated variant.
    """

    tasks: str = PAPER_TASK
    rounds: int = 3
    selftrain_rounds: int = 1
    transfer: bool = False  #: every row also on the other families (the transfer table, :mod:`...tasks.transfer`)

    def rounds_of(self, chain: str) -> int:
        """How many rounds ``chain`` (``gv`` or ``selftrain``) runs."""
        return self.rounds if chain == "gv" else self.selftrain_rounds


def _row_name(chain: str, round_: int) -> str:
    return "round_0" if round_ == 0 else f"{chain}_round_{round_}"


def _label(chain: str, round_: int) -> str:
    return f"{CHAINS[chain]} round {round_} (data from {_row_name(chain, round_ - 1)})"


class _GVStudy:
    def __init__(self, options: GVStudyOptions) -> None:
        self.options = options
        self.base = check_base(options.base)
        long_task = any(name not in ARITHMETIC_TASKS for name in options.tasks.split(","))
        self.settings = settings_for("gv", options.train_args, long_task=long_task)
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
                "hyperparameters": self.settings.as_dict(),
                "chat_template": options.chat_template,  # the identity of everything that changes a row's numbers
                "base_path": str(self.base.resolve()),
                **({"transfer": True} if options.transfer else {}),  # absent otherwise: earlier folders resume
            },
            options.rebuild_mismatched,
        )

    def evaluate(self, row: str, split: str, adapter: Path | None) -> list[Path]:
        run = LmEvalRun(
            base=self.base,
            tasks=self.options.tasks,
            metadata={**self.options.metadata, "instance_split": split},
            limit=self.options.limit,
            out=self.study.row_dir(row) / f"{split}_eval",
            adapter=adapter,
            apply_chat_template=self.options.chat_template,
            dtype=evaluation_dtype(self.settings, None),  # every row and round in the dtype the study trains in
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

    def transfer(self, row: str, adapter: Path | None, metrics: Mapping[str, Any]) -> dict[str, Any]:
        """The row on the other families (``--transfer``); its GV column is its own test evaluation."""
        run = LmEvalRun(base=self.base, tasks=self.options.tasks, metadata={}, limit=self.options.limit,
                        out=self.study.row_dir(row) / "transfer", adapter=adapter,
                        apply_chat_template=self.options.chat_template, backend=self.options.eval_backend)  # fmt: skip
        families = transfer_families("gv", self.options.tasks, self.options.metadata)
        others = [f for f in families if f.family != "gv"]
        # the row's own GV column: its test evaluation's average over the study's tasks (Table 3's Average)
        own = {"task": self.options.tasks, "metrics": dict(metrics.get("average") or {})}
        return {"gv": own, **evaluate_transfer(run, others, self.study.row_dir(row) / "transfer", label=row)}

    def not_trained(self, chain: str, round_: int, reason: str) -> dict[str, Any]:
        """A round that is not trained (too few examples, or its data's round was not): said, never silent.

        Not recorded as finished, so a rerun (more documents, a lower ``--min-examples``) tries again.
        """
        message = f"{CHAINS[chain]} round {round_}: not trained ({reason})"
        print(f"logic-consistency improve gv: {message}", file=sys.stderr)
        row = _row_name(chain, round_)
        return {"row": row, "chain": CHAINS[chain], "round": round_, "adapter": None, "metrics": {}, "training": None,
                "not_trained": message}  # fmt: skip

    def row(
        self, chain: str, round_: int, previous: Mapping[str, Any] | None = None, ran_on: RanOn | None = None
    ) -> dict[str, Any]:
        name = _row_name(chain, round_)
        done = self.study.finished(name)
        if done is not None:  # checked by verify_kept before any unit ran
            return done
        if previous is not None and previous.get("not_trained"):
            return self.not_trained(chain, round_, f"its data would come from {previous['row']}, which was not trained")
        adapter = None
        manifest: dict[str, Any] | None = None
        if round_ > 0:
            source = _row_name(chain, round_ - 1)
            source_adapter = self.study.row_dir(source) / "adapter" if round_ > 1 else None
            samples = self.evaluate(source, "train", source_adapter)
            pairs = self.training_pairs(samples, consistent_only=chain == "gv")
            if len(pairs) < self.options.min_examples:
                kind = "GV-consistent" if chain == "gv" else "complete"
                documents = sum(1 for path in samples for _ in read_samples(path))
                return self.not_trained(
                    chain,
                    round_,
                    f"{len(pairs) // 2} {kind} pairs from {documents} train documents: {len(pairs)} examples, "
                    f"fewer than --min-examples {self.options.min_examples}",
                )
            label = _label(chain, round_)
            examples = format_examples(self.base, pairs, chat_template=self.options.chat_template)
            identity = row_identity(self.study.identity, name, label=label, recipe="gv", examples=examples)
            self.study.kept(name, identity)  # an adapter kept from an earlier try must be this row's
            adapter = self.study.row_dir(name) / "adapter"
            job = TrainJob(self.base, examples, adapter, self.settings, "gv", label, "train", self.options.min_examples,
                           self.options.merge_weights)  # fmt: skip
            manifest = train_adapter(job)
        else:
            identity = row_identity(self.study.identity, name)
            self.study.kept(name, identity)
        summary: dict[str, Any] = {
            "row": name,
            "chain": CHAINS[chain] if round_ else "base",
            "round": round_,
            "adapter": str(adapter) if adapter else None,
            "metrics": task_metrics(self.evaluate(name, "test", adapter)),
            "training": manifest,
            "ran_on": dict(ran_on or {}),
            "identity": identity,
        }
        if self.options.transfer:
            summary["transfer"] = self.transfer(name, adapter, summary["metrics"])
        self.study.finish(name, summary)
        return summary


def run_gv_study(options: GVStudyOptions, executor: StudyExecutor = run_locally) -> list[dict[str, Any]]:
    """Run (or resume) the study; write its table, Pareto plot and README; return the rows in order.

    Round 0 is one unit of ``executor`` (default: here, in order), then each chain is one; the report
    is written once every unit has ended. A chain whose rows are all finished is not run again.

    Raises:
        StudyFolderError: ``out`` holds another study.
        TrainingError: A NaN loss, out of memory, ... (a round whose filtered set is smaller than
            ``min_examples`` is a row marked ``not_trained`` naming the round and its counts, never trained).
        StudyUnitError: Round 0 or a chain failed (naming it and its error).
    """
    for flag, value in (("--rounds", options.rounds), ("--selftrain-rounds", options.selftrain_rounds)):
        if value < 1:
            raise TrainingError(f"{flag} must be at least 1, got {value}")
    study = _GVStudy(options)
    study.study.open()
    check_disjoint(options.tasks.split(","), options.metadata, options.limit)
    verify_kept(study, chains=False)
    # round 0 first (with the train-split evaluation both chains' round 1 trains from); then the two
    # chains, independent of each other, each one unit: its rounds are strictly sequential (round k
    # trains on data round k-1's model generates), so a unit per round would run no faster
    first = StudyUnit("round_0", ("round_0",), partial(_round_zero, study))
    if (
        study.study.finished("round_0") is None
        or not (study.study.row_dir("round_0") / "train_eval" / "done").is_file()
    ):
        executor([first])
    verify_kept(study, chains=True)  # once round 0's train-split evaluation, their data, is there
    names = {chain: tuple(_row_name(chain, k) for k in range(1, options.rounds_of(chain) + 1)) for chain in CHAINS}
    units = [StudyUnit(CHAINS[chain], names[chain], partial(_chain, study, chain)) for chain in CHAINS]
    pending = [unit for unit in units if not _all_finished(study, unit)]
    ran = {unit.name: result for unit, result in zip(pending, executor(pending), strict=True)}
    rows = [study.row("gv", 0)]
    for chain, unit in zip(CHAINS, units, strict=True):
        rows += ran.get(unit.name) or [study.row(chain, k) for k in range(1, options.rounds_of(chain) + 1)]
    write_report(study.study, rows, identity=dict(study.study.identity))
    if options.transfer:  # transfer.md beside the README (a row not trained has no cell: undefined)
        families = transfer_families("gv", options.tasks, options.metadata)
        write_transfer_table(study.study.out, [(r["row"], r.get("transfer") or {}) for r in rows], families)
    return rows


def _all_finished(study: _GVStudy, unit: StudyUnit) -> bool:
    return all(study.study.finished(row) is not None for row in unit.rows)


def _round_zero(study: _GVStudy, ran_on: RanOn) -> list[dict[str, Any]]:
    """Round 0's unit: the base evaluated on the test split (its row) and on the train split (round 1's data)."""
    row = study.row("gv", 0, ran_on=ran_on)
    study.evaluate("round_0", "train", None)
    return [row]


def _chain(study: _GVStudy, chain: str, ran_on: RanOn) -> list[dict[str, Any]]:
    """One chain's unit: its rounds 1..R in order, each trained on data the previous round's model made."""
    previous = study.study.finished("round_0")
    rows = []
    for k in range(1, study.options.rounds_of(chain) + 1):
        previous = study.row(chain, k, previous, ran_on=ran_on)
        rows.append(previous)
    return rows


def verify_kept(study: _GVStudy, *, chains: bool) -> None:
    """Check round 0, or each chain's kept rows in order, against this run's identity and their data now:
    round k's data are the pairs of round k-1's kept train-split evaluation. A row rebuilt on request
    takes its evaluations with it, so the rounds trained on its data are rebuilt after it.

    Raises:
        RowMismatch: A kept row was made otherwise (naming it, the field, kept and now).
    """
    options = study.options
    if not chains:
        study.study.kept("round_0", row_identity(study.study.identity, "round_0"), merge_weights=options.merge_weights)
        return
    for chain in CHAINS:
        for k in range(1, options.rounds_of(chain) + 1):
            name, source = _row_name(chain, k), _row_name(chain, k - 1)
            if study.study.finished(name) is None:
                continue  # an unfinished row's kept adapter is checked when its unit builds its data
            evaluation = study.study.row_dir(source) / "train_eval"
            known: dict[str, Any] = {"unknown_data": f"{source} has no finished train-split evaluation"}
            if (evaluation / "done").is_file():
                pairs = study.training_pairs(find_files(evaluation, "samples_*.jsonl"), consistent_only=chain == "gv")
                known = {"examples": format_examples(study.base, pairs, chat_template=options.chat_template)}
            identity = row_identity(study.study.identity, name, label=_label(chain, k), recipe="gv", **known)
            study.study.kept(name, identity, merge_weights=options.merge_weights)
