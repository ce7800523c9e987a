"""What every improve study shares: its folder (one study per folder, finished rows kept), its
``lm_eval`` runs (started as every child of the suite is, :mod:`..jobs.processes`), per-document metrics from the sample
logs with the suite's bootstrap intervals, and the table it writes. It knows no task family.

A study's independent units (a REPAIR row; GV's round 0, then each chain) go through a
:class:`StudyExecutor`: :func:`run_locally` (the default) runs them here in order; ``improve
--executor ray`` passes the Ray one (:mod:`.study_executor`, on the suite's Ray session).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, Protocol

from logic_consistency.common import find_files, read_samples
from logic_consistency.harness_ext.jobs.executor import Unit, UnitError, executor_for
from logic_consistency.harness_ext.jobs.processes import default_lm_eval, run_logged
from logic_consistency.harness_ext.models.adapter_manifest import is_complete
from logic_consistency.metrics.bootstrap import bootstrap_ci
from logic_consistency.outputs import atomic_write, atomic_write_json

from .eval_backend import DEFAULT_EVAL_BACKEND, lm_eval_environment, model_arguments
from .merge import merged_folder
from .study_identity import check_row, row_hashes
from .study_lock import LOCK_NAME, check_out
from .study_options import StudyOptions

__all__ = [
    "STUDY_FILE",
    "LmEvalRun",
    "Study",
    "StudyExecutor",
    "StudyOptions",
    "StudyUnit",
    "StudyUnitError",
    "metric_summary",
    "run_lm_eval",
    "run_locally",
    "table_markdown",
]

#: The file that says which study a folder holds.
STUDY_FILE = "study.json"


#: What a unit records of where it ran (``ran_on`` in its rows' ``row.json``): the executor, and the
#: host and process here, or Ray's node and task ids.
RanOn = Mapping[str, Any]


@dataclass(frozen=True)
class StudyUnit:
    """One independent unit of a study: it trains and evaluates its rows, writing only their folders.

    Attributes:
        name: What a failure names (the row, or the chain).
        rows: The rows it runs, in order (their ``row.json`` are written last, by the unit).
        work: Runs the unit where the executor put it; returns its rows' summaries. Picklable (a
            module-level function, or a ``functools.partial`` of one), so that a Ray task can run it.
    """

    name: str
    rows: tuple[str, ...]
    work: Callable[[RanOn], list[dict[str, Any]]]


class StudyExecutor(Protocol):
    """Runs a study's units: one list of row summaries per unit, in the units' order.

    Raises:
        StudyUnitError: A unit failed (naming it and its error; the others are stopped).
        KeyboardInterrupt: Every unit is stopped first.
    """

    def __call__(self, units: Sequence[StudyUnit]) -> list[list[dict[str, Any]]]: ...


class StudyUnitError(RuntimeError):
    """A unit of the study failed: names the unit (its row, or its chain) and the error."""

    def __init__(self, unit: str, error: str) -> None:
        super().__init__(f"{unit}: {error}")
        self.unit = unit


def _failed_here(index: int, error: UnitError) -> NoReturn:
    raise StudyUnitError(error.label, f"{type(error.cause).__name__}: {error.cause}") from error.cause


def run_locally(units: Sequence[StudyUnit]) -> list[list[dict[str, Any]]]:
    """The default :class:`StudyExecutor`: each unit here, one after another, in order, on the local peer
    of the one executor protocol (:mod:`..jobs.executor`); a failing unit stops the rest."""
    return executor_for("local").run([Unit(unit.name, unit.work) for unit in units], failed=_failed_here)


class StudyFolderError(ValueError):
    """The output folder holds another study, or something else."""


@dataclass(frozen=True)
class Study:
    """One study's folder and identity (recipe, base, tasks, limit, chat template, options: what makes
    its rows comparable); ``rebuild_mismatched`` rebuilds what differs instead of refusing it."""

    out: Path
    identity: Mapping[str, Any]
    rebuild_mismatched: bool = False

    def open(self) -> None:
        """Create the folder, or check that it holds this same study (its finished rows are then kept).

        With ``rebuild_mismatched``, a folder of the same recipe whose identity differs takes this one
        (each of its rows then differs from it, and :meth:`kept` rebuilds it).

        Raises:
            StudyFolderError: The folder holds another study (naming each field, kept and now), or files
                that are not a study's.
        """
        marker = self.out / STUDY_FILE
        if marker.is_file():
            self._reopen(marker)
            return
        check_out(self.out)
        if self.out.exists() and any(path.name != LOCK_NAME for path in self.out.iterdir()):
            raise StudyFolderError(
                f"--out {self.out}: exists and is not an improve study's folder; choose another --out"
            )
        self.out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(marker, dict(self.identity), indent=2)

    def _reopen(self, marker: Path) -> None:
        """The folder holds a study: this same one, or (``rebuild_mismatched``, same recipe) one it takes over."""
        found = json.loads(marker.read_text(encoding="utf-8"))
        if found == dict(self.identity):
            return
        differ = sorted(k for k in {*found, *self.identity} if found.get(k) != self.identity.get(k))
        listed = "; ".join(f"{k}: kept {found.get(k)!r}, now {self.identity.get(k)!r}" for k in differ)
        other_recipe = found.get("study") != self.identity.get("study")  # never rebuilt over
        if other_recipe or not self.rebuild_mismatched:
            hint = "" if other_recipe else ", or rerun with --rebuild-mismatched"
            raise StudyFolderError(f"--out {self.out}: holds another study ({listed}); choose another --out{hint}")
        print(f"logic-consistency improve: {marker}: rebuilding the rows made otherwise ({listed})", file=sys.stderr)
        atomic_write_json(marker, dict(self.identity), indent=2)

    def row_dir(self, row: str) -> Path:
        """The folder of one row (its adapter, its evaluation, its ``row.json``)."""
        return self.out / "rows" / row

    def _record(self, row: str) -> dict[str, Any] | None:
        """A finished row's ``row.json`` as written (its summary and its ``hashes``), else ``None``."""
        path = self.row_dir(row) / "row.json"
        return dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None

    def finished(self, row: str) -> dict[str, Any] | None:
        """A finished row's summary, as the unit that finished it returned it (``row.json`` without the
        ``hashes`` that :meth:`kept` verifies), else ``None``: a rerun's tables are the first run's."""
        record = self._record(row)
        return None if record is None else {key: value for key, value in record.items() if key != "hashes"}

    def kept(self, row: str, identity: Mapping[str, Any]) -> dict[str, Any] | None:
        """A finished row's summary when it was made as this run would make it (``identity``), else ``None``.

        A query: it reads and checks, and writes nothing but the removal of a row made otherwise when
        ``rebuild_mismatched`` asks for it. An unfinished row's kept adapter is checked too. A kept row's
        merged weights are a unit of their own (:meth:`merge_unit`), made where the executor runs units.

        Raises:
            RowMismatch: Naming the row, each field that differs, kept and now.
        """
        if not check_row(self.row_dir(row), self._record(row), identity, rebuild=self.rebuild_mismatched):
            return None
        return self.finished(row)

    def merge_unit(self, row: str) -> StudyUnit | None:
        """``--merge-weights`` on a kept row: the unit that writes its merged weights (``None``: there already,
        or the row has no adapter), so that a rerun never silently does nothing and the driver merges nothing."""
        summary = self.finished(row)
        adapter = self.row_dir(row) / "adapter"
        if summary is None or not summary.get("training") or not is_complete(adapter):
            return None
        merged = merged_folder(adapter)
        if summary["training"].get("merged") == str(merged) and merged.is_dir():
            return None
        return StudyUnit(f"{row} (merged weights)", (row,), partial(_merge_kept, self, row))

    def finish(self, row: str, summary: Mapping[str, Any]) -> None:
        """Record a row as finished (written last, atomically: a rerun keeps it), with the SHA-256 of
        what it measured (:func:`.study_identity.row_hashes`), which a rerun verifies."""
        fields = {key: value for key, value in summary.items() if key != "hashes"}
        hashes = row_hashes(self.row_dir(row), fields)
        atomic_write_json(self.row_dir(row) / "row.json", {**fields, "hashes": hashes}, indent=2)


