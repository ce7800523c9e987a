"""``logic-consistency plan``: print what a run would cost, before any model is loaded.

Per task: documents, requests and distinct contexts by request type, prompt tokens (a named
tokenizer), the bound on generated tokens, and API calls on two chat backends: ``lc-chat`` (one
call per distinct context of one-word choices, read from ``top_logprobs``, bounded by
``--lc-chat-max-tokens``; a free log-likelihood continuation such as CTP's is refused) and
``local-chat-completions`` (generation only). Counts come from
:func:`~logic_consistency.harness_ext.plan.plan_tasks`: exact for first stages, bounds (``≤``) and
estimates (``≈``) for later stages, one simulated run for PairS rounds. ``--price-in`` / ``--price-out`` (USD per million tokens) add dollars.
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
from logic_consistency.subcommands import add_subcommand

if TYPE_CHECKING:  # the CLI parser imports this module: lm-eval loads only when a plan runs
    from logic_consistency.harness_ext.plan import StageBound, TaskPlan

DEFAULT_TOKENIZER = "smollm2-135m-instruct"
LL, GEN = "loglikelihood", "generate_until"


def _parts(plan: TaskPlan) -> list[Any]:
    return [tally for part in (plan.building, plan.final) for tally in part.values()]


def counts(plan: TaskPlan) -> dict[str, Any]:
    """Requests, distinct contexts and generated-token bound by request type (exact parts + bounds)."""
    out: dict[str, Any] = {}
    for part in (plan.building, plan.final):
        for kind, tally in part.items():
            row = out.setdefault(kind, {"requests": 0, "contexts": 0, "generated_tokens_bound": 0})
            row["requests"] += tally.requests
            row["contexts"] += len(tally.contexts)
            row["generated_tokens_bound"] += tally.generated_tokens
    return out


def api_costs(plan: TaskPlan, *, lc_chat_max_tokens: int) -> dict[str, dict[str, Any]]:
    """Calls, prompt tokens and generated-token bound of ``plan`` on ``lc-chat`` and ``local-chat-completions``."""
    lc: dict[str, Any] = {"calls": 0, "prompt_tokens": 0, "generated_tokens_bound": 0, "runnable": True, "reason": ""}
    chat: dict[str, Any] = {"calls": 0, "prompt_tokens": 0, "generated_tokens_bound": 0, "runnable": True, "reason": ""}
    multi = 0
    for part in (plan.building, plan.final):
        for kind, tally in part.items():
            if kind == GEN:
                for row in (lc, chat):
                    row["calls"] += tally.requests
                    row["prompt_tokens"] += tally.request_tokens
                    row["generated_tokens_bound"] += tally.generated_tokens
            elif kind == LL:
                multi += len(tally.multi_token_contexts)
                lc["calls"] += len(tally.contexts)
                lc["prompt_tokens"] += tally.distinct_tokens
                lc["generated_tokens_bound"] += len(tally.contexts) * lc_chat_max_tokens
                chat["runnable"], chat["reason"] = (
                    False,
                    "log-likelihood requests: chat backends have none (run the _generate twin)",
                )
            else:
                for row in (lc, chat):
                    row["runnable"], row["reason"] = False, f"{kind} requests are not supported on chat backends"
    for bound in plan.later_stages:
        _add_bound(bound, lc, chat, lc_chat_max_tokens)
        if bound.request_type == LL and not bound.single_choice:
            multi += bound.contexts or 0
    if multi:
        lc["runnable"] = False
        lc["reason"] = f"{multi} log-likelihood contexts with free (multi-token) continuations are refused by lc-chat"
    return {"lc-chat": lc, "local-chat-completions": chat}


def _add_bound(bound: StageBound, lc: dict[str, Any], chat: dict[str, Any], lc_chat_max_tokens: int) -> None:
    if bound.contexts is None:
        for row in (lc, chat):
            row["bounds_unknown"] = True
        return
    tokens = bound.context_tokens_estimate or 0
    if bound.request_type == GEN:
        for row in (lc, chat):
            row["calls"] += bound.requests or 0
            row["prompt_tokens"] += tokens
            row["generated_tokens_bound"] += bound.generated_tokens
    else:
        lc["calls"] += bound.contexts
        lc["prompt_tokens"] += tokens
        lc["generated_tokens_bound"] += bound.contexts * lc_chat_max_tokens
        chat["runnable"], chat["reason"] = (
            False,
            "log-likelihood requests: chat backends have none (run the _generate twin)",
        )


def repeated_costs(plan: TaskPlan, *, lc_chat_max_tokens: int) -> dict[str, int]:
    """What the plan's totals drop for ``plan``: earlier-stage requests an earlier task already asked."""
    out = {"requests": 0, "calls": 0, "request_tokens": 0, "call_tokens": 0, "generated_tokens": 0, "ll_calls": 0}
    for kind, tally in plan.repeated.items():
        out["requests"] += tally.requests
        out["request_tokens"] += tally.request_tokens
        if kind == GEN:
            out["calls"] += tally.requests
            out["call_tokens"] += tally.request_tokens
            out["generated_tokens"] += tally.generated_tokens
        else:
            out["ll_calls"] += len(tally.contexts)
            out["call_tokens"] += tally.distinct_tokens
            out["generated_tokens"] += len(tally.contexts) * lc_chat_max_tokens
    return out


