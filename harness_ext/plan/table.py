"""The plan's figures per task (requests, contexts, tokens, API calls, dollars) and its Markdown table.

What each figure means is stated in :mod:`logic_consistency.harness_ext.plan.report`, the command
that prints them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the CLI parser imports this module: lm-eval loads only when a plan runs
    from logic_consistency.harness_ext.plan.counts import StageBound, TaskPlan

__all__ = ["api_costs", "counts", "dollars", "render", "render_shards", "repeated_costs", "shard_totals"]

LL, GEN = "loglikelihood", "generate_until"
#: Why a plan with log-likelihood requests cannot run on a chat backend other than ``lc-chat``.
_NO_LOGLIKELIHOOD = "log-likelihood requests: chat backends have none (run the _generate twin)"


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
            multi += _add_tally(kind, tally, lc, chat, lc_chat_max_tokens)
    for bound in plan.later_stages:
        _add_bound(bound, lc, chat, lc_chat_max_tokens)
        if bound.request_type == LL and not bound.single_choice:
            multi += bound.contexts or 0
    if multi:
        lc["runnable"] = False
        lc["reason"] = f"{multi} log-likelihood contexts with free (multi-token) continuations are refused by lc-chat"
    return {"lc-chat": lc, "local-chat-completions": chat}


def _add_tally(kind: str, tally: Any, lc: dict[str, Any], chat: dict[str, Any], lc_chat_max_tokens: int) -> int:
    """Add one request type's exact counts to both backends' rows; returns its multi-token contexts (lc-chat
    refuses them)."""
    if kind == GEN:
        for row in (lc, chat):
            row["calls"] += tally.requests
            row["prompt_tokens"] += tally.request_tokens
            row["generated_tokens_bound"] += tally.generated_tokens
        return 0
    if kind != LL:
        for row in (lc, chat):
            row["runnable"], row["reason"] = False, f"{kind} requests are not supported on chat backends"
        return 0
    lc["calls"] += len(tally.contexts)
    lc["prompt_tokens"] += tally.distinct_tokens
    lc["generated_tokens_bound"] += len(tally.contexts) * lc_chat_max_tokens
    chat["runnable"], chat["reason"] = False, _NO_LOGLIKELIHOOD
    return len(tally.multi_token_contexts)


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
        chat["runnable"], chat["reason"] = False, _NO_LOGLIKELIHOOD


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
    """USD of one backend's cost at the given prices per million tokens (``None`` without prices).

    Computed exactly, then rounded once; a cost too large for a float is refused (:func:`check_finite`).
    """
    if price_in is None and price_out is None:
        return None
    exact = (
        Fraction(cost["prompt_tokens"]) * Fraction(price_in or 0.0)
        + Fraction(cost["generated_tokens_bound"]) * Fraction(price_out or 0.0)
    ) / 1_000_000
    try:
        return float(exact)
    except OverflowError:
        return check_finite(math.inf, price_in, price_out)


def check_finite(usd: float, price_in: float | None, price_out: float | None) -> float:
    """``usd``, or a ``ValueError`` naming the prices when it overflowed to infinity."""
    if math.isfinite(usd):
        return usd
    raise ValueError(
        f"--price-in {price_in or 0:g} / --price-out {price_out or 0:g}: the cost does not fit a number "
        "(it overflows to infinity); give the prices in USD per million tokens"
    )


def _n(value: float | None, prefix: str = "") -> str:
    if value is None:
        return "?"
    if isinstance(value, float) and value >= 1e15:  # beyond a float's exact digits: say it in figures that are
        return f"{prefix}{value:.6g}"
    return f"{prefix}{value:,.0f}" if not isinstance(value, float) or value >= 100 else f"{prefix}{value:,.2f}"


@dataclass(frozen=True)
class Prices:
    """USD per million prompt / generated tokens; both ``None`` when the plan is not priced."""

    price_in: float | None
    price_out: float | None

    @property
    def priced(self) -> bool:
        return self.price_in is not None or self.price_out is not None

    def usd(self, cost: dict[str, Any]) -> float | None:
        return dollars(cost, self.price_in, self.price_out)


@dataclass
class Totals:
    """The plan's total row: repeated earlier-stage requests counted once, API columns runnable tasks only."""

    docs: int = 0
    tokens: int = 0
    tokens_estimate: int = 0
    #: Whether a later stage's tokens in ``tokens_estimate`` are an estimate (``≈``), not a bound (``≤``).
    estimated: bool = False
    gen: int = 0
    lc: int = 0
    lc_tokens: int = 0
    chat: int = 0
    lc_usd: float = 0.0
    chat_usd: float = 0.0