def _merge_kept(study: Study, row: str, ran_on: RanOn) -> list[dict[str, Any]]:
    """The unit of :meth:`Study.merge_unit`: merge the kept row's adapter into its base, record it in ``row.json``."""
    from .merge import merge_adapter

    summary = study.finished(row) or {}
    merged = str(merge_adapter(study.row_dir(row) / "adapter"))
    summary = {**summary, "training": {**summary["training"], "merged": merged}}
    study.finish(row, summary)
    return [summary]


@dataclass(frozen=True)
class LmEvalRun:
    """One ``lm_eval`` run of a study (``lc-hf`` or ``hf``, optionally with a LoRA adapter)."""

    base: Path
    tasks: str
    metadata: Mapping[str, Any]
    limit: int | None
    out: Path
    adapter: Path | None = None
    apply_chat_template: bool = True
    batch_size: str = "4"
    gen_kwargs: str | None = None
    #: The dtype the model is scored in: the one it trained in (:func:`.devices.evaluation_dtype`).
    dtype: str = "float32"
    #: The identity of the row it measures (:mod:`.study_identity`): a finished evaluation is kept only
    #: for the same row identity, command and adapter weights (:func:`evaluation_stamp`).
    row_identity: Mapping[str, Any] = field(default_factory=dict)
    backend: str = DEFAULT_EVAL_BACKEND

    @classmethod
    def of_study(
        cls,
        options: StudyOptions,
        base: Path,
        tasks: str,
        metadata: Mapping[str, Any],
        out: Path,
        *,
        adapter: Path | None,
        dtype: str,
        identity: Mapping[str, Any],
    ) -> LmEvalRun:
        """A run of a study's row: the study's ``--limit``, chat template and backend, as its every row is scored."""
        return cls(base=base, tasks=tasks, metadata=metadata, limit=options.limit, out=out, adapter=adapter,
                   apply_chat_template=options.chat_template, dtype=dtype, row_identity=identity,
                   backend=options.eval_backend)  # fmt: skip

    def command(self) -> list[str]:
        """The command line (:func:`.eval_backend.model_arguments`: the adapter loads as a user's ``peft=`` does)."""
        command = [default_lm_eval(), *model_arguments(self.backend, self.base, self.dtype, self.adapter)]
        command += ["--tasks", self.tasks, "--metadata", json.dumps(dict(self.metadata), sort_keys=True)]
        command += ["--batch_size", self.batch_size, "--output_path", str(self.out), "--log_samples"]
        if self.limit is not None:
            command += ["--limit", str(self.limit)]
        if self.apply_chat_template:
            command.append("--apply_chat_template")
        if self.gen_kwargs:
            command += ["--gen_kwargs", self.gen_kwargs]
        return command


