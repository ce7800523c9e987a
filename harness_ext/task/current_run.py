"""The ``lm_eval`` evaluation in progress: its model object, and the calls a task makes to it early.

lm-eval 0.4.13 builds every request of every task before it calls the model, so a task that needs
model answers to build its requests (a multi-stage task's earlier stages, PairS merge rounds) cannot
get them from lm-eval. This module gives it the model: the autoload hook wraps
``lm_eval.evaluator.evaluate`` with :func:`publish_lm` (the model object is :func:`current_lm` while
it runs; :func:`published` does the same for a block, and placeholder requests are answered without
a model call, :mod:`logic_consistency.harness_ext.task.placeholders`); :func:`start_build` begins such a
task's ``build_all_requests``, and :func:`call_once` sends its early requests to that model.

The early requests go through ``--use_cache`` too, in chunks of :data:`STAGE_CHUNK` that
``CachingLM`` commits one by one, so a run killed half-way resumes from the last finished chunk.
An early request another task already sent in this run is answered from memory; sampled
generations (``do_sample: true``) are never reused. See docs/architecture.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask

from logic_consistency.common import context_value
from logic_consistency.harness_ext.task.base import PromptedTask
from logic_consistency.harness_ext.task.option_scope import refuse_unread_options
from logic_consistency.harness_ext.task.placeholders import answered_here

__all__ = [
    "STAGE_CHUNK",
    "call_once",
    "check_tasks",
    "current_lm",
    "current_run",
    "publish_lm",
    "published",
    "record_device",
    "recording_device",
    "request_key",
    "start_build",
]

eval_logger = logging.getLogger(__name__)


@dataclass
class Evaluation:
    """The evaluation in progress: its model object and the earlier-stage answers it has given."""

    lm: Any
    answers: dict[tuple[str, str], Any] = field(default_factory=dict)
    #: The run's tasks by name (lm-eval's ``task_dict["tasks"]``) and ``evaluate``'s ``limit`` and
    #: ``samples``: what a task needs to prepare the others' earlier stages with its own (one model call
    #: per stage across tasks, :mod:`.multistage`).
    tasks: dict[str, Any] = field(default_factory=dict)
    limit: Any = None
    samples: Mapping[str, Any] | None = None
    #: Ids of the tasks whose earlier stages have run (or are running) in this evaluation.
    prepared: set[int] = field(default_factory=set)


_CURRENT_RUN: contextvars.ContextVar[Evaluation | None] = contextvars.ContextVar("logic_consistency_run", default=None)


@dataclass
class DeviceRecord:
    """Where the run's model weights were (``cpu``, ``cuda:0``; ``None`` for an API model or before any)."""

    device: str | None = None


_DEVICE: contextvars.ContextVar[DeviceRecord | None] = contextvars.ContextVar("logic_consistency_device", default=None)


@contextlib.contextmanager
def recording_device() -> Iterator[DeviceRecord]:
    """While the block runs (one ``simple_evaluate``), :func:`record_device` fills the record it yields:
    the run's own, so that nothing of one run is left for the next."""
    with context_value(_DEVICE, DeviceRecord()) as record:
        yield record


def record_device(lm: Any) -> None:
    """Record the device ``lm``'s loaded weights are on in the run's :func:`recording_device` record (if
    one is open): a run's results publish that device, not the ``--device`` it was given."""
    record = _DEVICE.get()
    if record is None:
        return
    inner = getattr(lm, "lm", lm)  # lm-eval's CachingLM wraps the model
    model = getattr(inner, "model", None)
    device = None if isinstance(model, str) else getattr(model, "device", None)
    record.device = None if device is None else str(device)


@contextlib.contextmanager
def published(
    lm: Any, tasks: Mapping[str, Any] | None = None, limit: Any = None, samples: Mapping[str, Any] | None = None
) -> Iterator[None]:
    """Make ``lm`` the :func:`current_lm`, with an empty memory of answers, while the block runs
    (``tasks``, ``limit`` and ``samples``: the evaluation's, see :func:`current_run`)."""
    with context_value(_CURRENT_RUN, Evaluation(lm, tasks=dict(tasks or {}), limit=limit, samples=samples)):
        yield


