"""A wrapped lm-eval multiple-choice task, posed under option variants: one document per question.

The YAML names the base task (``base_task: mmlu_abstract_algebra``) and sets the ``transform`` option;
the class takes the base's whole config from lm-eval's task index (:mod:`.wrapping`: prompt,
description, few-shot settings, filters, dataset; a declared hub dataset reads its local copy under
``LOGIC_CONSISTENCY_DATA``) under its own name, so the base and the wrapped task run in one ``lm_eval``
call. Each document is one original question; every variant is one group of its requests, so
``--limit`` counts questions and lm-eval's stderr of a per-question metric is clustered by question.
A variant's prompt is the base's prompt with the question's text replaced by the text the base renders
for the permuted document (:mod:`.fields`): the description and few-shot examples stay the base's,
and variant 0's requests are exactly the base's, so ``acc_original`` equals the base's ``acc``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask

from logic_consistency.harness_ext.task.base import PromptedTask
from logic_consistency.options import read_option

from . import scoring
from .fields import (
    MCF_GOLD,
    MCF_OPTIONS,
    Fields,
    FieldsError,
    asks_for_exception,
    detect_fields,
    permuted_doc,
    relabel_text,
    replace_question,
    variant_context,
)
from .generative import GenerativeValidationTask
from .mcf import LETTERS, PRIDE_CONFIG, lettered_fields, mcf_columns, mcf_prompt
from .transforms import LABEL_SETS, question_orders, referring_positions
from .wrapping import OPTION_NAMES, VALIDATION, base_config

__all__ = ["InvarianceTask", "OPTION_NAMES", "VALIDATION"]

#: The document field holding the question's position in the base's documents (seeds ``random``).
QUESTION_FIELD = "invariance_question"


def _base_of(config: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The wrapped task's name and its base's config (:func:`.wrapping.base_config`)."""
    name, base_task = (config or {}).get("task"), (config or {}).get("base_task")
    if not isinstance(base_task, str) or not base_task:
        raise ValueError(f"task {name!r}: base_task must name the lm-eval task to wrap, got {base_task!r}")
    return str(name), base_config(base_task, wrapper=str(name))


