"""``logic-consistency plan``: print what a run would cost, before any model is loaded.

Per task: documents, requests and distinct contexts by request type, prompt tokens (a named
tokenizer), the bound on generated tokens, and API calls on two chat backends: ``lc-chat`` (one
call per distinct context of one-word choices, read from ``top_logprobs``, bounded by
``--lc-chat-max-tokens``; a free log-likelihood continuation such as CTP's is refused) and
``local-chat-completions`` (generation only). Counts come from
:func:`~logic_consistency.harness_ext.plan.plan_tasks`: exact for first stages, bounds (``≤``) and
estimates (``≈``) for later stages, one simulated run for PairS rounds. ``--price-in`` / ``--price-out`` (USD per million tokens) add dollars.
``--shards N`` also plans each shard of a sharded run (a model list's ``shards``) as that shard builds it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logic_consistency.harness_ext.choice_reading import DEFAULT_MAX_TOKENS
from logic_consistency.harness_ext.plan_table import (
    api_costs,
    counts,
    dollars,
    render,
    render_shards,
    repeated_costs,
    shard_totals,
)
from logic_consistency.subcommands import add_subcommand

if TYPE_CHECKING:  # the CLI parser imports this module: lm-eval loads only when a plan runs
    from logic_consistency.harness_ext.plan import TaskPlan

DEFAULT_TOKENIZER = "smollm2-135m-instruct"
#: Bound on ``--shards``: every shard's requests are built once more (a plan of N shards costs N+1 plans).
MAX_SHARDS = 256


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


def _check_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """Validate the options before anything loads; errors name the option. Returns the metadata."""
    for option, value in (("--price-in", args.price_in), ("--price-out", args.price_out)):
        if value is not None and (not math.isfinite(value) or value < 0):
            raise ValueError(f"{option} must be a finite number >= 0 (USD per million tokens), got {value}")
    if args.limit is not None and (not math.isfinite(args.limit) or args.limit <= 0):
        raise ValueError(f"--limit must be > 0 (a document count, or a fraction below 1), got {args.limit}")
    # deferred: imports torch and transformers (seconds); the parser must not
    from logic_consistency.harness_ext.models import EMBEDDED_MODELS

    if args.tokenizer not in EMBEDDED_MODELS and not Path(args.tokenizer).is_dir():
        raise ValueError(
            f"--tokenizer {args.tokenizer!r}: neither an embedded model ({', '.join(EMBEDDED_MODELS)}) "
            "nor a local tokenizer folder"
        )
    if args.lc_chat_max_tokens < 1:
        raise ValueError(f"--lc-chat-max-tokens must be >= 1, got {args.lc_chat_max_tokens}")
    if not 1 <= args.shards <= MAX_SHARDS:
        raise ValueError(f"--shards must be between 1 and {MAX_SHARDS}, got {args.shards}")
    if args.metadata is None:
        return None
    try:
        metadata = json.loads(args.metadata)
    except json.JSONDecodeError as error:
        raise ValueError(f"--metadata: not valid JSON ({error.msg}): {args.metadata!r}") from None
    if not isinstance(metadata, dict):
        raise ValueError(f"--metadata must be a JSON object, got {args.metadata!r}")
    return metadata


def _unpriced(totals: Any) -> dict[str, Any]:
    """A shard's totals for ``--json``: counts only (shards are not priced)."""
    return {key: value for key, value in vars(totals).items() if not key.endswith("_usd")}


def _run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    metadata = _check_options(args)
    # deferred: imports lm-eval (seconds); building the parser (--help) must not
    from logic_consistency.harness_ext.plan import load_tokenizer, plan_tasks
    from logic_consistency.harness_ext.shards import Shard

    tasks = [name for names in args.tasks for name in names.split(",") if name]
    if not tasks:
        raise ValueError("--tasks names no task")
    timings: dict[str, float] = {}
    settings: dict[str, Any] = {
        "limit": args.limit,
        "metadata": metadata,
        "apply_chat_template": args.apply_chat_template,
        "system_instruction": args.system_instruction,
        "fewshot_as_multiturn": args.fewshot_as_multiturn,
        "tokenizer": load_tokenizer(args.tokenizer),
    }
    plans = plan_tasks(tasks, **settings, timings=timings)
    shard_plans = [
        plan_tasks(tasks, **settings, shard=Shard(index, args.shards))
        for index in range(args.shards if args.shards > 1 else 0)
    ]
    options = {
        "lc_chat_max_tokens": args.lc_chat_max_tokens,
        "price_in": args.price_in,
        "price_out": args.price_out,
        "tokenizer": args.tokenizer,
    }
    if args.json:
        report = as_json(plans, **options)
        if shard_plans:
            report["shards"] = [
                {
                    "shard": f"{index}/{args.shards}",
                    **_unpriced(shard_totals(part, lc_chat_max_tokens=args.lc_chat_max_tokens)),
                }
                for index, part in enumerate(shard_plans)
            ]
        print(json.dumps(report, indent=1))
    else:
        print(render(plans, **options))
        if shard_plans:
            print(f"\nShards (LOGIC_CONSISTENCY_SHARD=i/{args.shards}; the model list's `shards`): what each sends")
            print(render_shards(shard_plans, lc_chat_max_tokens=args.lc_chat_max_tokens))
        parts = ", ".join(f"{name.replace('_', ' ')} {seconds:.1f} s" for name, seconds in timings.items())
        print(f"(planned in {time.perf_counter() - started:.1f} s: {parts}; no model was loaded)", file=sys.stderr)
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``logic-consistency plan``."""
    parser = add_subcommand(
        subparsers, "plan", __doc__, _run, help="count the requests, tokens and API calls of a run, without a model"
    )
    parser.add_argument("--tasks", required=True, action="append", help="tasks or groups, comma-separated, as lm_eval")
    parser.add_argument("--limit", type=float, default=None, help="lm_eval's --limit")
    parser.add_argument("--metadata", default=None, help="lm_eval's --metadata (a JSON object)")
    parser.add_argument(
        "--apply_chat_template", action="store_true", help="format prompts with the tokenizer's chat template"
    )
    parser.add_argument("--system_instruction", default=None, help="lm_eval's --system_instruction")
    parser.add_argument("--fewshot_as_multiturn", action="store_true", help="lm_eval's --fewshot_as_multiturn")
    parser.add_argument(
        "--tokenizer",
        default=DEFAULT_TOKENIZER,
        help=f"embedded model name or local tokenizer folder (default {DEFAULT_TOKENIZER})",
    )
    parser.add_argument(
        "--lc-chat-max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        dest="lc_chat_max_tokens",
        help=f"lc-chat's max_tokens per choice call (generated-token bound; default {DEFAULT_MAX_TOKENS}, lc-chat's own)",
    )
    parser.add_argument("--price-in", type=float, default=None, dest="price_in", help="USD per million prompt tokens")
    parser.add_argument(
        "--price-out", type=float, default=None, dest="price_out", help="USD per million generated tokens"
    )
    parser.add_argument(
        "--shards",
        type=int,
        default=1,
        help="also plan each of N shards (a model list's `shards`): documents, tokens and calls per shard",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    return parser
