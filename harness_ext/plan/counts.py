"""Cost plan: what an ``lm_eval`` run of some tasks would ask a model, counted without any model.

Every task's requests are built as ``lm_eval.evaluator.evaluate`` builds them, with a *recorder*
for the model that records each request and answers a placeholder (empty text, a seeded random
log-likelihood). First stages and samples are counted exactly; PairS rounds as one simulated run
with a random judge. A later stage needs real answers, so it is replaced by a *bound* from its
definition (``len(prompts)`` per document, or a hook's :func:`prompts_per_document`; an undeclared
hook is unknown, never guessed). Their prompt tokens are an upper bound (``≤``): each document's
later prompt rendered by the task's own hook and chat template, each quoted earlier answer at its
stage's ``max_gen_toks`` (:func:`.bounds.bounded_prompts`); where a hook reads structured answers, an
estimate (``≈``): the mean first-stage prompt plus the earlier answers at their bound. Tokens are
counted with a named tokenizer (the embedded SmolLM2 one by default), each distinct context once. A
task's ``cost_plan_notes(docs)`` adds its own lines; this module knows no task family.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lm_eval.api.instance import Instance

from logic_consistency.harness_ext.chat.choice_reading import is_single_choice
from logic_consistency.harness_ext.models.embedded import EMBEDDED_MODELS, resolve
from logic_consistency.harness_ext.shards.shard import ENV_SHARD, Shard, evaluated_docs
from logic_consistency.harness_ext.task import current_run, multistage
from logic_consistency.harness_ext.task.loading import load_tasks
from logic_consistency.harness_ext.task.placeholders import is_placeholder

from .bounds import DEFAULT_MAX_GEN_TOKS, bounded_prompts

#: Attribute a stage hook carries to declare its prompts per document (see :func:`prompts_per_document`).
PROMPTS_ATTRIBUTE = "logic_consistency_prompts_per_document"
#: Name of the optional task method that adds task-specific lines to the plan.
NOTES_METHOD = "cost_plan_notes"
_Hook = TypeVar("_Hook", bound=Callable[..., Any])


def prompts_per_document(count: int) -> Callable[[_Hook], _Hook]:
    """Declare how many prompts a stage's ``prompts`` hook returns per document (the plan's bound)."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")

    def declare(hook: _Hook) -> _Hook:
        setattr(hook, PROMPTS_ATTRIBUTE, count)
        return hook

    return declare


class RecordingLM:
    """Stands in for the model while tasks build requests: records every request, answers placeholders."""

    rank = 0
    world_size = 1

    def __init__(self, *, seed: int = 0, tokenizer: Any = None) -> None:
        self.requests: list[Instance] = []
        self._random = random.Random(seed)
        self._tokenizer = tokenizer
        self.tokenizer_name = getattr(tokenizer, "name_or_path", "")

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:  # noqa: D102
        self.requests.extend(requests)
        return [""] * len(requests)

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:  # noqa: D102
        self.requests.extend(requests)
        return [(-self._random.random(), False) for _ in requests]

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:  # noqa: D102
        self.requests.extend(requests)
        return [-1.0] * len(requests)

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        """The tokenizer's chat template, as lm-eval's ``hf`` backend applies it."""
        if self._tokenizer is None:
            raise ValueError("--apply_chat_template needs a tokenizer with a chat template")
        return str(
            self._tokenizer.apply_chat_template(
                chat_history,
                tokenize=False,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=not add_generation_prompt,
            )
        )


@dataclass
class Tally:
    """Requests of one request type in one part of a task (built exactly, or a later-stage bound)."""

    requests: int = 0
    contexts: set[str] = field(default_factory=set)
    #: Contexts whose log-likelihood continuations are not all single words (not one chat call).
    multi_token_contexts: set[str] = field(default_factory=set)
    #: Tokens of every request's context (a generation request is one call each).
    request_tokens: int = 0
    #: Tokens of the distinct contexts (what one call per context sends).
    distinct_tokens: int = 0
    #: Sum of ``max_gen_toks`` over generation requests.
    generated_tokens: int = 0
    _contexts_per_request: list[str] = field(default_factory=list, repr=False)

    def add(self, request: Instance) -> None:
        """Count one request (its tokens are counted later, in one batch per plan)."""
        context, second = request.args[0], request.args[1] if len(request.args) > 1 else None
        context = str(context)
        self.requests += 1
        self.contexts.add(context)
        self._contexts_per_request.append(context)
        if request.request_type == "generate_until":
            self.generated_tokens += int((second or {}).get("max_gen_toks", DEFAULT_MAX_GEN_TOKS))
        elif request.request_type == "loglikelihood" and not is_single_choice(str(second)):
            self.multi_token_contexts.add(context)