def dollars(cost: dict[str, Any], price_in: float | None, price_out: float | None) -> float | None:
    """USD of one backend's cost at the given prices per million tokens (``None`` without prices)."""
    if price_in is None and price_out is None:
        return None
    return float(cost["prompt_tokens"] * (price_in or 0.0) + cost["generated_tokens_bound"] * (price_out or 0.0)) / 1e6


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


def _n(value: float | None, prefix: str = "") -> str:
    if value is None:
        return "?"
    return f"{prefix}{value:,.0f}" if not isinstance(value, float) or value >= 100 else f"{prefix}{value:,.2f}"


def render(
    plans: list[TaskPlan], *, lc_chat_max_tokens: int, price_in: float | None, price_out: float | None, tokenizer: str
) -> str:
    """The plan as a Markdown table plus notes (what ``logic-consistency plan`` prints)."""
    priced = price_in is not None or price_out is not None
    head = [
        "task",
        "docs",
        "loglikelihood req / contexts",
        "generate req / contexts",
        "prompt tokens",
        "gen tokens ≤",
        "lc-chat calls",
        "lc-chat prompt tokens",
        "local-chat calls",
    ]
    if priced:
        head += ["lc-chat $", "local-chat $"]
    rows, notes = [], []
    totals: dict[str, Any] = {key: 0 for key in ("docs", "tokens", "tokens_estimate", "gen", "lc", "lc_tokens", "chat")}
    totals.update(lc_usd=0.0, chat_usd=0.0)
    for plan in plans:
        c = counts(plan)
        costs = api_costs(plan, lc_chat_max_tokens=lc_chat_max_tokens)
        lc, chat = costs["lc-chat"], costs["local-chat-completions"]
        ll, gen = c.get(LL, {}), c.get(GEN, {})
        later = plan.tokens.get("later_stage_tokens_estimate", 0)
        prompt = plan.tokens.get("request_tokens", 0) + later
        gen_bound = sum(row["generated_tokens_bound"] for row in c.values()) + sum(
            b.generated_tokens for b in plan.later_stages
        )
        ll_cell = f"{_n(ll.get('requests', 0))} / {_n(ll.get('contexts', 0))}"
        gen_cell = f"{_n(gen.get('requests', 0))} / {_n(gen.get('contexts', 0))}"
        for bound in plan.later_stages:
            extra = f" + ≤{_n(bound.requests)} / {_n(bound.contexts)}"
            if bound.request_type == LL:
                ll_cell += extra
            else:
                gen_cell += extra
        row = [
            plan.task,
            _n(plan.documents),
            ll_cell,
            gen_cell,
            ("≈" if later else "") + _n(prompt),
            _n(gen_bound),
            _n(lc["calls"]) if lc["runnable"] else "refused",
            ("≈" if later else "") + _n(lc["prompt_tokens"]) if lc["runnable"] else "-",
            _n(chat["calls"]) if chat["runnable"] else "not runnable",
        ]
        lc_usd, chat_usd = dollars(lc, price_in, price_out), dollars(chat, price_in, price_out)
        if priced:
            row += [_n(lc_usd, "$") if lc["runnable"] else "-", _n(chat_usd, "$") if chat["runnable"] else "-"]
        rows.append(row)
        again = repeated_costs(plan, lc_chat_max_tokens=lc_chat_max_tokens)
        totals["docs"] += plan.documents
        totals["tokens"] += prompt - later - again["request_tokens"]
        totals["tokens_estimate"] += later
        totals["gen"] += gen_bound - again["generated_tokens"]
        # the repeated requests, priced alike on both backends (one run sends them once)
        again_cost = {"prompt_tokens": again["call_tokens"], "generated_tokens_bound": again["generated_tokens"]}
        again_usd = dollars(again_cost, price_in, price_out) or 0.0
        if lc["runnable"]:
            totals["lc"] += lc["calls"] - again["calls"] - again["ll_calls"]
            totals["lc_tokens"] += lc["prompt_tokens"] - again["call_tokens"]
            totals["lc_usd"] += (lc_usd or 0.0) - again_usd
        if chat["runnable"]:
            totals["chat"] += chat["calls"] - again["calls"]
            totals["chat_usd"] += (chat_usd or 0.0) - again_usd
        if again["requests"]:
            notes.append(
                f"{plan.task}: {_n(again['requests'])} of its earlier-stage requests repeat an earlier "
                "task's; one lm_eval run sends them once, and the total counts them once"
            )
        for label, value in plan.notes:
            notes.append(f"{plan.task}: {label}: {_n(value) if isinstance(value, int) else value}")
        for bound in plan.later_stages:
            if bound.requests is None:
                notes.append(f"{plan.task}: stage {bound.stage!r}: its prompts hook declares no count (unknown)")
        for name, cost in costs.items():
            if not cost["runnable"]:
                notes.append(f"{plan.task}: not runnable on {name}: {cost['reason']}")
    tokens_cell = _n(totals["tokens"]) + (f" + ≈{_n(totals['tokens_estimate'])}" if totals["tokens_estimate"] else "")
    total_row = [
        "total (API columns: runnable tasks)",
        _n(totals["docs"]),
        "",
        "",
        tokens_cell,
        _n(totals["gen"]),
        _n(totals["lc"]),
        _n(totals["lc_tokens"]),
        _n(totals["chat"]),
    ]
    if priced:
        total_row += [_n(totals["lc_usd"], "$"), _n(totals["chat_usd"], "$")]
    rows.append(total_row)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += [
        "",
        f"Tokens: {tokenizer} tokenizer (an approximation for any other model). ≤: bound on a later "
        "stage (its prompts need the earlier answers); ≈: estimated later-stage prompt tokens. "
        f"lc-chat: one call per distinct single-choice context (max_tokens {lc_chat_max_tokens}) "
        "+ one per generation. Earlier-stage requests shared by several tasks count once in the total.",
    ]
    if priced:
        lines.append(
            f"Prices: ${price_in or 0:g} / ${price_out or 0:g} per million prompt / generated tokens; "
            "generated tokens at their bound."
        )
    lines += [f"- {note}" for note in notes]
    return "\n".join(lines)


