"""Which lm-eval backend scores a study's rows, and its ``--model`` / ``--model_args``.

Every row (and every GV round's data generation) is an ``lm_eval`` run of the base with the row's
LoRA adapter as ``peft=``, in the dtype the study trains in. The default is the suite's
prefix-sharing ``lc-hf`` (:mod:`logic_consistency.harness_ext.prefix.scorer`): lm-eval's ``hf`` with
log-likelihood scoring that computes each shared prompt prefix once, the same scores within the
tolerance docs/backends.md states, and greedy generations in batches that mix stop strings (the same
texts as ``hf``'s up to a batch's float rounding). ``improve --eval-backend hf`` keeps lm-eval's stock path.

A study evaluates only the suite's own tasks, so each of its ``lm_eval`` runs is started with
``LOGIC_CONSISTENCY_SUITE_TASKS_ONLY=1`` (:func:`lm_eval_environment`): lm-eval then indexes the suite's
task folder alone, not its own ~13,000 task files (the same tasks, seconds less per run).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from logic_consistency.harness_ext.task.loading import ENV_SUITE_TASKS_ONLY

__all__ = ["DEFAULT_EVAL_BACKEND", "EVAL_BACKENDS", "lm_eval_environment", "model_arguments"]

#: The backends a study may score its rows with (the ``eval_backend`` flag's choices).
EVAL_BACKENDS = ("lc-hf", "hf")
DEFAULT_EVAL_BACKEND = "lc-hf"


def model_arguments(backend: str, base: Path, dtype: str, adapter: Path | None) -> list[str]:
    """``--model BACKEND --model_args pretrained=BASE,dtype=DTYPE[,peft=ADAPTER]`` of one row's run.

    Both backends take the same arguments (``lc-hf`` is ``HFLM`` with its scoring replaced), so the
    adapter loads exactly as a user's ``peft=`` does.

    Raises:
        ValueError: ``backend`` is not one of :data:`EVAL_BACKENDS`.
    """
    if backend not in EVAL_BACKENDS:
        raise ValueError(f"--eval-backend: {backend!r} is not one of {', '.join(EVAL_BACKENDS)}")
    model_args = f"pretrained={base},dtype={dtype}"
    if adapter is not None:
        model_args += f",peft={adapter}"
    return ["--model", backend, "--model_args", model_args]


def lm_eval_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """The environment of a study's ``lm_eval`` run: ``environment`` with ``LOGIC_CONSISTENCY_SUITE_TASKS_ONLY=1``.

    The study declares that its run asks for the suite's tasks only, so lm-eval's built-in tasks are not
    indexed (the autoload hook's ``suite_tasks_only``); the tasks, their
    configurations and the results are the same.
    """
    return {**environment, ENV_SUITE_TASKS_ONLY: "1"}