class InvarianceTask(PromptedTask):
    """The base task's questions, each posed under every variant of the ``transform`` option."""

    EXTRA_KEYS = ("base_task",)

    def __new__(cls, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """The wrapped task; a ``generate_until`` base gives a :class:`~.generative.GenerativeValidationTask`
        (its own answer validated by the model), so both forms are spelt with this class in YAML."""
        if cls is InvarianceTask and config is not None:  # not a copy (copy.copy calls __new__ alone)
            _, base = _base_of(config)
            if base.get("output_type") == "generate_until":
                return GenerativeValidationTask(config=dict(config), base=base, **kwargs)
        return super().__new__(cls)

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        own = dict(config or {})
        own.pop("class", None)
        name, merged = _base_of(own)
        base_metadata = merged.get("metadata") or {}
        merged.update({key: value for key, value in own.items() if key != "metadata"})
        merged["metadata"] = {**base_metadata, **(own.get("metadata") or {})}
        merged.pop("metric_list", None)  # the family declares its own metrics (declare_metrics)
        self.fields: Fields | None = None
        self.lettered: Fields | None = None  # a lettered base re-posed in PriDe's format (.mcf.lettered_fields)
        self.excluded: dict[str, int] = {}
        self._kept: Any = None
        super().__init__(config=merged, **kwargs)
        self.task_docs = self.eval_docs
        self.declare_metrics(
            scoring.metric_specs(self.transform, self.label_names(), negation=self.negation, validate=self.validate)
        )

    def validate_options(self, config: dict[str, Any]) -> None:
        """Read the family's options (``_options_yaml``); a near miss of one is an error naming it."""
        self.check_loader_options(config, task_options=OPTION_NAMES)
        metadata, where = config["metadata"], f"task {config.get('task')!r}"
        self.transform: str = read_option(metadata, "transform", where=where)
        self.max_variants: int = read_option(metadata, "max_variants", where=where)
        self.referring: str = read_option(metadata, "referring_options", where=where)
        self.mode: str = read_option(metadata, "invariance_mode", where=where)
        self.mcf_format: str = read_option(metadata, "mcf_format", where=where)
        if "mcf_format" in metadata and self.mode != "mcf":
            raise ValueError(f"{where}: metadata.mcf_format applies to invariance_mode mcf only, not {self.mode!r}")
        if self.mode == "mcf" and self.mcf_format == "pride":  # PriDe's description and delimiters (.mcf)
            config.update(PRIDE_CONFIG)
        self.seed: int = read_option(metadata, "seed", where=where)
        self.negation: bool = read_option(metadata, "ask_incorrect", where=where)
        self.validate: bool = read_option(metadata, "self_validate", where=where)
        if config.get("output_type") != "multiple_choice":
            raise ValueError(
                f"task {config.get('task')!r}: base task {self.extra_config['base_task']!r} has output_type "
                f"{config.get('output_type')!r}; option variants need a multiple_choice task (a generate_until "
                "task is wrapped with self_validate: true)"
            )

    # ------------------------------------------------------------------ documents
    def test_docs(self) -> Any:
        """The evaluated documents when the base has a test split (:meth:`_posed`)."""
        return self._posed(super().test_docs()) if self.has_test_docs() else None

    def validation_docs(self) -> Any:
        """The evaluated documents when the base has no test split (:meth:`_posed`); else the base's own."""
        docs = super().validation_docs()
        return docs if self.has_test_docs() or docs is None else self._posed(docs)

    def _posed(self, docs: Any) -> Any:
        """The base's evaluated documents, less the excluded ones (counted in ``excluded``), each with its
        position among the base's documents (:data:`QUESTION_FIELD`)."""
        if not hasattr(self, "features"):  # lm-eval's constructor, before it can render a prompt
            return docs
        if self._kept is None:
            if self.mode == "mcf":
                docs = self._with_mcf_columns(docs)
            self.fields = detect_fields(self, docs, mode=self.mode)
            kept = self._keep(docs)
            self._kept = docs.add_column(QUESTION_FIELD, list(range(len(docs)))).select(kept)
            # recorded with the task's keys (public): the questions left out, by reason
            record = {**self.config.metadata.get(self.RECORD_KEY, {}), "excluded_questions": dict(self.excluded)}
            self.config.metadata = {**self.config.metadata, self.RECORD_KEY: record}
        return self._kept

    def _with_mcf_columns(self, docs: Any) -> Any:
        """The documents with their options and gold index copied out (``invariance_mode: mcf``); a base
        whose options are already in its prompt (lettered) is re-posed from its detected fields under
        ``mcf_format: pride`` (:func:`.mcf.lettered_fields`), refused otherwise (``invariance_mode: fields``)."""
        first = docs[0]
        if all(str(option).strip() in ConfigurableTask.doc_to_text(self, first) for option in self._mcf_options(first)):
            if self.mcf_format != "pride":
                raise FieldsError(
                    f"task {self.config.task!r}: the base already shows its options in the prompt; "
                    "use invariance_mode: fields (or mcf_format: pride to re-pose it in PriDe's format)"
                )
            self.lettered = lettered_fields(self, ConfigurableTask, docs)
        name = str(self.config.task)
        return docs.map(lambda doc: mcf_columns(self._mcf_options(doc), self._base_target(doc), task=name))

    def _mcf_options(self, doc: Mapping[str, Any]) -> list[str]:
        field = MCF_OPTIONS if MCF_OPTIONS in doc else (self.lettered.options if self.lettered is not None else None)
        return [str(option) for option in doc[field]] if field is not None else list(super().doc_to_choice(doc))

    def _base_target(self, doc: Mapping[str, Any]) -> Any:
        return int(doc[self.lettered.answer]) if self.lettered is not None else super().doc_to_target(dict(doc))

    def doc_to_text(self, doc: dict[str, Any], doc_to_text: Any = None) -> str:
        """The base's prompt; under ``invariance_mode: mcf`` posed with lettered options (``mcf_format``, :mod:`.mcf`)."""
        text = super().doc_to_text(doc, doc_to_text)
        if self.mode != "mcf" or "__prompt__" in doc:
            return text
        question = self.lettered.question if self.lettered is not None else None
        return mcf_prompt(self.mcf_format, doc, text, self._mcf_options(doc), question=question or "question")

    def doc_to_choice(self, doc: Any, doc_to_choice: Any = None) -> Any:
        """The base's choices; under ``invariance_mode: mcf`` the letters of the options."""
        if self.mode != "mcf":
            return super().doc_to_choice(doc, doc_to_choice)
        return list(LETTERS[: len(self._mcf_options(doc))])

    def doc_to_target(self, doc: dict[str, Any], doc_to_target: Any = None) -> Any:
        """The base's target; under ``invariance_mode: mcf`` the gold's index."""
        if self.mode != "mcf" or "__prompt__" in doc:
            return super().doc_to_target(doc, doc_to_target)
        return int(doc[MCF_GOLD]) if MCF_GOLD in doc else self._base_target(doc)

    def _keep(self, docs: Any) -> list[int]:
        """The positions of the documents to pose; each excluded one counted by its reason."""
        fields, kept = self.fields, []
        assert fields is not None
        for i, doc in enumerate(docs):
            options = doc[fields.options]
            if len(options) != fields.n_options:
                self.excluded["option_count"] = self.excluded.get("option_count", 0) + 1
            elif referring_positions(options) and self.referring == "exclude":
                self.excluded["referring_option"] = self.excluded.get("referring_option", 0) + 1
            elif self.negation and asks_for_exception(doc[fields.question]):
                self.excluded["already_negated"] = self.excluded.get("already_negated", 0) + 1
            else:
                kept.append(i)
        return kept

    def label_names(self) -> list[str]:
        """The base's labels of the displayed positions (MMLU: A, B, C, D)."""
        assert self.fields is not None or self._kept is None
        _ = self.eval_docs
        assert self.fields is not None
        return list(self.fields.labels)

    def orders(self, doc: Mapping[str, Any]) -> list[tuple[int, ...]]:
        """The option orders of one document (variant 0 the original; referring options pinned if asked)."""
        assert self.fields is not None
        return question_orders(
            self.transform,
            doc[self.fields.options],
            int(doc[self.fields.answer]),
            referring=self.referring,
            max_variants=self.max_variants,
            seed=self.seed,
            question=int(doc[QUESTION_FIELD]),
        )

    # ------------------------------------------------------------------ requests and scores
    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Any]:
        """Every variant's requests, in variant order (``idx`` = group x k + displayed position); with
        ``negation``, every variant again asked "Which option is incorrect?" (the groups after them)."""
        kwargs["metadata"] = self.request_metadata(kwargs)  # lm-eval's generic checks pass none
        orders = self.orders(doc)
        groups = [(v, order, False) for v, order in enumerate(orders)]
        groups += [(v, order, True) for v, order in enumerate(orders)] if self.negation else []
        requests = []
        for number, (v, order, negated) in enumerate(groups):
            group = self._variant_requests(doc, ctx, v, order, negated, kwargs)
            for i, instance in enumerate(group):
                instance.doc, instance.idx = doc, number * len(group) + i
            requests.extend(group)
        if self.validate:
            requests += self._validation_requests(doc, ctx, kwargs["metadata"], start=len(requests))
        return requests

    def _validation_requests(self, doc: dict[str, Any], ctx: Any, metadata: Any, *, start: int) -> list[Any]:
        """The Yes/No validator of each option on the original order (:data:`VALIDATION`): " Yes" and
        " No" scored after the base's prompt, the option's label and the question."""
        assert self.fields is not None
        requests: list[Any] = []
        for label in self.fields.labels:
            prompt = f"{ctx}{self.continuation_delimiter()}{label}{VALIDATION}"
            for answer in ("Yes", "No"):
                arguments = (prompt, f"{self.config.target_delimiter}{answer}")
                requests.append(Instance("loglikelihood", doc, arguments, start + len(requests), metadata))
        return requests

    def _variant_requests(
        self, doc: dict[str, Any], ctx: Any, v: int, order: tuple[int, ...], negated: bool, kwargs: dict[str, Any]
    ) -> list[Any]:
        """One variant's requests: the base's prompt with the question shown in ``order`` (negated, relabelled)."""
        fields, where = self.fields, f"task {self.config.task!r}"
        assert fields is not None
        shown = permuted_doc(doc, order, fields, negated=negated)
        context = ctx if shown == doc else variant_context(self, ctx, doc, shown)
        labels = LABEL_SETS[v][: fields.n_options] if self.transform == "ids" and v > 0 else fields.labels
        if labels != fields.labels:
            text, posed = self.doc_to_text(doc), self.doc_to_text(shown)
            relabelled = relabel_text(posed, shown[fields.options], fields.labels, labels, where=where)
            context = replace_question(ctx, text, relabelled, where=where)
        group = super().construct_requests(doc=shown, ctx=context, **dict(kwargs))
        if labels != fields.labels:  # the continuation is the delimiter and the label
            for i, instance in enumerate(group):
                prompt, continuation = instance.arguments[:2]
                instance.arguments = (prompt, continuation[: -len(fields.labels[i])] + labels[i])
        return list(group)

    def process_results(self, doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        """The question's record (picks, gold, orders, scores; negation picks) and its per-question metrics."""
        if self.predict_only():
            return {"bypass": None}
        assert self.fields is not None
        orders = self.orders(doc)
        k = self.fields.n_options
        values = np.asarray([float(result[0]) for result in results], dtype=np.float64)
        lls = values[: len(values) - (2 * k if self.validate else 0)].reshape(-1, k)
        picks = [int(order[int(np.argmax(row))]) for order, row in zip(orders * 2, lls, strict=False)]
        record = {
            "picks": picks[: len(orders)],
            "gold": int(doc[self.fields.answer]),
            "perms": [list(order) for order in orders],
            "scores": lls[: len(orders)].tolist(),
            "label_set": list(range(len(orders))) if self.transform == "ids" else [0] * len(orders),
        }
        if self.negation:
            record["negation_picks"] = picks[len(orders) :]
        if self.validate:  # Yes over No for each original option
            pairs = values[len(values) - 2 * k :].reshape(k, 2)
            record["verdicts"] = (pairs[:, 0] > pairs[:, 1]).astype(np.float64).tolist()
        return scoring.question_values(
            record, self.transform, self.label_names(), negation=self.negation, validate=self.validate
        )