@dataclass
class StageBound:
    """A later stage of a multi-stage task: request bound and token bound or estimate (answers unknown)."""

    stage: str
    request_type: str
    requests: int | None  # None: the stage's hook declares no count
    contexts: int | None
    #: Prompt tokens: an upper bound when ``bounded`` is set (``≤``), else an estimate (``≈``).
    context_tokens_estimate: int | None
    generated_tokens: int
    #: Whether each prompt is scored on single-word choices (one ``lc-chat`` call per prompt).
    single_choice: bool = True
    #: Each later prompt with its quoted earlier answers taken out, and the tokens those answers add
    #: at their generation bound (:func:`bounded_prompts`); ``None``: the stage could not be rendered so.
    bounded: list[tuple[str, int]] | None = None


@dataclass
class TaskPlan:
    """Everything the plan reports for one task."""

    task: str
    documents: int
    #: Requests asked while the task built its requests (earlier stages, samples, PairS rounds).
    building: dict[str, Tally] = field(default_factory=dict)
    #: The task's final requests (lm-eval's own batch), later stages of multi-stage tasks excluded.
    final: dict[str, Tally] = field(default_factory=dict)
    later_stages: list[StageBound] = field(default_factory=list)
    notes: list[tuple[str, Any]] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    #: Requests of ``building`` that an earlier task of the plan already asked: one ``lm_eval`` run
    #: sends them once (:func:`~logic_consistency.harness_ext.task.current_run.call_once`), so totals drop them.
    repeated: dict[str, Tally] = field(default_factory=dict)


def load_tokenizer(name: str) -> Any:
    """An embedded model's tokenizer by name, or a local tokenizer folder (never the hub)."""
    from transformers import AutoTokenizer

    path = str(resolve(name)) if name in EMBEDDED_MODELS else name
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as error:  # ValueError: a folder whose files make no tokenizer
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(
            f"--tokenizer {name!r}: neither an embedded model ({', '.join(EMBEDDED_MODELS)}) "
            f"nor a local tokenizer folder ({first})"
        ) from error


def plan_tasks(
    tasks: Sequence[str],
    *,
    limit: float | None = None,
    metadata: dict[str, Any] | None = None,
    apply_chat_template: bool = False,
    system_instruction: str | None = None,
    fewshot_as_multiturn: bool = False,
    tokenizer: Any,
    seed: int = 0,
    timings: dict[str, float] | None = None,
    shard: Shard | None = None,
) -> list[TaskPlan]:
    """Build every task's requests with a recorder for the model and count them (see the module docstring).

    Args:
        tasks: Task, group or tag names (``lm_eval --tasks``).
        limit: ``--limit`` (a count, or a fraction below 1).
        metadata: ``--metadata``.
        apply_chat_template, system_instruction, fewshot_as_multiturn: lm-eval's formatting flags.
        tokenizer: A transformers tokenizer, or a name for :func:`load_tokenizer` (loaded after
            the tasks, so that a bad task name fails fast); used for the chat template and the counts.
        seed: Seed of the recorder's random log-likelihoods (PairS simulation).
        timings: If given, receives the seconds spent loading tasks, building requests and counting tokens.
        shard: Plan only this shard's share, as a run under ``LOGIC_CONSISTENCY_SHARD`` builds it.
    """
    from lm_eval.evaluator_utils import get_sample_size

    if limit is not None and limit <= 0:
        raise ValueError(f"--limit must be > 0, got {limit}")
    plans: list[TaskPlan] = []
    asked: set[tuple[str, str]] = set()
    clock = {"start": time.perf_counter()}
    loaded = load_tasks(tasks, metadata)
    if isinstance(tokenizer, str):
        tokenizer = load_tokenizer(tokenizer)
    clock["loaded"] = time.perf_counter()
    for name, task in loaded.items():
        if shard is not None and not shard.size(evaluated_docs(name, task, limit, None)):
            plans.append(TaskPlan(task=name, documents=0))  # lm-eval finds no document here: nothing to send
            continue
        recorder = RecordingLM(seed=seed, tokenizer=tokenizer)
        with _quiet_stage_logs(), current_run.published(recorder), _as_shard(shard):
            task.build_all_requests(
                limit=get_sample_size(task, limit),
                rank=0,
                world_size=1,
                cache_requests=False,
                system_instruction=system_instruction,
                apply_chat_template=apply_chat_template,
                fewshot_as_multiturn=fewshot_as_multiturn,
                chat_template=recorder.apply_chat_template if apply_chat_template else None,
                tokenizer_name=recorder.tokenizer_name if apply_chat_template else "",
            )
        plan = _plan_one(name, task, recorder.requests)
        plan.repeated = _repeated(recorder.requests, asked)
        plans.append(plan)
    clock["built"] = time.perf_counter()
    count_tokens(plans, tokenizer)
    if timings is not None:
        timings.update(
            load_tasks_and_tokenizer=clock["loaded"] - clock["start"],
            build_requests=clock["built"] - clock["loaded"],
            count_tokens=time.perf_counter() - clock["built"],
        )
    return plans