@dataclass(frozen=True)
class TaskCosts:
    """One task's figures, as the table needs them."""

    plan: TaskPlan
    counts: dict[str, Any]
    lc: dict[str, Any]
    chat: dict[str, Any]
    #: Estimated later-stage prompt tokens (0 for a single-stage task).
    later: int
    prompt: int
    gen_bound: int
    again: dict[str, int]

    @classmethod
    def of(cls, plan: TaskPlan, *, lc_chat_max_tokens: int) -> TaskCosts:
        c = counts(plan)
        costs = api_costs(plan, lc_chat_max_tokens=lc_chat_max_tokens)
        later = plan.tokens.get("later_stage_tokens_estimate", 0)
        gen_bound = sum(row["generated_tokens_bound"] for row in c.values()) + sum(
            b.generated_tokens for b in plan.later_stages
        )
        return cls(
            plan=plan,
            counts=c,
            lc=costs["lc-chat"],
            chat=costs["local-chat-completions"],
            later=later,
            prompt=plan.tokens.get("request_tokens", 0) + later,
            gen_bound=gen_bound,
            again=repeated_costs(plan, lc_chat_max_tokens=lc_chat_max_tokens),
        )

    @property
    def mark(self) -> str:
        """``≤`` when every later stage's tokens are a rendered bound, ``≈`` when one is an estimate."""
        if not self.later:
            return ""
        estimated = any(b.bounded is None and b.contexts is not None for b in self.plan.later_stages)
        return "≈" if estimated else "≤"


def _header(prices: Prices) -> list[str]:
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
    return head + ["lc-chat $", "local-chat $"] if prices.priced else head


def _request_cells(task: TaskCosts) -> tuple[str, str]:
    """The log-likelihood and generation cells: exact requests / contexts, then each later stage's bound."""
    ll, gen = task.counts.get(LL, {}), task.counts.get(GEN, {})
    ll_cell = f"{_n(ll.get('requests', 0))} / {_n(ll.get('contexts', 0))}"
    gen_cell = f"{_n(gen.get('requests', 0))} / {_n(gen.get('contexts', 0))}"
    for bound in task.plan.later_stages:
        extra = f" + ≤{_n(bound.requests)} / {_n(bound.contexts)}"
        if bound.request_type == LL:
            ll_cell += extra
        else:
            gen_cell += extra
    return ll_cell, gen_cell


def _task_row(task: TaskCosts, prices: Prices) -> list[str]:
    lc, chat, approx = task.lc, task.chat, task.mark
    row = [
        task.plan.task,
        _n(task.plan.documents),
        *_request_cells(task),
        approx + _n(task.prompt),
        _n(task.gen_bound),
        _n(lc["calls"]) if lc["runnable"] else "refused",
        approx + _n(lc["prompt_tokens"]) if lc["runnable"] else "-",
        _n(chat["calls"]) if chat["runnable"] else "not runnable",
    ]
    if prices.priced:
        row += [
            _n(prices.usd(lc), "$") if lc["runnable"] else "-",
            _n(prices.usd(chat), "$") if chat["runnable"] else "-",
        ]
    return row


def _add_to_totals(totals: Totals, task: TaskCosts, prices: Prices) -> None:
    """Add one task, less the earlier-stage requests an earlier task already asked (one run sends them once)."""
    again = task.again
    totals.docs += task.plan.documents
    totals.tokens += task.prompt - task.later - again["request_tokens"]
    totals.tokens_estimate += task.later
    totals.estimated |= task.mark == "≈"
    totals.gen += task.gen_bound - again["generated_tokens"]
    # the repeated requests, priced alike on both backends
    again_usd = prices.usd({"prompt_tokens": again["call_tokens"], "generated_tokens_bound": again["generated_tokens"]})
    if task.lc["runnable"]:
        totals.lc += task.lc["calls"] - again["calls"] - again["ll_calls"]
        totals.lc_tokens += task.lc["prompt_tokens"] - again["call_tokens"]
        totals.lc_usd += (prices.usd(task.lc) or 0.0) - (again_usd or 0.0)
    if task.chat["runnable"]:
        totals.chat += task.chat["calls"] - again["calls"]
        totals.chat_usd += (prices.usd(task.chat) or 0.0) - (again_usd or 0.0)


