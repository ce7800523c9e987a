"""``logic-consistency plan``: print what a run would cost, before any model is loaded.

Per task: documents, requests and distinct contexts by request type, prompt tokens (a named
tokenizer), the bound on generated tokens, and API calls on two chat backends: ``lc-chat`` (one
call per distinct context of one-word choices, read from ``top_logprobs``, bounded by
``--lc-chat-max-tokens``; a free log-likelihood continuation such as CTP's is refused) and
``local-chat-completions`` (generation only). Counts come from
:func:`~logic_consistency.harness_ext.plan.counts.plan_tasks`: exact for first stages, bounds (``≤``,
each quoted earlier answer at its generation bound) for later stages, estimates (``≈``) where a later
stage reads structured answers, one simulated run for PairS rounds. ``--price-in`` / ``--price-out`` (USD per million tokens) add dollars.
``--shards N`` also plans each shard of a sharded run (a model list's ``shards``) as that shard builds it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.chat.backend import CHAT_ARGS, DEFAULT_MAX_TOKENS
from logic_consistency.harness_ext.models.embedded import EMBEDDED_MODELS
from logic_consistency.harness_ext.plan.counts import TaskPlan, load_tokenizer, plan_tasks
from logic_consistency.harness_ext.plan.table import (
    api_costs,
    counts,
    dollars,
    render,
    render_shards,
    repeated_costs,
    shard_totals,
)
from logic_consistency.harness_ext.shards.shard import Shard
from logic_consistency.options import check_flag, check_value, metadata_from_json

__all__ = [
    "DEFAULT_TOKENIZER",
    "PlanOptions",
    "PlanRun",
    "api_costs",
    "as_json",
    "check_options",
    "plan_run",
    "render",
    "render_shards",
]

DEFAULT_TOKENIZER = "smollm2-135m-instruct"
#: ``--lc-chat-max-tokens`` is lc-chat's ``max_tokens``, with its declared bounds.
_LC_CHAT_MAX_TOKENS = next(arg for arg in CHAT_ARGS.declared if arg.name == "max_tokens")


def as_json(
    plans: list[TaskPlan], *, lc_chat_max_tokens: int, price_in: float | None, price_out: float | None, tokenizer: str
) -> dict[str, Any]:
    """The plan as one JSON-serialisable object (``--json``)."""
    tasks = []
    for plan in plans:
        costs = api_costs(plan, lc_chat_max_tokens=lc_chat_max_tokens)
        for cost in costs.values():
            cost["usd"] = dollars(cost, price_in, price_out)
        tasks.append(
            {
                "task": plan.task,
                "documents": plan.documents,
                "requests": counts(plan),
                "tokens": plan.tokens,
                "later_stages": [vars(bound) for bound in plan.later_stages],
                "api": costs,
                "repeated_in_earlier_tasks": repeated_costs(plan, lc_chat_max_tokens=lc_chat_max_tokens),
                "notes": [[label, value] for label, value in plan.notes],
            }
        )
    return {
        "tokenizer": tokenizer,
        "lc_chat_max_tokens": lc_chat_max_tokens,
        "price_in": price_in,
        "price_out": price_out,
        "tasks": tasks,
    }


@dataclass(frozen=True)
class PlanOptions:
    """The ``plan`` command's settings, one per option; ``tasks`` as given (comma-separated names)."""

    tasks: list[str]
    limit: float | None = None
    metadata: str | None = None
    apply_chat_template: bool = False
    system_instruction: str | None = None
    fewshot_as_multiturn: bool = False
    tokenizer: str = DEFAULT_TOKENIZER
    lc_chat_max_tokens: int = DEFAULT_MAX_TOKENS
    price_in: float | None = None
    price_out: float | None = None
    shards: int = 1

    def costing(self) -> dict[str, Any]:
        """The keyword arguments of :func:`as_json` and :func:`~logic_consistency.harness_ext.plan.table.render`."""
        return {
            "lc_chat_max_tokens": self.lc_chat_max_tokens,
            "price_in": self.price_in,
            "price_out": self.price_out,
            "tokenizer": self.tokenizer,
        }


