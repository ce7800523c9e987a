"""Self-validation of a wrapped ``generate_until`` task: the base's own answer, then the model's Yes / No on it.

A wrapped task with a generative base (``base_task: triviaqa``, ``self_validate: true``: :class:`~.task.InvarianceTask`
hands it to this class) runs two stages through the multi-stage runner (``harness_ext/task/multistage.py``):
``answer`` is the base's own request, unchanged (its prompt as lm-eval builds it, its ``generation_kwargs``);
its answer goes through the base's first filter ensemble as lm-eval applies it, and the base's metrics
are computed on it by lm-eval's own task object for the base, so they equal the base's. ``validator``
is that prompt, the extracted answer, then :data:`~.wrapping.VALIDATION` (the multiple-choice form's
question; Li et al., ICLR 2024, section 2), " Yes" against " No" by log-likelihood. Per question
(``metrics/invariance_validation.py``): the base's metrics, ``gv_consistency`` (Yes to its own answer),
``validator_accuracy`` (the verdict against the base's first metric: 1 right, 0 wrong) and
``self_endorsed_wrong``. An empty answer is counted in ``unparseable`` and not validated; a metric
undefined for a question is left out of its mean and counted as ``undefined_<metric>``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask

from logic_consistency.harness_ext.plan.counts import prompts_per_document
from logic_consistency.harness_ext.task.base import total
from logic_consistency.harness_ext.task.multistage import MultiStageTask
from logic_consistency.metrics import invariance_validation as validation
from logic_consistency.options import read_option

from .scoring import VALIDATION_METRICS, defined_values
from .wrapping import OPTION_NAMES, VALIDATION

__all__ = ["ANSWER", "GenerativeValidationTask", "VALIDATOR", "VARIANT_OPTIONS"]

#: The two stages, and the one prompt of each (``doc["stages"][stage]["prompts"][PROMPT]``).
ANSWER, VALIDATOR, PROMPT = "answer", "validator", "main"
#: The options that vary a question's options: a generative base has none, so setting one is refused.
VARIANT_OPTIONS = ("transform", "max_variants", "referring_options", "invariance_mode", "ask_incorrect")
#: Keys of the base's config this task does not take: the answer stage and the base's own task object use them.
_BASE_ONLY = ("metric_list", "filter_list", "generation_kwargs", "process_results", "output_type", "repeats")


def _verdict(doc: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """The validator stage's parse: 1.0 when " Yes" scores above " No", 0.0 below; an exact tie is unparseable."""
    yes, no = outputs[PROMPT]
    if yes == no:
        return {"error": f"tie between the log-likelihoods of Yes and No ({yes})"}
    return {"verdict": 1.0 if yes > no else 0.0}


def _refuse_options(config: dict[str, Any], base: dict[str, Any]) -> None:
    """``self_validate: true`` is the one family option that applies to a generative base: an option that
    varies a question's options is refused, as is a base that asks for several answers per question."""
    metadata, task, base_task = config["metadata"], config.get("task"), config.get("base_task")
    for option in VARIANT_OPTIONS:
        if option in metadata:
            raise ValueError(
                f"task {task!r}: {option} varies a question's options, and base task {base_task!r} is "
                "generate_until (no options to permute); only self_validate: true applies to it"
            )
    if not read_option(metadata, "self_validate", where=f"task {task!r}"):
        raise ValueError(
            f"task {task!r}: base task {base_task!r} is generate_until (no options to vary); set "
            "self_validate: true to have the model validate its own answer"
        )
    if base.get("repeats", 1) != 1:
        raise ValueError(
            f"task {task!r}: base task {base_task!r} has repeats: {base['repeats']}; self-validation validates "
            "one answer per question"
        )