def _repeated(requests: list[Instance], asked: set[tuple[str, str]]) -> dict[str, Tally]:
    """The tally of ``requests`` an earlier task of the plan already asked; ``asked`` gains the rest."""
    keys = [current_run.request_key(request) for request in requests]
    repeated = _tally(r for r, key in zip(requests, keys, strict=True) if key is not None and key in asked)
    asked.update(key for key in keys if key is not None)
    return repeated


@contextlib.contextmanager
def _quiet_stage_logs() -> Iterator[None]:
    """The multi-stage and run loggers at ERROR while the block runs: the recorder's placeholder answers
    block every later stage, and repeated requests are counted by the plan itself (no news here)."""
    quiet = (multistage.eval_logger, current_run.eval_logger)
    levels = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(quiet, levels, strict=True):
            logger.setLevel(level)


@contextlib.contextmanager
def _as_shard(shard: Shard | None) -> Iterator[None]:
    """Build as shard ``shard`` would (``LOGIC_CONSISTENCY_SHARD``, read by the wrapped ``doc_iterator``)."""
    if shard is None:
        yield
        return
    previous = os.environ.get(ENV_SHARD)
    os.environ[ENV_SHARD] = str(shard)
    try:
        yield
    finally:
        if previous is None:
            del os.environ[ENV_SHARD]
        else:
            os.environ[ENV_SHARD] = previous


def _tally(requests: Iterable[Instance], *, repeats: bool = False) -> dict[str, Tally]:
    out: dict[str, Tally] = {}
    for request in requests:
        for _ in range(request.repeats if repeats else 1):
            out.setdefault(request.request_type, Tally()).add(request)
    return out


def _plan_one(name: str, task: Any, recorded: list[Instance]) -> TaskPlan:
    instances = list(task.instances)
    docs = {instance.doc_id: instance.doc for instance in instances}
    plan = TaskPlan(task=name, documents=len(docs), building=_tally(recorded))
    if isinstance(task, multistage.MultiStageTask) and len(task.stages) > 1:
        # the recorded run's last stage is a placeholder per document: replace it by bounds
        plan.later_stages = _later_stage_bounds(task, len(docs))
        for index, bound in enumerate(plan.later_stages, start=1):
            bound.bounded = bounded_prompts(task, index, list(docs.values()))
    else:
        # placeholders are answered without a model call (placeholders.py): they cost nothing
        plan.final = _tally((i for i in instances if not is_placeholder(i)), repeats=True)
    notes = getattr(task, NOTES_METHOD, None)
    if callable(notes):
        plan.notes = list(notes(list(docs.values())))
    return plan


def _later_stage_bounds(task: Any, documents: int) -> list[StageBound]:
    """Bounds on the stages after the first, from their definitions (see the module docstring)."""
    return [_stage_bound(stage, documents) for stage in task.stages[1:]]


def _stage_bound(stage: Any, documents: int) -> StageBound:
    """One later stage's bound: its requests, contexts and generated tokens over ``documents``."""
    per_doc = _declared_prompts(stage)
    width = len(stage.choices) if stage.output_type == "loglikelihood" and stage.choices else 1
    requests = None if per_doc is None else per_doc * width * documents
    contexts = None if per_doc is None else per_doc * documents
    generated = 0
    if stage.output_type == "generate_until" and requests is not None:
        generated = requests * int(stage.generation_kwargs.get("max_gen_toks", DEFAULT_MAX_GEN_TOKS))
    # a hook's {context, continuation} prompts (no `choices`) are free continuations, not choices
    single = stage.output_type != "loglikelihood" or (
        bool(stage.choices) and all(is_single_choice(choice) for choice in stage.choices)
    )
    return StageBound(stage.name, stage.output_type, requests, contexts, None, generated, single)


def _declared_prompts(stage: Any) -> int | None:
    if isinstance(stage.prompts, dict) or not callable(stage.prompts):
        return len(stage.prompts)
    count = getattr(stage.prompts, PROMPTS_ATTRIBUTE, None)
    return int(count) if count is not None else None


#: Where a context may be cut for counting: after a newline that follows a visible character, when
#: a visible character or one more newline and a visible character follow ("x\n|y", "x\n|\ny").
#: For byte-level BPE tokenizers with GPT-2 style pre-tokenization no token spans such a cut, so a
#: context's count is the sum over its pieces, and the pieces repeated across prompts (the article,
#: the instructions, each option) are tokenized once. A sample check guards other tokenizers.
_CUT = re.compile(r"(?<=\S\n)(?=\n?\S)")
#: Contexts whose whole-text count checks the piecewise count before it is used.
CHECK_SAMPLE = 64


