"""Who runs the build's units: the :class:`Executor` protocol and its local peer.

As vLLM has one executor base with peer implementations, a build has one protocol: ``run(specs,
settings, log=...)`` returns one :class:`~.runner.RunOutcome` per model, in order. Every executor
runs a model the same way (:mod:`.units`): :func:`~.units.plan_model`, then
:func:`~.units.execute` per unit, then :func:`~.units.finish_model` on the driver (store, redact,
merge, ingest). :class:`LocalExecutor` runs the units one after another on this machine;
:class:`~.ray_executor.RayExecutor` runs each as a Ray task.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from tqdm.auto import tqdm

from .modellist import ModelSpec
from .runner import RunOutcome, RunSettings
from .units import ModelRun, plan_model, run_locally

__all__ = ["Executor", "LocalExecutor", "outcome_line"]


class Executor(Protocol):
    """Runs every model of a build (see the module docstring)."""

    def run(self, specs: Sequence[ModelSpec], settings: RunSettings, *, log: Callable[[str], None]) -> list[RunOutcome]:
        """One outcome per model of ``specs``, in that order; never raises for a failing model.

        Raises:
            KeyboardInterrupt, BuildStopped: A stop; every unit is stopped first.
        """
        ...


def outcome_line(outcome: RunOutcome, night: str, where: str) -> str:
    """The build's status line of one model."""
    error = outcome.failure["error"] if outcome.failure is not None else None
    status = "ok" if error is None else f"FAILED [{error['code']}]: {error['message']}"
    return f"[{night}] {outcome.spec.name}: {status} ({outcome.seconds:.0f} s; {where})"


@dataclass(frozen=True)
class LocalExecutor:
    """Runs the models one after another in this machine, a sharded model's shards one by one.

    Attributes:
        progress: tqdm bar over models (``None``: only on a terminal).
    """

    progress: bool | None = None

    def run(
        self, specs: Sequence[ModelSpec], settings: RunSettings, *, log: Callable[[str], None] = lambda _: None
    ) -> list[RunOutcome]:
        """Run each model's units here (see :class:`Executor`)."""
        outcomes = []
        disable = None if self.progress is None else not self.progress
        with tqdm(list(specs), desc=f"night {settings.night}", unit="model", disable=disable) as bar:
            for spec in bar:
                bar.set_postfix_str(f"{spec.name}: starting", refresh=True)
                last = [0.0]

                def show(line: str, name: str = spec.name, last: list[float] = last) -> None:
                    now = time.monotonic()
                    if now - last[0] > 0.5:
                        last[0] = now
                        bar.set_postfix_str(f"{name}: {line.strip()[-60:]}", refresh=True)

                planned = plan_model(spec, settings, local=True)
                outcome = run_locally(planned, settings, on_output=show) if isinstance(planned, ModelRun) else planned
                outcomes.append(outcome)
                log(outcome_line(outcome, settings.night, f"log {outcome.log_file}"))
        return outcomes
