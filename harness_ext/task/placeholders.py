"""Placeholder requests: lm-eval needs one request per document, but some documents need no answer.

lm-eval 0.4.13 scores a document from the requests it built for it, so every document must carry
at least one. Some documents have nothing left to ask (PairS asked every comparison in its merge
rounds, self-agreement sampled every judgement, a two-stage document's earlier stage was
unparseable); each carries one *placeholder* (:func:`placeholder`, a :class:`PlaceholderInstance`)
whose answer is ignored, and which must never reach a model, on any backend (a paid endpoint would
bill it; ``lc-chat`` would refuse the repeated context).

While ``lm_eval.evaluator.evaluate`` runs, :func:`answered_here` wraps the model object lm-eval was
given (``CachingLM`` or the backend): its request methods answer the placeholders with
:data:`FIXED_ANSWERS` and send the model only the rest (no call when nothing is left). The cost plan
leaves them out of its counts. Filtering at the model call keeps lm-eval's own bookkeeping intact:
the document still has its one request. See docs/architecture.md.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lm_eval.api.instance import Instance

__all__ = ["FIXED_ANSWERS", "PlaceholderInstance", "answered_here", "is_placeholder", "placeholder"]

#: The answer a placeholder gets, by request type (ignored by the task that built it).
FIXED_ANSWERS: dict[str, Any] = {
    "loglikelihood": (0.0, False),
    "generate_until": "",
    "loglikelihood_rolling": 0.0,
}


class PlaceholderInstance(Instance):  # type: ignore[misc]  # lm-eval ships no type information
    """A request whose answer is ignored: answered with :data:`FIXED_ANSWERS`, never by the model."""


def placeholder(request_type: str, doc: dict[str, Any], context: Any, metadata: tuple[Any, ...]) -> Instance:
    """The one request of a document that needs no answer (see the module docstring).

    Args:
        request_type: The task's lm-eval output type (``loglikelihood`` or ``generate_until``).
        doc: The document.
        context: The prompt shown in the sample log (never sent).
        metadata: lm-eval's ``(task, doc_id, repeats)``.
    """
    if request_type not in FIXED_ANSWERS:
        raise ValueError(f"placeholder request_type must be one of {sorted(FIXED_ANSWERS)}, got {request_type!r}")
    second: Any = {"until": ["\n"], "max_gen_toks": 1, "do_sample": False} if request_type == "generate_until" else " ."
    arguments = (context,) if request_type == "loglikelihood_rolling" else (context, second)
    return PlaceholderInstance(request_type, doc, arguments, 0, metadata)


def is_placeholder(request: object) -> bool:
    """Whether ``request`` is a placeholder, answered without the model."""
    return isinstance(request, PlaceholderInstance)


def _skipping_placeholders(request_type: str, method: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    @functools.wraps(method)
    def call(requests: Sequence[Any], *args: Any, **kwargs: Any) -> list[Any]:
        real = [request for request in requests if not is_placeholder(request)]
        if len(real) == len(requests):
            return method(requests, *args, **kwargs)
        answers = iter(method(real, *args, **kwargs) if real else [])
        return [FIXED_ANSWERS[request_type] if is_placeholder(r) else next(answers) for r in requests]

    return call


@contextlib.contextmanager
def answered_here(lm: Any) -> Iterator[None]:
    """While the block runs, ``lm``'s request methods answer placeholders themselves (module docstring).

    Only methods ``lm`` has are wrapped; each is restored afterwards (an attribute set on the
    instance is removed, a pre-existing one put back).
    """
    saved: dict[str, tuple[bool, Any]] = {}
    if lm is not None:
        for request_type in FIXED_ANSWERS:
            try:
                method = getattr(lm, request_type)
            except (AttributeError, NotImplementedError):
                continue
            if not callable(method):
                continue
            own = vars(lm).get(request_type) if hasattr(lm, "__dict__") else None
            saved[request_type] = (own is not None, own)
            setattr(lm, request_type, _skipping_placeholders(request_type, method))
    try:
        yield
    finally:
        for request_type, (had_own, own) in saved.items():
            if had_own:
                setattr(lm, request_type, own)
            else:
                delattr(lm, request_type)
