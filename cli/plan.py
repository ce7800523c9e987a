"""``logic-consistency plan --tasks ...``: what a run would cost, before any model is loaded.

A thin layer over :func:`logic_consistency.harness_ext.plan.report.plan_run`: prints the table (or
``--json``) and, on standard error, how long planning took.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from logic_consistency.harness_ext.chat.backend import DEFAULT_MAX_TOKENS
from logic_consistency.harness_ext.plan import report as plan_report
from logic_consistency.harness_ext.plan.report import DEFAULT_TOKENIZER

from .subcommand import add_subcommand, options_from

__all__ = ["add_cli"]


def _run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    options = options_from(plan_report.PlanOptions, args)
    run = plan_report.plan_run(options)
    if args.json:
        report = plan_report.as_json(run.plans, **options.costing())
        if run.shard_plans:
            report["shards"] = run.shards_json(lc_chat_max_tokens=options.lc_chat_max_tokens)
        print(json.dumps(report, indent=1))
    else:
        print(plan_report.render(run.plans, **options.costing()))
        if run.shard_plans:
            print(f"\nShards (LOGIC_CONSISTENCY_SHARD=i/{options.shards}; the model list's `shards`): what each sends")
            print(plan_report.render_shards(run.shard_plans, lc_chat_max_tokens=options.lc_chat_max_tokens))
        parts = ", ".join(f"{name.replace('_', ' ')} {seconds:.1f} s" for name, seconds in run.timings.items())
        print(f"(planned in {time.perf_counter() - started:.1f} s: {parts}; no model was loaded)", file=sys.stderr)
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``logic-consistency plan``."""
    parser = add_subcommand(subparsers, "plan", plan_report.__doc__, _run)
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