def publish_lm(evaluate: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap lm-eval's ``evaluate``: the model object it runs is :func:`current_lm`, and placeholder
    requests never reach it (:func:`~logic_consistency.harness_ext.task.placeholders.answered_here`)."""

    @functools.wraps(evaluate)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        lm = kwargs["lm"] if "lm" in kwargs else (args[0] if args else None)
        task_dict = kwargs["task_dict"] if "task_dict" in kwargs else (args[1] if len(args) > 1 else None)
        check_tasks(lm, task_dict)
        if isinstance(task_dict, Mapping):  # an option no task of the run reads changed nothing: refused
            refuse_unread_options(_tasks_in(task_dict))
        record_device(lm)  # the results publish where the weights are, not the --device given
        tasks = _named_tasks(task_dict)
        limit = kwargs["limit"] if "limit" in kwargs else (args[2] if len(args) > 2 else None)
        samples = kwargs["samples"] if "samples" in kwargs else (args[3] if len(args) > 3 else None)
        with published(lm, tasks, limit, samples), answered_here(lm):
            return evaluate(*args, **kwargs)

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper


def check_tasks(lm: Any, task_dict: Any) -> None:
    """Let a model refuse the run's tasks before any call (its ``check_tasks(tasks)``, if it has one).

    lm-eval calls no model before ``evaluate``, but a multi-stage task calls it while building its
    requests, so this is the last point before the first call where every task is known.
    """
    check = getattr(lm, "check_tasks", None)
    if callable(check) and isinstance(task_dict, Mapping):
        check(_tasks_in(task_dict))


def _tasks_in(task_dict: Mapping[Any, Any]) -> list[Any]:
    """The task objects of lm-eval's task dictionary (``{"groups", "tasks"}``, or the older nesting)."""
    if isinstance(task_dict.get("tasks"), Mapping):
        return list(task_dict["tasks"].values())
    out: list[Any] = []
    for value in task_dict.values():
        out.extend(_tasks_in(value) if isinstance(value, Mapping) else [value])
    return out


def _named_tasks(task_dict: Any) -> dict[str, Any]:
    """lm-eval's ``task_dict["tasks"]`` (name -> task object), or ``{}`` for another layout."""
    if isinstance(task_dict, Mapping) and isinstance(task_dict.get("tasks"), Mapping):
        return dict(task_dict["tasks"])
    return {}


def current_run() -> Evaluation | None:
    """The evaluation in progress (its model, tasks, ``limit`` and ``samples``), or ``None`` outside one."""
    return _CURRENT_RUN.get()


def current_lm() -> Any:
    """The model object of the ``lm_eval`` evaluation in progress, or ``None`` outside one."""
    run = _CURRENT_RUN.get()
    return None if run is None else run.lm


def start_build(
    task: PromptedTask, build_kwargs: dict[str, Any], *, model_needed_for: str | None
) -> tuple[Any, list[tuple[int, dict[str, Any]]]]:
    """The start of ``build_all_requests`` of a task that asks the model while lm-eval builds requests.

    Keeps lm-eval's prompt-formatting settings (:meth:`PromptedTask.remember_formatting`) and lists
    this rank's documents (lm-eval's own ``doc_iterator``: ``limit``, ``samples`` and the rank's
    share under ``accelerate``), before the task's own ``doc_iterator`` serves the prepared ones.

    Args:
        task: The task building its requests.
        build_kwargs: The keyword arguments lm-eval passed to ``build_all_requests``.
        model_needed_for: What the task asks the model for while building (the error names it), or
            ``None`` when it can do without (a one-stage task).

    Returns:
        The published model object (:func:`current_lm`, ``None`` outside an evaluation) and the
        ``(doc_id, doc)`` pairs of this rank.

    Raises:
        RuntimeError: The model is needed and no evaluation published it.
    """
    lm = current_lm()
    if lm is None and model_needed_for is not None:
        raise RuntimeError(
            f"task {task.config.task!r} {model_needed_for} and needs the model object while building "
            "requests: run it with the `lm_eval` command (autoload hook on) or wrap "
            "lm_eval.evaluator.evaluate with logic_consistency.harness_ext.task.current_run.publish_lm"
        )
    task.remember_formatting(build_kwargs)
    docs = ConfigurableTask.doc_iterator(
        task,
        rank=build_kwargs.get("rank", 0),
        limit=build_kwargs.get("limit"),
        samples=build_kwargs.get("samples"),
        world_size=build_kwargs.get("world_size", 1),
    )
    return lm, list(docs)


def request_key(request: Instance) -> tuple[str, str] | None:
    """What makes two requests the same question, or ``None`` for a sampled generation."""
    if request.request_type == "generate_until" and request.args[1].get("do_sample"):
        return None
    return request.request_type, json.dumps(request.args, sort_keys=True, default=repr)


#: Requests per model call of an earlier stage: each chunk's answers reach lm-eval's cache
#: (``--use_cache``) when it returns. Large enough not to starve a batching backend (``hf`` sorts
#: and batches within one call), small enough that a kill loses little work.
STAGE_CHUNK = 128


def _answer_in_chunks(lm: Any, output_type: str, requests: Sequence[Instance]) -> list[Any]:
    """``lm.<output_type>(requests)``, sent :data:`STAGE_CHUNK` requests at a time (see the module docstring)."""
    method = getattr(lm, output_type)
    out: list[Any] = []
    for start in range(0, len(requests), STAGE_CHUNK):
        out.extend(method(list(requests[start : start + STAGE_CHUNK])))
    return out


def call_once(lm: Any, output_type: str, requests: Sequence[Instance]) -> list[Any]:
    """Answer ``requests`` with ``lm``, sending only those not already answered in this run.

    Identical requests within the batch are sent once too. Outside an evaluation started through
    :func:`publish_lm` nothing is remembered.
    """
    run = _CURRENT_RUN.get()
    memory: dict[tuple[str, str], Any] = run.answers if run is not None and run.lm is lm else {}
    keys = [request_key(request) for request in requests]
    to_send = _not_yet_answered(requests, keys, memory)
    out = _answers_in_order(keys, memory, iter(_answer_in_chunks(lm, output_type, to_send)))
    reused = len(requests) - len(to_send)
    if reused:
        eval_logger.info("%d of %d %s requests answered from earlier in this run", reused, len(requests), output_type)
    return out


def _not_yet_answered(
    requests: Sequence[Instance], keys: list[tuple[str, str] | None], memory: Mapping[tuple[str, str], Any]
) -> list[Instance]:
    """The requests to send: each sampled one, and the first of each other question not in ``memory``."""
    to_send: list[Instance] = []
    sent_keys: set[tuple[str, str]] = set()
    for request, key in zip(requests, keys, strict=True):
        if key is None or (key not in memory and key not in sent_keys):
            to_send.append(request)
            if key is not None:
                sent_keys.add(key)
    return to_send


def _answers_in_order(
    keys: list[tuple[str, str] | None], memory: dict[tuple[str, str], Any], answers: Iterator[Any]
) -> list[Any]:
    """Every request's answer, in order: from ``memory``, or the next one sent (then remembered)."""
    out: list[Any] = []
    for key in keys:
        if key is None:
            out.append(next(answers))
        elif key in memory:
            out.append(memory[key])
        else:
            memory[key] = next(answers)
            out.append(memory[key])
    return out