def _lengths(tokenizer: Any, texts: Sequence[str], batch_size: int) -> list[int]:
    out: list[int] = []
    for start in range(0, len(texts), batch_size):
        out += [
            len(ids)
            for ids in tokenizer(list(texts[start : start + batch_size]), add_special_tokens=False)["input_ids"]
        ]
    return out


def context_lengths(tokenizer: Any, texts: Sequence[str], *, batch_size: int = 1024, seed: int = 0) -> dict[str, int]:
    """Token count of each text: piecewise (see :data:`_CUT`) when that reproduces whole-text counts
    on a seeded sample of :data:`CHECK_SAMPLE` texts, else every text tokenized whole."""
    sample = random.Random(seed).sample(list(texts), min(CHECK_SAMPLE, len(texts)))
    pieces = {text: _CUT.split(text) for text in texts}
    distinct = sorted({piece for parts in pieces.values() for piece in parts})
    piece_length = dict(zip(distinct, _lengths(tokenizer, distinct, batch_size), strict=True))
    counts = {text: sum(piece_length[piece] for piece in parts) for text, parts in pieces.items()}
    exact = dict(zip(sample, _lengths(tokenizer, sample, batch_size), strict=True))
    if any(counts[text] != length for text, length in exact.items()):
        logging.getLogger(__name__).info(
            "piecewise token counts differ from whole-text counts: tokenizing every context whole"
        )
        counts = dict(zip(texts, _lengths(tokenizer, texts, batch_size), strict=True))
    return counts


def count_tokens(plans: list[TaskPlan], tokenizer: Any, *, batch_size: int = 1024) -> None:
    """Fill each plan's ``tokens``: every distinct context of the whole plan is counted once (:func:`context_lengths`)."""
    lengths = context_lengths(tokenizer, _distinct_contexts(plans), batch_size=batch_size)
    for plan in plans:
        _fill_tallies(plan, lengths)
        plan.tokens = _token_totals(plan, lengths)


def _distinct_contexts(plans: list[TaskPlan]) -> list[str]:
    """Every distinct context of the plans, sorted: the building and final stages' and the later stages'
    rendered bounds."""
    return sorted(
        {c for plan in plans for part in (plan.building, plan.final) for t in part.values() for c in t.contexts}
        | {c for plan in plans for b in plan.later_stages for c, _ in b.bounded or ()}
    )


def _fill_tallies(plan: TaskPlan, lengths: dict[str, int]) -> None:
    """Set each tally's ``request_tokens`` (every request's context) and ``distinct_tokens`` (each distinct
    context once) from the context ``lengths``."""
    for part in (plan.building, plan.final, plan.repeated):
        for tally in part.values():
            tally.request_tokens = sum(lengths[c] for c in tally._contexts_per_request)
            tally.distinct_tokens = sum(lengths[c] for c in tally.contexts)


def _token_totals(plan: TaskPlan, lengths: dict[str, int]) -> dict[str, int]:
    """Prompt tokens of the task: per request, per distinct context, and the later-stage estimate."""
    totals = {"request_tokens": 0, "distinct_context_tokens": 0, "later_stage_tokens_estimate": 0}
    for part in (plan.building, plan.final):
        for tally in part.values():
            totals["request_tokens"] += tally.request_tokens
            totals["distinct_context_tokens"] += tally.distinct_tokens
    if plan.later_stages and plan.documents:
        totals["later_stage_tokens_estimate"] = _later_stage_estimate(plan, lengths)
    return totals


def _later_stage_estimate(plan: TaskPlan, lengths: dict[str, int]) -> int:
    """The later stages' prompt tokens (set on each bound): the rendered bound where the stage has one
    (:func:`.bounds.bounded_prompts`), else an estimate, labelled as such: per later prompt, the mean
    earlier-stage prompt plus every earlier answer of its document at its generation bound."""
    earlier = [c for tally in plan.building.values() for c in tally.contexts]
    mean_prompt = sum(lengths[c] for c in earlier) / len(earlier) if earlier else 0.0
    answers = sum(t.generated_tokens for t in plan.building.values()) / plan.documents
    total = 0
    for bound in plan.later_stages:
        if bound.bounded is not None:
            bound.context_tokens_estimate = sum(lengths[c] + extra for c, extra in bound.bounded)
            total += bound.context_tokens_estimate
        elif bound.contexts is not None:
            bound.context_tokens_estimate = round(bound.contexts * (mean_prompt + answers))
            total += bound.context_tokens_estimate
    return total
