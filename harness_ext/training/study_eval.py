"""A study's ``lm_eval`` runs: a row's evaluation (its adapter on its base, in the dtype it trained in, at
the study's slice) as the suite's one run description
(:class:`~logic_consistency.harness_ext.publish.lm_eval_command.LmEvalCommand`), started as every child
of the suite is (:mod:`..jobs.processes`), and kept once finished for the same row, command and weights.

Every row, every GV round's data generation and every transfer family runs through :func:`run_lm_eval`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from logic_consistency.common import find_files
from logic_consistency.harness_ext.jobs.processes import run_logged
from logic_consistency.harness_ext.publish.lm_eval_command import LmEvalCommand
from logic_consistency.outputs import atomic_write

from .data_read import READ_LOG, done_marker, is_current
from .eval_backend import DEFAULT_EVAL_BACKEND, model_arguments
from .study_options import StudyOptions

__all__ = ["LmEvalRun", "evaluation_stamp", "run_lm_eval"]


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

    def lm_eval(self) -> LmEvalCommand:
        """The run as the suite's one ``lm_eval`` run description: the row's model
        (:func:`.eval_backend.model_arguments`: the adapter loads as a user's ``peft=`` does), the suite's
        tasks only, the data files its tasks read listed in its folder's :data:`.data_read.READ_LOG`, and
        no run switch of the shell (a ``LOGIC_CONSISTENCY_SHARD`` left there never makes a row of a fraction
        of its documents)."""
        model, model_args = model_arguments(self.backend, self.base, self.dtype, self.adapter)
        return LmEvalCommand(model=model, model_args=model_args, tasks=self.tasks, output_path=self.out,
                             metadata=dict(self.metadata), batch_size=self.batch_size, limit=self.limit,
                             apply_chat_template=self.apply_chat_template, gen_kwargs=self.gen_kwargs,
                             suite_tasks_only=True, data_read_log=self.out / READ_LOG)  # fmt: skip

    def command(self) -> list[str]:
        """The command line (:meth:`lm_eval`'s)."""
        return self.lm_eval().argv()


def evaluation_stamp(run: LmEvalRun) -> str:
    """What a finished evaluation was made for (its ``done`` marker): the SHA-256 of its command but
    where it writes, its adapter's weights and the identity of the row it measures."""
    command = run.lm_eval().results_argv()  # not the lm_eval path (another checkout), nor where it writes
    weights = sorted(run.adapter.glob("*.safetensors")) if run.adapter is not None else []
    adapter = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in weights}
    document = {"command": command, "adapter": adapter, "identity": dict(run.row_identity)}
    return hashlib.sha256(json.dumps(document, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def run_lm_eval(run: LmEvalRun, *, label: str, timeout: float | None = None) -> list[Path]:
    """Run ``lm_eval`` and return its samples files.

    The run writes into ``<out>.partial`` (log appended to its ``lm_eval.log``), which is renamed to
    ``<out>`` once it has ended well, its ``done`` marker holding :func:`evaluation_stamp` and the hash of
    the test data it read (:mod:`.data_read`): a stop at any point leaves no finished-looking evaluation.
    A finished run is kept only for the same stamp and data (a rerun with other flags, another chat
    template, other weights or another copy of the datasets evaluates again). The child is started the one
    way the suite starts children (:func:`~logic_consistency.harness_ext.jobs.processes.run_logged`):
    its own process group, killed by the kernel when the study dies, stopped past ``timeout`` seconds
    (``None``: no limit) and before a stop (Ctrl-C, SIGTERM) is re-raised, credentials of the
    environment redacted from its log.

    Raises:
        RuntimeError: lm_eval failed or timed out (naming ``label`` and the log, with its last lines).
    """
    stamp = evaluation_stamp(run)
    done = run.out / "done"
    if done.is_file() and not is_current(done, stamp):
        print(f"logic-consistency improve: {run.out}: made for another row, command, adapter or test data; "
              "evaluating again", file=sys.stderr)  # fmt: skip
        shutil.rmtree(run.out)
    if not done.is_file():
        work = run.out.with_name(f"{run.out.name}.partial")
        work.mkdir(parents=True, exist_ok=True)
        # An unfinished earlier try may have written its samples before failing (lm_eval saves them
        # before it prints its table): left there, they would be read twice beside this try's.
        for stale in [*find_files(work, "samples_*.jsonl"), *find_files(work, "results_*.json"), work / READ_LOG]:
            stale.unlink(missing_ok=True)
        log = work / "lm_eval.log"
        described = replace(run, out=work)
        child = described.lm_eval()  # its environment declared: the suite's tasks only, the data read listed
        env, shown = child.environment(os.environ), child.shown()
        ended = run_logged(described.command(), log_file=log, env=env, timeout=timeout, shown=shown)
        if ended.returncode != 0:
            why = f"timed out after {timeout:g} s" if ended.timed_out else f"exit {ended.returncode}"
            tail = ended.stderr_tail.splitlines()[-8:]
            raise RuntimeError(f"{label}: lm_eval failed ({why}); log {log}:\n" + "\n".join(tail))
        atomic_write(work / "done", [done_marker(stamp, work)])  # the stamp and the test data read, by content
        if run.out.exists():
            shutil.rmtree(run.out)
        os.replace(work, run.out)
    return find_files(run.out, "samples_*.jsonl")