class GenerativeValidationTask(MultiStageTask):
    """A generative base task's own answer, validated by the same model (see the module docstring)."""

    EXTRA_KEYS = (*MultiStageTask.EXTRA_KEYS, "base_task")
    RECORD_KEY = "task_config"

    def __init__(self, config: dict[str, Any], *, base: dict[str, Any], **kwargs: Any) -> None:
        own = dict(config)
        own.pop("class", None)
        name = str(own.get("task"))
        merged = {key: value for key, value in base.items() if key not in _BASE_ONLY}
        merged.update({key: value for key, value in own.items() if key != "metadata"})
        merged["metadata"] = {**(base.get("metadata") or {}), **(own.get("metadata") or {})}
        self.check_loader_options(merged, task_options=OPTION_NAMES)  # before any data loads (the base's task
        _refuse_options(merged, base)  # object below loads the base's documents)
        self.lm_eval_base = ConfigurableTask(config=copy.deepcopy(base))  # the base's filters and metrics
        self.lm_eval_base.config.task = own["base_task"]
        merged.update(output_type="loglikelihood", stages=self._stage_specs(), score=self._score)
        merged["metrics"] = self._metric_list(name)
        super().__init__(config=merged, **kwargs)
        self.stages = [replace(stage, formatted=True) for stage in self.stages]
        self.config.metadata[self.RECORD_KEY] = {
            "base_task": own["base_task"],
            "stages": [stage.name for stage in self.stages],
            "validated_filter": self._filter_name(),
        }

    def validate_options(self, config: dict[str, Any]) -> None:
        """The family's options (a near miss of one is an error naming it); see :func:`_refuse_options`."""
        self.check_loader_options(config, task_options=OPTION_NAMES)

    # ------------------------------------------------------------------ stages
    def _stage_specs(self) -> list[dict[str, Any]]:
        """The two stages, as the runner reads them (hooks bound to this task)."""

        @prompts_per_document(1)
        def answer_prompts(doc: dict[str, Any]) -> dict[str, str]:
            return {PROMPT: self._base_context(doc)}

        @prompts_per_document(1)
        def validator_prompts(doc: dict[str, Any]) -> dict[str, str]:
            record = doc["stages"][ANSWER]
            answer = record["parsed"]["answer"]
            return {PROMPT: f"{record['prompts'][PROMPT]}{self.continuation_delimiter()}{answer}{VALIDATION}"}

        generation = copy.deepcopy(self.lm_eval_base.config.generation_kwargs or {})
        return [
            {
                "name": ANSWER,
                "output_type": "generate_until",
                "prompts": answer_prompts,
                "generation_kwargs": generation,
                "parse": self._parse_answer,
            },
            {
                "name": VALIDATOR,
                "output_type": "loglikelihood",
                "prompts": validator_prompts,
                "choices": ["Yes", "No"],
                "parse": _verdict,
            },
        ]

    def _base_context(self, doc: Mapping[str, Any]) -> str:
        """The base's prompt for ``doc``, as lm-eval's ``build_all_requests`` builds it (same arguments)."""
        plain = {key: value for key, value in doc.items() if key != "stages"}
        render = self._render_kwargs
        context = self.fewshot_context(
            plain,
            num_fewshot=0 if self.config.num_fewshot is None else self.config.num_fewshot,
            system_instruction=render.get("system_instruction"),
            apply_chat_template=render.get("apply_chat_template") or False,
            fewshot_as_multiturn=render.get("fewshot_as_multiturn") or False,
            chat_template=render.get("chat_template"),
            gen_prefix=self.doc_to_prefix(plain),
        )
        if not isinstance(context, str):
            raise ValueError(f"task {self.config.task!r}: the base's prompt is {type(context).__name__}, not a text")
        return context

    def _filter_name(self) -> str:
        return str(self.lm_eval_base._filters[0].name)

    def _parse_answer(self, doc: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
        """The answer stage's parse: the base's first filter ensemble applied to the raw answer, as lm-eval
        applies it to a request's responses; an empty answer is unparseable (kept for the base's metrics)."""
        plain = {key: value for key, value in doc.items() if key != "stages"}
        instance = Instance("generate_until", plain, ("", {}), 0)
        instance.resps = [outputs[PROMPT]]
        ensemble = self.lm_eval_base._filters[0]
        ensemble.apply([instance])
        answer = instance.filtered_resps[ensemble.name]
        if not isinstance(answer, str) or not answer.strip():
            return {"answer": answer, "error": f"no answer to validate after the filter {ensemble.name!r}: {answer!r}"}
        return {"answer": answer}

    # ------------------------------------------------------------------ metrics
    def _metric_list(self, name: str) -> list[dict[str, Any]]:
        """The base's metrics (its aggregations), the validation metrics, their undefined counts, ``unparseable``."""
        aggregations, better = self.lm_eval_base.aggregation(), self.lm_eval_base.higher_is_better()
        clash = sorted(set(aggregations) & {*VALIDATION_METRICS, "unparseable"})
        if clash:
            raise ValueError(f"task {name!r}: the base's metrics {clash} clash with the self-validation metrics")
        specs = [{"metric": m, "aggregation": aggregations[m], "higher_is_better": better.get(m)} for m in aggregations]
        specs += [{"metric": m, "aggregation": "mean", "higher_is_better": b} for m, b in VALIDATION_METRICS.items()]
        counts = [f"undefined_{metric}" for metric in VALIDATION_METRICS] + ["unparseable"]
        return specs + [{"metric": m, "aggregation": total, "higher_is_better": False} for m in counts]

    def _score(self, doc: dict[str, Any]) -> dict[str, Any]:
        """One question's metrics: the base's on the extracted answer, and the validation ones (module docstring)."""
        parsed = doc["stages"][ANSWER]["parsed"]
        if "answer" not in parsed:  # the base's own filters failed: lm-eval's run of the base would stop too
            raise RuntimeError(f"task {self.config.task!r}: the base's filters failed: {parsed.get('error')}")
        plain = {key: value for key, value in doc.items() if key != "stages"}
        base_values = dict(self.lm_eval_base.process_results(plain, [parsed["answer"]]))
        verdict = doc["stages"].get(VALIDATOR, {}).get("parsed", {}).get("verdict", math.nan)
        right = _right(base_values.get(next(iter(self.lm_eval_base.aggregation()))))
        values = question_values(verdict, right)
        return {
            **base_values,
            **defined_values(values, tuple(VALIDATION_METRICS)),
            "unparseable": int("error" in parsed),
        }


def _right(value: Any) -> bool | None:
    """Whether the base's first metric scores the answer right: 1 right, 0 wrong, anything else undefined."""
    if isinstance(value, bool | int | float) and float(value) in (0.0, 1.0):
        return float(value) == 1.0
    return None


def question_values(verdict: float, right: bool | None) -> dict[str, float]:
    """The validation metrics of one question from its verdict (1.0 Yes, 0.0 No, NaN none) on its own answer
    and whether that answer is right (``None``: the base's metric does not say): NaN where undefined."""
    own = np.asarray([verdict], dtype=np.float64)
    values = {"gv_consistency": float(validation.gv_consistency(own)[0])}
    if right is None:
        return {**values, "validator_accuracy": math.nan, "self_endorsed_wrong": math.nan}
    truth = np.asarray([right])
    values["validator_accuracy"] = float(validation.validator_accuracy(own[:, None], truth[:, None])[0])
    values["self_endorsed_wrong"] = float(validation.self_endorsed_wrong(own, truth)[0])
    return values