def _task_notes(task: TaskCosts) -> list[str]:
    name, notes = task.plan.task, []
    if task.again["requests"]:
        notes.append(
            f"{name}: {_n(task.again['requests'])} of its earlier-stage requests repeat an earlier "
            "task's; one lm_eval run sends them once, and the total counts them once"
        )
    for label, value in task.plan.notes:
        notes.append(f"{name}: {label}: {_n(value) if isinstance(value, int) else value}")
    for bound in task.plan.later_stages:
        if bound.requests is None:
            notes.append(f"{name}: stage {bound.stage!r}: its prompts hook declares no count (unknown)")
    for backend, cost in (("lc-chat", task.lc), ("local-chat-completions", task.chat)):
        if not cost["runnable"]:
            notes.append(f"{name}: not runnable on {backend}: {cost['reason']}")
    return notes


def _later_cell(totals: Totals) -> str:
    return f" + {'≈' if totals.estimated else '≤'}{_n(totals.tokens_estimate)}"


def _total_row(totals: Totals, prices: Prices) -> list[str]:
    tokens_cell = _n(totals.tokens) + (_later_cell(totals) if totals.tokens_estimate else "")
    row = [
        "total (API columns: runnable tasks)",
        _n(totals.docs),
        "",
        "",
        tokens_cell,
        _n(totals.gen),
        _n(totals.lc),
        _n(totals.lc_tokens),
        _n(totals.chat),
    ]
    if not prices.priced:
        return row
    usd = [check_finite(value, prices.price_in, prices.price_out) for value in (totals.lc_usd, totals.chat_usd)]
    return row + [_n(value, "$") for value in usd]


def _footer(prices: Prices, *, tokenizer: str, lc_chat_max_tokens: int) -> list[str]:
    lines = [
        "",
        f"Tokens: {tokenizer} tokenizer (an approximation for any other model). ≤: bound on a later "
        "stage (its prompts need the earlier answers; its prompt tokens rendered with each quoted earlier "
        "answer at its generation bound); ≈: estimated later-stage prompt tokens (a hook that reads "
        "structured earlier answers). "
        f"lc-chat: one call per distinct single-choice context (max_tokens {lc_chat_max_tokens}) "
        "+ one per generation. Earlier-stage requests shared by several tasks count once in the total.",
    ]
    if prices.priced:
        lines.append(
            f"Prices: ${prices.price_in or 0:g} / ${prices.price_out or 0:g} per million prompt / generated tokens; "
            "generated tokens at their bound."
        )
    return lines


def render(
    plans: list[TaskPlan], *, lc_chat_max_tokens: int, price_in: float | None, price_out: float | None, tokenizer: str
) -> str:
    """The plan as a Markdown table plus notes (what ``logic-consistency plan`` prints)."""
    prices = Prices(price_in, price_out)
    head = _header(prices)
    rows, notes, totals = [], [], Totals()
    for plan in plans:
        task = TaskCosts.of(plan, lc_chat_max_tokens=lc_chat_max_tokens)
        rows.append(_task_row(task, prices))
        _add_to_totals(totals, task, prices)
        notes += _task_notes(task)
    rows.append(_total_row(totals, prices))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += _footer(prices, tokenizer=tokenizer, lc_chat_max_tokens=lc_chat_max_tokens)
    lines += [f"- {note}" for note in notes]
    return "\n".join(lines)


def shard_totals(plans: list[TaskPlan], *, lc_chat_max_tokens: int) -> Totals:
    """The total row of one shard's plans (as :func:`render` sums a whole plan, unpriced)."""
    totals, prices = Totals(), Prices(None, None)
    for plan in plans:
        _add_to_totals(totals, TaskCosts.of(plan, lc_chat_max_tokens=lc_chat_max_tokens), prices)
    return totals


def render_shards(shard_plans: list[list[TaskPlan]], *, lc_chat_max_tokens: int) -> str:
    """Per shard ``i/N`` of the run: documents, prompt tokens and calls (what each shard will send)."""
    head = [
        "shard",
        "docs",
        "prompt tokens",
        "gen tokens ≤",
        "lc-chat calls",
        "lc-chat prompt tokens",
        "local-chat calls",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    count = len(shard_plans)
    for index, plans in enumerate(shard_plans):
        t = shard_totals(plans, lc_chat_max_tokens=lc_chat_max_tokens)
        tokens = _n(t.tokens) + (_later_cell(t) if t.tokens_estimate else "")
        cells = [f"{index}/{count}", _n(t.docs), tokens, _n(t.gen), _n(t.lc), _n(t.lc_tokens), _n(t.chat)]
        lines.append("| " + " | ".join(cells) + " |")
    for index, plans in enumerate(shard_plans):
        empty = [plan.task for plan in plans if not plan.documents]
        if empty:
            what = "any task" if len(empty) == len(plans) else f"task(s) {', '.join(empty)}"
            lines.append(f"\nshard {index}/{count} has no document of {what}: nothing to send there")
    return "\n".join(lines)
