"""The one description of an ``lm_eval`` run the suite starts (:class:`LmEvalCommand`): its command line,
the line its log shows (public model arguments only, :func:`.allowlist.public_model_args`) and its
environment, each built here and nowhere else, for a board unit (whole or a shard), a study's row, a GV
round's data generation and a transfer family alike.

Its environment is declared: a run switch (:data:`RUN_SWITCHES`) is set from the description alone, never
inherited (``LOGIC_CONSISTENCY_SHARD=0/2`` left in the shell would otherwise run a study's row on half its
documents); a user's setting (:data:`PASSED_SETTINGS`) passes as it is; any other ``LOGIC_CONSISTENCY_*``
variable is dropped until it is declared here (``tests/harness_ext/test_lm_eval_command.py`` holds every
such name in the package to the two tables).

It sits in ``publish/``, the lowest room that sees all it declares: the shard's switches (``shards/``),
the suite-tasks switch (``task/``) and the public projection of model arguments (here); the board and
the improve wing both stand above it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.jobs.processes import default_lm_eval
from logic_consistency.harness_ext.shards.shard import ENV_BUILD, ENV_METRICS, ENV_SHARD, Shard
from logic_consistency.harness_ext.task.data_files import READ_LOG_ENV
from logic_consistency.harness_ext.task.loading import ENV_SUITE_TASKS_ONLY

from . import failure_facts
from .allowlist import public_metadata, public_model_args

__all__ = [
    "PASSED_SETTINGS",
    "RUN_SWITCHES",
    "SHARD_METRICS_FILE",
    "SUITE_PREFIX",
    "LmEvalCommand",
    "child_environment",
]

#: The prefix of the suite's own environment variables.
SUITE_PREFIX = "LOGIC_CONSISTENCY_"

#: The switches a run sets from its description alone (never inherited), and what each says.
RUN_SWITCHES: Mapping[str, str] = {
    ENV_SHARD: "the shard a board unit evaluates (i/N); unset: every document",
    ENV_METRICS: "where a shard writes its per-document metric values",
    ENV_BUILD: "the build a shard belongs to (its results' mark; a merge refuses a mix)",
    ENV_SUITE_TASKS_ONLY: "a run of the suite's tasks only (a study's): lm-eval's own task files are not indexed",
    READ_LOG_ENV: "where a study's evaluation lists the data files its tasks read (its done marker hashes them)",
    failure_facts.ENV_FAILURE_FILE: "where the run records the exception it ended with (publish/failure_facts.py)",
}

#: The user's settings a child inherits as they are (where things are, not what is evaluated), and why.
PASSED_SETTINGS: Mapping[str, str] = {
    "LOGIC_CONSISTENCY_DATA": "where the datasets are (tasks/data/_source.py)",
    "LOGIC_CONSISTENCY_CACHE": "where the embedded models are converted (harness_ext/models/embedded.py)",
    "LOGIC_CONSISTENCY_AUTOLOAD": "whether the autoload hook is on (harness_ext/autoload.py)",
    "LOGIC_CONSISTENCY_SECRET_VARIABLES": "which variables hold secrets, to redact (credentials.py)",
    "LOGIC_CONSISTENCY_BUILD_MARK": "a build's mark: its descendants stay marked, so a takeover ends them "
    "(leaderboard/run/descendants.py; jobs.processes.CHILD_MARKS adds this process's own)",
}

#: The file a shard's per-document metric values go to, in its output folder (JSON, never pickle).
SHARD_METRICS_FILE = "shard_metrics.json"


def child_environment(
    base: Mapping[str, str], extra: Mapping[str, str] | None = None, switches: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a child that loads the suite's tasks: ``base`` (this process's or a node's), then
    ``extra`` (a model list's ``env``, the driver's credentials), every ``LOGIC_CONSISTENCY_*`` variable of
    both dropped but :data:`PASSED_SETTINGS`, then ``switches`` (the run's own, each one of :data:`RUN_SWITCHES`).

    Raises:
        ValueError: A switch is not declared in :data:`RUN_SWITCHES`.
    """
    undeclared = sorted(set(switches or {}) - set(RUN_SWITCHES))
    if undeclared:
        raise ValueError(f"undeclared run switches {undeclared}: declare them in RUN_SWITCHES")
    inherited = {**base, **(extra or {})}
    kept = {k: v for k, v in inherited.items() if not k.startswith(SUITE_PREFIX) or k in PASSED_SETTINGS}
    return {**kept, **(switches or {})}


def _limit(limit: float) -> str:
    """``--limit``'s text: an integer as one (``2``), a fraction as it is (``0.5``)."""
    return f"{int(limit)}" if float(limit).is_integer() else f"{limit}"


