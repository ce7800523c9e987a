"""Collect the log-likelihood requests an lm-eval run would send, to score them again elsewhere.

The prefix-sharing scorer is checked and benchmarked against lm-eval's stock ``HFLM`` on the very
requests a real run makes (pairwise prompts, the GV validator, CTP effect sentences, after the
earlier stages and the chat template). :func:`capture_loglikelihood_requests` runs
``lm_eval.simple_evaluate`` with a model whose ``loglikelihood`` only records its requests; earlier
stages (generation) run for real on the same model, so the recorded prompts are the ones a real run
scores. The placeholder answers the recorder returns are discarded with the run's results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from lm_eval.api.instance import Instance

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack is 3.11+; the suite supports 3.10


class EvaluateOptions(TypedDict, total=False):
    """The ``lm_eval.simple_evaluate`` arguments a capture passes on (lm-eval's defaults where absent).

    Attributes:
        limit: lm-eval's ``--limit``.
        metadata: lm-eval's ``--metadata`` (task options such as ``max_items``).
        apply_chat_template: lm-eval's ``--apply_chat_template``.
    """

    limit: int | None
    metadata: dict[str, Any] | None
    apply_chat_template: bool


def capture_loglikelihood_requests(
    lm: Any, *, tasks: list[str], **options: Unpack[EvaluateOptions]
) -> list[tuple[str, str]]:
    """Return the ``(context, continuation)`` pairs ``tasks`` would score on ``lm``, in request order.

    Args:
        lm: An lm-eval model object (its ``generate_until`` serves earlier stages).
        tasks: Task or group names.
        options: lm-eval's options of the run (:class:`EvaluateOptions`).
    """
    from lm_eval import evaluator

    captured: list[tuple[str, str]] = []

    def record(requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        captured.extend(tuple(request.args) for request in requests)
        return [(-1.0, False)] * len(requests)

    lm.loglikelihood = record
    try:
        evaluator.simple_evaluate(model=lm, tasks=tasks, log_samples=False, bootstrap_iters=0, **options)
    finally:
        del lm.loglikelihood
    return captured


def as_instances(pairs: list[tuple[str, str]]) -> list[Instance]:
    """Wrap ``(context, continuation)`` pairs as lm-eval log-likelihood requests."""
    return [Instance(request_type="loglikelihood", doc={}, arguments=pair, idx=i) for i, pair in enumerate(pairs)]