def _check_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """Validate the options before anything loads; errors name the option. Returns the metadata."""
    for option, value in (("--price-in", args.price_in), ("--price-out", args.price_out)):
        if value is not None and (not math.isfinite(value) or value < 0):
            raise ValueError(f"{option} must be a finite number >= 0 (USD per million tokens), got {value}")
    if args.limit is not None and (not math.isfinite(args.limit) or args.limit <= 0):
        raise ValueError(f"--limit must be > 0 (a document count, or a fraction below 1), got {args.limit}")
    from logic_consistency.harness_ext.models import EMBEDDED_MODELS

    if args.tokenizer not in EMBEDDED_MODELS and not Path(args.tokenizer).is_dir():
        raise ValueError(
            f"--tokenizer {args.tokenizer!r}: neither an embedded model ({', '.join(EMBEDDED_MODELS)}) "
            "nor a local tokenizer folder"
        )
    if args.lc_chat_max_tokens < 1:
        raise ValueError(f"--lc-chat-max-tokens must be >= 1, got {args.lc_chat_max_tokens}")
    if args.metadata is None:
        return None
    try:
        metadata = json.loads(args.metadata)
    except json.JSONDecodeError as error:
        raise ValueError(f"--metadata: not valid JSON ({error.msg}): {args.metadata!r}") from None
    if not isinstance(metadata, dict):
        raise ValueError(f"--metadata must be a JSON object, got {args.metadata!r}")
    return metadata


def _run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    metadata = _check_options(args)
    from logic_consistency.harness_ext.plan import plan_tasks

    tasks = [name for names in args.tasks for name in names.split(",") if name]
    if not tasks:
        raise ValueError("--tasks names no task")
    timings: dict[str, float] = {}
    plans = plan_tasks(
        tasks,
        limit=args.limit,
        metadata=metadata,
        timings=timings,
        apply_chat_template=args.apply_chat_template,
        system_instruction=args.system_instruction,
        fewshot_as_multiturn=args.fewshot_as_multiturn,
        tokenizer=args.tokenizer,
    )
    options = {
        "lc_chat_max_tokens": args.lc_chat_max_tokens,
        "price_in": args.price_in,
        "price_out": args.price_out,
        "tokenizer": args.tokenizer,
    }
    if args.json:
        print(json.dumps(as_json(plans, **options), indent=1))
    else:
        print(render(plans, **options))
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
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    return parser
