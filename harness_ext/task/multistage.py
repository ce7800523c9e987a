"""Multi-stage tasks: stage 2's prompts are built from the same document plus stage 1's outputs.

lm-eval 0.4.13 builds every request of every task before it calls the model, so one task cannot
chain stages by itself. :class:`MultiStageTask` chains them inside one ``lm_eval`` run, with the one
loaded model (:func:`~logic_consistency.harness_ext.task.current_run.current_lm`): the first such task
lm-eval builds runs every multi-stage task's earlier stages, one call per stage and request type
across all their documents (:func:`run_earlier_stages`), and attaches each document's prompts, raw
and parsed outputs under ``doc["stages"][name]``. The last
stage's requests are ordinary lm-eval requests, scored by ``process_results`` and logged by
``--log_samples`` next to the earlier stages' outputs; a document whose earlier stage was
unparseable carries one placeholder request (:mod:`logic_consistency.harness_ext.task.placeholders`).

Works with every backend that has the request types a stage uses; with ``--apply_chat_template``
every prompt goes through ``fewshot_context``. YAML form: docs/adding-a-task.md, "Two-stage tasks".
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.registry import get_aggregation
from lm_eval.evaluator_utils import get_sample_size

from logic_consistency.harness_ext.chat.choice_reading import MISSING_METRIC, count_missing
from logic_consistency.harness_ext.models.args import refuse_empty_stop
from logic_consistency.harness_ext.task.base import TEMPLATES, PromptedTask, render_prompt, total
from logic_consistency.harness_ext.task.current_run import call_once, current_run, start_build
from logic_consistency.harness_ext.task.placeholders import placeholder
from logic_consistency.harness_ext.task.undefined import reported

eval_logger = logging.getLogger(__name__)

OUTPUT_TYPES = ("generate_until", "loglikelihood")
#: Prompt of the placeholder request of a document whose earlier stage was unparseable.
PLACEHOLDER_PROMPT = "(placeholder: an earlier stage of this document was unparseable)"


@dataclass
class Stage:
    """One stage of a :class:`MultiStageTask`, validated from YAML."""

    name: str
    output_type: str
    prompts: Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]]
    choices: tuple[str, ...] = ()
    generation_kwargs: dict[str, Any] = field(default_factory=dict)
    parse: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    #: ``task 'NAME': stages[i]``, for errors (set by :meth:`from_yaml`; no YAML key).
    where: str = field(default="", metadata={"yaml_key": False})
    #: The prompts hook returns prompts already formatted as lm-eval formats a document's own prompt
    #: (few-shot examples, chat template), sent as they are (no YAML key: a task class sets it).
    formatted: bool = field(default=False, metadata={"yaml_key": False})

    @classmethod
    def from_yaml(cls, spec: Any, *, task: str, index: int) -> Stage:
        """Validate one entry of the YAML ``stages`` list, naming task and stage in errors."""
        where = f"task {task!r}: stages[{index}]"
        if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
            raise ValueError(f"{where} must be a mapping with a string 'name'")
        output_type = spec.get("output_type", "generate_until")
        if output_type not in OUTPUT_TYPES:
            raise ValueError(f"{where}.output_type must be one of {OUTPUT_TYPES}, got {output_type!r}")
        prompts = _read_prompts(spec.get("prompts"), where)
        choices = tuple(spec.get("choices") or ())
        parse = spec.get("parse")
        if parse is not None and not callable(parse):
            raise ValueError(f"{where}.parse must be a !function")
        if isinstance(spec.get("generation_kwargs"), Mapping):  # the same refusal as --gen_kwargs until=
            refuse_empty_stop(spec["generation_kwargs"].get("until"), where=f"{where}.generation_kwargs.until")
        return cls(
            name=spec["name"],
            output_type=output_type,
            prompts=prompts,
            choices=choices,
            generation_kwargs=dict(spec.get("generation_kwargs") or {}),
            parse=parse,
            where=where,
        )

    def render(self, doc: dict[str, Any]) -> dict[str, Any]:
        """The stage's prompts for one document: ``{name: text}`` or ``{name: {context, continuation}}``."""
        if callable(self.prompts):
            return dict(self.prompts(doc))
        return {
            name: render_prompt(template, doc, where=f"{self.where}.prompts.{name}")
            for name, template in self.prompts.items()
        }