@dataclass(frozen=True)
class PlanRun:
    """What :func:`plan_run` planned: one plan per task, and seconds per planning step."""

    plans: list[TaskPlan]
    timings: dict[str, float]
    #: With ``shards`` > 1: each shard's plans, as shard ``i/N`` builds them (else empty).
    shard_plans: list[list[TaskPlan]] = field(default_factory=list)

    def shards_json(self, *, lc_chat_max_tokens: int) -> list[dict[str, Any]]:
        """Per shard ``i/N``: its totals (``--json``'s ``shards``)."""
        count = len(self.shard_plans)
        return [
            {
                "shard": f"{index}/{count}",
                **_unpriced(shard_totals(part, lc_chat_max_tokens=lc_chat_max_tokens)),
                "tasks_without_documents": [plan.task for plan in part if not plan.documents],
            }
            for index, part in enumerate(self.shard_plans)
        ]


def check_options(options: PlanOptions) -> dict[str, Any] | None:
    """Validate the options before anything loads; errors name the option. Returns the metadata."""
    check_flag("price_in", options.price_in)
    check_flag("price_out", options.price_out)
    check_flag("limit", options.limit)
    if options.tokenizer not in EMBEDDED_MODELS:
        _check_tokenizer_folder(Path(options.tokenizer))
    check_value(options.lc_chat_max_tokens, _LC_CHAT_MAX_TOKENS, label="--lc-chat-max-tokens")  # lc-chat's own bounds
    check_flag("shards", options.shards)
    return metadata_from_json(options.metadata)


#: A folder transformers can load a tokenizer from holds one of these.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt")


def _check_tokenizer_folder(folder: Path) -> None:
    """Refuse a ``--tokenizer`` that is no embedded model and no folder with a tokenizer file in it."""
    if not folder.is_dir():
        raise ValueError(
            f"--tokenizer {str(folder)!r}: neither an embedded model ({', '.join(EMBEDDED_MODELS)}) "
            "nor a local tokenizer folder"
        )
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise ValueError(
            f"--tokenizer {str(folder)!r}: the folder holds no tokenizer file ({', '.join(TOKENIZER_FILES)}); "
            f"name a tokenizer folder or an embedded model ({', '.join(EMBEDDED_MODELS)})"
        )


def _unpriced(totals: Any) -> dict[str, Any]:
    """A shard's totals for ``--json``: counts only (shards are not priced)."""
    return {key: value for key, value in vars(totals).items() if not key.endswith("_usd")}


def plan_run(options: PlanOptions) -> PlanRun:
    """``plan``: check the options, then plan every named task, and each shard with ``shards`` > 1 (no model is loaded)."""
    metadata = check_options(options)
    tasks = [name for names in options.tasks for name in names.split(",") if name]
    if not tasks:
        raise ValueError("--tasks names no task")
    timings: dict[str, float] = {}
    started = time.perf_counter()
    tokenizer = load_tokenizer(options.tokenizer)  # once, for the whole plan and every shard's
    tokenizer_seconds = time.perf_counter() - started
    settings: dict[str, Any] = {
        "limit": options.limit,
        "metadata": metadata,
        "apply_chat_template": options.apply_chat_template,
        "system_instruction": options.system_instruction,
        "fewshot_as_multiturn": options.fewshot_as_multiturn,
        "tokenizer": tokenizer,
    }
    plans = plan_tasks(tasks, **settings, timings=timings)
    timings["load_tasks_and_tokenizer"] += tokenizer_seconds
    shard_plans = [
        plan_tasks(tasks, **settings, shard=Shard(index, options.shards))
        for index in range(options.shards if options.shards > 1 else 0)
    ]
    return PlanRun(plans=plans, timings=timings, shard_plans=shard_plans)