def evaluation_stamp(run: LmEvalRun) -> str:
    """What a finished evaluation was made for (its ``done`` marker): the SHA-256 of its command but
    where it writes, its adapter's weights and the identity of the row it measures."""
    command = run.command()[1:]  # not the lm_eval path (another checkout of the same suite)
    if "--output_path" in command:
        at = command.index("--output_path")
        del command[at : at + 2]
    weights = sorted(run.adapter.glob("*.safetensors")) if run.adapter is not None else []
    adapter = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in weights}
    document = {"command": command, "adapter": adapter, "identity": dict(run.row_identity)}
    return hashlib.sha256(json.dumps(document, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def run_lm_eval(run: LmEvalRun, *, label: str, timeout: float | None = None) -> list[Path]:
    """Run ``lm_eval`` and return its samples files.

    The run writes into ``<out>.partial`` (log appended to its ``lm_eval.log``), which is renamed to
    ``<out>`` once it has ended well, its ``done`` marker holding :func:`evaluation_stamp`: a stop at any
    point leaves no finished-looking evaluation. A finished run is kept only for the same stamp (a
    rerun with other flags, another chat template or other weights evaluates again). The child is started the one
    way the suite starts children (:func:`~logic_consistency.harness_ext.jobs.processes.run_logged`):
    its own process group, killed by the kernel when the study dies, stopped past ``timeout`` seconds
    (``None``: no limit) and before a stop (Ctrl-C, SIGTERM) is re-raised, credentials of the
    environment redacted from its log.

    Raises:
        RuntimeError: lm_eval failed or timed out (naming ``label`` and the log, with its last lines).
    """
    stamp = evaluation_stamp(run)
    done = run.out / "done"
    if done.is_file() and done.read_text(encoding="utf-8").strip() != stamp:
        print(f"logic-consistency improve: {run.out}: made for another row, command or adapter; evaluating again",
              file=sys.stderr)  # fmt: skip
        shutil.rmtree(run.out)
    if not done.is_file():
        work = run.out.with_name(f"{run.out.name}.partial")
        work.mkdir(parents=True, exist_ok=True)
        # An unfinished earlier try may have written its samples before failing (lm_eval saves them
        # before it prints its table): left there, they would be read twice beside this try's.
        for stale in [*find_files(work, "samples_*.jsonl"), *find_files(work, "results_*.json")]:
            stale.unlink()
        log = work / "lm_eval.log"
        command, env = replace(run, out=work).command(), lm_eval_environment(os.environ)  # the suite's tasks only
        ended = run_logged(command, log_file=log, env=env, timeout=timeout)
        if ended.returncode != 0:
            why = f"timed out after {timeout:g} s" if ended.timed_out else f"exit {ended.returncode}"
            tail = ended.stderr_tail.splitlines()[-8:]
            raise RuntimeError(f"{label}: lm_eval failed ({why}); log {log}:\n" + "\n".join(tail))
        atomic_write(work / "done", [stamp.encode() + b"\n"])
        if run.out.exists():
            shutil.rmtree(run.out)
        os.replace(work, run.out)
    return find_files(run.out, "samples_*.jsonl")


def _defined_values(samples: Sequence[Path], metrics: Sequence[str]) -> dict[str, list[float]]:
    """Each metric's finite values over the documents of ``samples`` (a missing or NaN one left out)."""
    values: dict[str, list[float]] = {name: [] for name in metrics}
    for path in samples:
        for _, sample in read_samples(path):
            for name in metrics:
                value = sample.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                    values[name].append(float(value))
    return values


def metric_summary(samples: Sequence[Path], metrics: Sequence[str], *, seed: int = 0) -> dict[str, Any]:
    """Each metric's mean over documents with the suite's 95% bootstrap interval (``None``: undefined).

    A document where a metric is undefined (missing or NaN) is left out of it, never counted as 0.
    """
    summary: dict[str, Any] = {}
    for name, found in _defined_values(samples, metrics).items():
        if not found:
            summary[name] = {"mean": None, "ci95": None, "n": 0}
            continue
        low, high = bootstrap_ci(found, seed=seed) if len(found) > 1 else (found[0], found[0])
        summary[name] = {"mean": sum(found) / len(found), "ci95": [low, high], "n": len(found)}
    return summary


def _cell(entry: Mapping[str, Any] | None) -> str:
    if not entry or entry.get("mean") is None:
        return "undefined"
    low, high = entry["ci95"]
    return f"{100 * entry['mean']:.1f} [{100 * low:.1f}, {100 * high:.1f}] (n={entry['n']})"


def table_markdown(rows: Sequence[tuple[str, Mapping[str, Any]]], columns: Sequence[tuple[str, str]]) -> str:
    """A Markdown table: one line per row, each cell ``mean [95% interval] (n)`` in percent."""
    head = "| row | " + " | ".join(label for label, _ in columns) + " |"
    rule = "|---|" + "---|" * len(columns)
    lines = [head, rule]
    for name, summary in rows:
        lines.append(f"| {name} | " + " | ".join(_cell(summary.get(key)) for _, key in columns) + " |")
    return "\n".join(lines) + "\n"