def _read_prompts(prompts: Any, where: str) -> Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]]:
    """A stage's ``prompts``: its templates compiled, or its ``!function`` as it is."""
    if isinstance(prompts, Mapping):
        return {name: TEMPLATES.from_string(text) for name, text in prompts.items()}
    if not callable(prompts):
        raise ValueError(f"{where}.prompts must be a mapping of name -> template or a !function")
    return prompts  # type: ignore[no-any-return]


def _with_last_stage_output_type(config: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of the task config whose ``output_type`` defaults to the last stage's (lm-eval's request type),
    and, for a generating last stage, its ``generation_kwargs`` too: lm-eval would otherwise record (and warn
    about) its own defaults, which no stage uses (each stage's requests carry the stage's own)."""
    config = dict(config or {})
    stages = config.get("stages")
    if isinstance(stages, list) and stages and isinstance(stages[-1], Mapping):
        config.setdefault("output_type", stages[-1].get("output_type", "generate_until"))
        if config["output_type"] == "generate_until" and isinstance(stages[-1].get("generation_kwargs"), Mapping):
            config.setdefault("generation_kwargs", dict(stages[-1]["generation_kwargs"]))
    return config


def _read_stages(specs: Any, task: str) -> list[Stage]:
    """The YAML ``stages`` list validated: non-empty, each stage valid, names unique."""
    if not isinstance(specs, list) or not specs:
        raise ValueError(f"task {task!r}: 'stages' must be a non-empty list")
    stages = [Stage.from_yaml(spec, task=task, index=i) for i, spec in enumerate(specs)]
    names = [stage.name for stage in stages]
    if len(set(names)) != len(names):
        raise ValueError(f"task {task!r}: stage names must be unique, got {names}")
    return stages


def _read_score(score: Any, task: str) -> Callable[[dict[str, Any]], Mapping[str, Any]]:
    """The YAML ``score`` hook, which must be a ``!function``."""
    if not callable(score):
        raise ValueError(f"task {task!r}: 'score' must be a !function (doc) -> {{metric: value}}")
    return score  # type: ignore[no-any-return]


class MultiStageTask(PromptedTask):
    """A task whose later stages are built from the earlier stages' outputs (see module doc)."""

    EXTRA_KEYS: tuple[str, ...] = ("stages", "score", "metrics")
    RECORD_KEY = "stages_config"

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config=_with_last_stage_output_type(config), **kwargs)
        task = self.config.task
        self.stages = _read_stages(self.extra_config.get("stages"), task)
        self.score = _read_score(self.extra_config.get("score"), task)
        self.OUTPUT_TYPE = self.stages[-1].output_type
        specs = self._metric_specs(self.extra_config.get("metrics"), task)
        if any(stage.output_type == "loglikelihood" for stage in self.stages):
            specs.setdefault(MISSING_METRIC, (total, False))  # reported on choice-reading backends only
        self.declare_metrics(specs)
        self._stage_docs: dict[int, dict[str, Any]] = {}
        #: The ``build_all_requests`` settings the earlier stages last ran with (``None``: not run yet).
        self._prepared_with: dict[str, Any] | None = None
        # The records of stage 1 are written into the documents: keep the YAML's
        # `prompts` templates out of the recorded config (callables do not serialise).
        self.config.metadata[self.RECORD_KEY] = {"stages": [s.name for s in self.stages]}

    @staticmethod
    def _metric_specs(specs: Any, task: str) -> dict[str, tuple[Any, bool]]:
        if not isinstance(specs, list) or not specs:
            raise ValueError(f"task {task!r}: 'metrics' must list {{metric, aggregation, higher_is_better}}")
        out = {}
        for i, spec in enumerate(specs):
            name, aggregation = spec.get("metric"), spec.get("aggregation", "mean")
            if not isinstance(name, str):
                raise ValueError(f"task {task!r}: metrics[{i}].metric must be a string")
            if isinstance(aggregation, str):
                aggregation = get_aggregation(aggregation)
                if aggregation is None:
                    raise ValueError(f"task {task!r}: metrics[{i}].aggregation {spec['aggregation']!r} is unknown")
            out[name] = (aggregation, bool(spec.get("higher_is_better", True)))
        return out

    def loglikelihood_continuations(self) -> dict[str, tuple[str, ...] | None]:
        """What each ``loglikelihood`` stage scores, known before any request is built.

        Its ``choices``, or ``None`` when the stage has none (its prompts hook gives each document
        its own ``{context, continuation}``). A backend that reads only some continuations (lc-chat)
        refuses the task from this when the run starts, before an earlier stage calls the model.
        """
        return {stage.name: (stage.choices or None) for stage in self.stages if stage.output_type == "loglikelihood"}

    # ------------------------------------------------------------------ requests
    def _stage_requests(
        self, stage: Stage, doc: dict[str, Any], metadata: tuple[Any, ...]
    ) -> tuple[list[Instance], dict[str, Any]]:
        """The requests of one stage for one document, and the prompts they were built from."""
        prompts = stage.render(doc)
        requests: list[Instance] = []

        def add(arguments: tuple[Any, ...]) -> None:
            requests.append(Instance(stage.output_type, doc, arguments, len(requests), metadata))

        delimiter = self.continuation_delimiter()
        formatted: Callable[[str], str] = str if stage.formatted else self.format_prompt
        for prompt in prompts.values():
            if stage.output_type == "generate_until":
                # a copy per request, as lm-eval's construct_requests makes: a backend appends its EOS to `until`
                add((formatted(str(prompt)), copy.deepcopy(stage.generation_kwargs)))
            elif isinstance(prompt, Mapping):
                add((formatted(prompt["context"]), f"{delimiter}{prompt['continuation']}"))
            else:
                if not stage.choices:
                    raise ValueError(f"task {self.config.task!r}: stage {stage.name!r} needs 'choices'")
                context = formatted(str(prompt))
                for choice in stage.choices:
                    add((context, f"{delimiter}{choice}"))
        return requests, prompts

    @staticmethod
    def _collect(stage: Stage, prompts: dict[str, Any], responses: Sequence[Any]) -> dict[str, Any]:
        """Map responses back to prompt names: text, one log-likelihood, or one per choice."""
        outputs: dict[str, Any] = {}
        position = 0
        for name, prompt in prompts.items():
            if stage.output_type == "generate_until":
                outputs[name] = responses[position]
                position += 1
            elif isinstance(prompt, Mapping):
                outputs[name] = float(responses[position][0])
                position += 1
            else:
                width = len(stage.choices)
                outputs[name] = [float(r[0]) for r in responses[position : position + width]]
                position += width
        return outputs

    def _record(
        self,
        stage: Stage,
        doc: dict[str, Any],
        prompts: dict[str, Any],
        outputs: dict[str, Any],
        responses: Sequence[Any] = (),
    ) -> dict[str, Any]:
        parsed: dict[str, Any] = {}
        if stage.parse is not None:
            try:
                parsed = dict(stage.parse(doc, outputs))
            except Exception as error:  # a parser bug must not sink the other documents
                parsed = {"error": f"{type(error).__name__}: {error}"}
        record: dict[str, Any] = {"prompts": prompts, "outputs": outputs, "parsed": parsed}
        if (missing := count_missing(responses)) is not None:
            record[MISSING_METRIC] = missing
        return record

    @staticmethod
    def blocked(doc: dict[str, Any]) -> str | None:
        """Name of the first earlier stage whose parse failed (the later stages skip the doc)."""
        for name, record in (doc.get("stages") or {}).items():
            if "error" in record.get("parsed", {}):
                return str(name)
        return None

    def build_all_requests(self, **kwargs: Any) -> None:  # noqa: D102
        if self._prepared_with != kwargs:  # not prepared, with these settings, by an earlier task's build
            run_earlier_stages([(self, kwargs), *_others_of_the_run(self, kwargs)])
        self._prepared_with = None
        blocked = sum(1 for doc in self._stage_docs.values() if self.blocked(doc))
        if blocked:
            eval_logger.warning(
                "[%s] %d of %d documents have an unparseable earlier-stage output; their last "
                "stage is skipped and they are scored as unparseable",
                self.config.task,
                blocked,
                len(self._stage_docs),
            )
        super().build_all_requests(**kwargs)

    def _start(self, kwargs: dict[str, Any]) -> Any:
        """List this rank's documents (lm-eval's selection), empty their stage records; the run's model."""
        needed_for = f"has {len(self.stages)} stages" if len(self.stages) > 1 else None
        lm, docs = start_build(self, kwargs, model_needed_for=needed_for)
        self._stage_docs = {doc_id: {**doc, "stages": {}} for doc_id, doc in docs}
        self._prepared_with = dict(kwargs)
        return lm

    def _pending(self, stage: Stage) -> list[tuple[int, dict[str, Any], list[Instance]]]:
        """Each unblocked document's requests of ``stage`` (with the prompts they were built from)."""
        pending = []
        for doc_id, doc in self._stage_docs.items():
            if not self.blocked(doc):
                requests, prompts = self._stage_requests(stage, doc, (self.config.task, doc_id, 1))
                pending.append((doc_id, prompts, requests))
        return pending

    def _answered(
        self, stage: Stage, pending: list[tuple[int, dict[str, Any], list[Instance]]], responses: Sequence[Any]
    ) -> None:
        """Record ``stage``'s answers in the documents (``responses`` in the order of ``pending``)."""
        position = 0
        for doc_id, prompts, requests in pending:
            answers = responses[position : position + len(requests)]
            position += len(requests)
            doc = self._stage_docs[doc_id]
            outputs = self._collect(stage, prompts, answers)
            doc["stages"][stage.name] = self._record(stage, doc, prompts, outputs, answers)

    def doc_iterator(self, **kwargs: Any) -> Iterator[tuple[int, dict[str, Any]]]:  # noqa: D102
        for doc_id, doc in super().doc_iterator(**kwargs):
            yield doc_id, self._stage_docs.get(doc_id, doc)

    def next_stage(self, doc: dict[str, Any]) -> Stage:
        """The first stage whose outputs ``doc`` lacks (the last stage once the earlier ones ran)."""
        done = doc.get("stages") or {}
        return next((stage for stage in self.stages[:-1] if stage.name not in done), self.stages[-1])

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        """The last stage's requests (a placeholder when an earlier stage could not be parsed).

        Within lm-eval every document has been through the earlier stages (``build_all_requests``).
        A document that has not (a caller such as lm-eval's generic task checks, which calls this
        on raw documents) gets its next stage's requests: what the task would ask the model next.
        """
        kwargs.pop("apply_chat_template", None)
        kwargs.pop("chat_template", None)
        metadata = self.request_metadata(kwargs)
        if self.blocked(doc):
            return [self._placeholder(doc, metadata)]
        if "stages" not in doc:
            doc = {**doc, "stages": {}}
        requests, _ = self._stage_requests(self.next_stage(doc), doc, metadata)
        return requests

    def _placeholder(self, doc: dict[str, Any], metadata: tuple[Any, ...]) -> Instance:
        """The one request of a document whose last stage is skipped.

        lm-eval needs at least one request per document (its sample log reads the first), so a
        blocked document carries this placeholder; it is answered without a model call
        (:mod:`logic_consistency.harness_ext.task.placeholders`) and its answer is ignored.
        """
        return placeholder(self.OUTPUT_TYPE, doc, self.format_prompt(PLACEHOLDER_PROMPT), metadata)

    # ------------------------------------------------------------------ scoring
    def process_results(self, doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        """Parse the last stage, then score the document with the YAML's ``score`` hook."""
        if self.predict_only():
            return {"bypass": None}
        last = self.stages[-1]
        if not self.blocked(doc):
            if self.next_stage(doc) is not last:
                raise RuntimeError(
                    f"task {self.config.task!r}: a document reached scoring without its "
                    f"{self.next_stage(doc).name!r} stage (requests built outside build_all_requests?)"
                )
            prompts = last.render(doc)
            outputs = self._collect(last, prompts, results)
            doc["stages"][last.name] = self._record(last, doc, prompts, outputs, results)
        scores: dict[str, Any] = dict(self.score(doc))
        missing = [record[MISSING_METRIC] for record in doc["stages"].values() if MISSING_METRIC in record]
        if missing and MISSING_METRIC in self._aggregation_list:
            scores[MISSING_METRIC] = sum(missing)
        # a declared metric the score hook leaves out is undefined on this document: None, left out of its
        # average (harness_ext/task/undefined.py); the lc-chat count stays as it was (reported where missing)
        for name in self._aggregation_list:
            if name != MISSING_METRIC:
                scores.setdefault(name, None)
        return reported(scores)


# ---------------------------------------------------------------------- one call per stage across tasks
#: One task's share of a stage: the task, the stage, and its documents' requests.
_Share = tuple[MultiStageTask, Stage, list[tuple[int, dict[str, Any], list[Instance]]]]


def _others_of_the_run(first: MultiStageTask, kwargs: dict[str, Any]) -> list[tuple[MultiStageTask, dict[str, Any]]]:
    """The run's other multi-stage tasks not yet prepared, each with the settings lm-eval will build it with.

    lm-eval's ``evaluate`` builds every task with the same settings but its own ``limit``
    (``get_sample_size`` of the run's) and ``samples``; a task whose build then brings other settings
    runs its stages again on its own (``build_all_requests``), so a guess here never changes an answer.
    """
    run = current_run()
    if run is None:
        return []
    run.prepared.add(id(first))
    others = []
    for name, task in run.tasks.items():
        if isinstance(task, MultiStageTask) and id(task) not in run.prepared and len(task.stages) > 1:
            run.prepared.add(id(task))
            samples = None if run.samples is None else run.samples.get(name)
            others.append((task, {**kwargs, "limit": get_sample_size(task, run.limit), "samples": samples}))
    return others


def run_earlier_stages(builds: Sequence[tuple[MultiStageTask, dict[str, Any]]]) -> None:
    """Run the earlier stages of every task in ``builds`` (task, its ``build_all_requests`` settings).

    Stage by stage: the n-th stage of every task that has one goes to the model in one call per
    request type (:func:`call_once`, which sends a request asked by two tasks once), the tasks in the
    run's order, so ``--batch_size`` fills across tasks. A sampled stage (``do_sample``) keeps a call
    of its own per task: its random draws stay in the task's order, not in the backend's batch order.
    """
    lm = None
    for task, kwargs in builds:
        lm = task._start(kwargs)
    depth = 0
    while shares := [(task, task.stages[depth]) for task, _ in builds if depth < len(task.stages) - 1]:
        merged: dict[str, list[_Share]] = {}
        for task, stage in shares:
            share = (task, stage, task._pending(stage))
            if stage.generation_kwargs.get("do_sample"):
                _call(lm, stage.output_type, [share])
            else:
                merged.setdefault(stage.output_type, []).append(share)
        for output_type, group in merged.items():
            _call(lm, output_type, group)
        depth += 1


def _call(lm: Any, output_type: str, shares: list[_Share]) -> None:
    """One model call for the shares' requests; each task records its documents' answers."""
    flat = [request for _, _, pending in shares for _, _, requests in pending for request in requests]
    named = ", ".join(f"{task.config.task} {stage.name!r}" for task, stage, _ in shares)
    eval_logger.info("earlier stages (%s): %d %s requests in one call", named, len(flat), output_type)
    responses = call_once(lm, output_type, flat)
    position = 0
    for task, stage, pending in shares:
        width = sum(len(requests) for _, _, requests in pending)
        task._answered(stage, pending, responses[position : position + width])
        position += width
