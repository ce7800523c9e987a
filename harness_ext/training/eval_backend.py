"""Which lm-eval backend scores a study's rows, and its ``--model`` / ``--model_args``.

Every row (and every GV round's data generation) is an ``lm_eval`` run of the base with the row's
LoRA adapter as ``peft=``, in the dtype the study trains in. The default is the suite's
prefix-sharing ``lc-hf`` (:mod:`logic_consistency.harness_ext.prefix.scorer`): lm-eval's ``hf`` with
log-likelihood scoring that computes each shared prompt prefix once, the same scores within the
tolerance docs/backends.md states, and greedy generations in batches that mix stop strings (the same
texts as ``hf``'s up to a batch's float rounding). ``improve --eval-backend hf`` keeps lm-eval's stock path.

A study evaluates only the suite's own tasks, so each of its ``lm_eval`` runs declares
``suite_tasks_only`` (:meth:`.study_eval.LmEvalRun.lm_eval`): lm-eval then indexes the suite's task folder
alone, not its own ~13,000 task files (the same tasks, seconds less per run).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_EVAL_BACKEND", "EVAL_BACKENDS", "model_arguments"]

#: The backends a study may score its rows with (the ``eval_backend`` flag's choices).
EVAL_BACKENDS = ("lc-hf", "hf")
DEFAULT_EVAL_BACKEND = "lc-hf"


def model_arguments(backend: str, base: Path, dtype: str, adapter: Path | None) -> tuple[str, str]:
    """``(BACKEND, "pretrained=BASE,dtype=DTYPE[,peft=ADAPTER]")``: ``--model`` and ``--model_args`` of one row's run.

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
    return backend, model_args