@dataclass(frozen=True)
class LmEvalCommand:
    """One ``lm_eval`` run the suite starts (picklable: a board unit may run on a Ray worker).

    Attributes:
        model: ``--model``, the backend.
        model_args: ``--model_args`` as given (private: credentials are refused before, paths kept);
            the log shows :meth:`shown` instead.
        tasks: ``--tasks``.
        output_path: ``--output_path`` (samples are always logged: ``--log_samples``).
        lm_eval: The executable (default: the one beside this Python).
        metadata: ``--metadata`` as JSON (``None``: not given; a study gives ``{}``).
        batch_size: ``--batch_size`` (``None``: lm-eval's default).
        limit: ``--limit`` (``None``: every document).
        apply_chat_template: ``--apply_chat_template``.
        gen_kwargs: ``--gen_kwargs`` (``None``: the task's own).
        use_cache: ``--use_cache``, the request cache (``None``: none).
        extra_args: lm-eval options a model list adds, checked before (``leaderboard/run/extra_args.py``).
        shard: The shard this run evaluates (``None``: every document; the shell's value never reaches it).
        build_id: The build a shard belongs to.
        suite_tasks_only: Only the suite's tasks are asked for (a study's runs).
        data_read_log: The file the run lists each local data file its tasks read in (a study's
            evaluation: ``training/data_read.py``; ``None``: not listed).
        env: What the run gets over its node's environment (a model list's ``env``, the driver's credential
            variables; in memory only, never printed: ``repr=False``).
    """

    model: str
    model_args: str
    tasks: str
    output_path: Path
    lm_eval: str = field(default_factory=default_lm_eval)
    metadata: Mapping[str, Any] | None = None
    batch_size: str | None = None
    limit: float | None = None
    apply_chat_template: bool = False
    gen_kwargs: str | None = None
    use_cache: Path | None = None
    extra_args: tuple[str, ...] = ()
    shard: Shard | None = None
    build_id: str = ""
    suite_tasks_only: bool = False
    data_read_log: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict, repr=False)

    def argv(self) -> list[str]:
        """The command line to run."""
        return self._argv(self.model_args)

    def shown(self) -> list[str]:
        """The command line as a log shows it: only the public model arguments and the declared options of
        ``--metadata`` (publish by allowlist: an undeclared nested value never reaches a run folder's log)."""
        metadata = None if self.metadata is None else public_metadata(self.metadata).value
        return self._argv(public_model_args(self.model, self.model_args).value or "", metadata=metadata)

    def results_argv(self) -> list[str]:
        """The command line but where it runs from and where it writes (the executable's path,
        ``--output_path``): what its results depend on (a study's evaluation stamp)."""
        return self._argv(self.model_args, placed=False)

    def _argv(self, model_args: str, *, placed: bool = True, metadata: Mapping[str, Any] | None = None) -> list[str]:
        """The command line with ``model_args`` and ``metadata`` (default: :attr:`metadata`); ``placed``: with
        the executable and ``--output_path``."""
        command = [self.lm_eval] if placed else []
        command += self._what(model_args, self.metadata if metadata is None else metadata)
        return command + self._how(placed) + list(self.extra_args)

    def _what(self, model_args: str, metadata: Mapping[str, Any] | None) -> list[str]:
        """What is run: the model, its arguments, the tasks and their ``--metadata``."""
        command = ["--model", self.model]
        command += ["--model_args", model_args] if model_args else []
        command += ["--tasks", self.tasks]
        return command + (["--metadata", json.dumps(dict(metadata), sort_keys=True)] if metadata is not None else [])

    def _how(self, placed: bool) -> list[str]:
        """How it runs: batch size, output folder (``placed``), samples, limit, chat template, generation, cache."""
        command = ["--batch_size", self.batch_size] if self.batch_size is not None else []
        command += ["--output_path", str(self.output_path)] if placed else []
        command.append("--log_samples")
        command += ["--limit", _limit(self.limit)] if self.limit is not None else []
        command += ["--apply_chat_template"] if self.apply_chat_template else []
        command += ["--gen_kwargs", self.gen_kwargs] if self.gen_kwargs else []
        return command + (["--use_cache", str(self.use_cache)] if self.use_cache is not None else [])

    def switches(self) -> dict[str, str]:
        """The run switches this run sets (:data:`RUN_SWITCHES`); every other one is unset in its child."""
        switches = {ENV_SUITE_TASKS_ONLY: "1"} if self.suite_tasks_only else {}
        # its failure's facts, recorded by lm_eval's own process in its own folder (never read from its output)
        switches[failure_facts.ENV_FAILURE_FILE] = str(self.output_path / failure_facts.FAILURE_FILE)
        if self.shard is not None:
            switches[ENV_SHARD] = str(self.shard)
            switches[ENV_METRICS] = str(self.output_path / SHARD_METRICS_FILE)
            switches[ENV_BUILD] = self.build_id
        if self.data_read_log is not None:
            switches[READ_LOG_ENV] = str(self.data_read_log.absolute())
        return switches

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The child's environment: ``base`` (the node's), then :attr:`env`, then :meth:`switches`
        (:func:`child_environment`)."""
        return child_environment(base, self.env, self.switches())
