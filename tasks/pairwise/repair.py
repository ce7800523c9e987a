"""REPAIR: rank estimation and preference augmentation (Liu et al., "Aligning with Logic", section 4,
Figure 6, Tables 2-3 and 5-7): turn sparse, noisy pairwise preferences into consistent
fine-tuning data; ``logic-consistency improve repair`` builds this data, fine-tunes on it and re-measures.

Per instance: score the items from all comparisons (win-loss rate, the paper's choice; Elo or
Bradley-Terry, Appendix N), extrapolate every pair with different scores (ties and uncompared items
stay uncompared, the paper's partial order), and write each pair in both orders, and in a second
file also with the negated question. Printed before and after, as Table 2: comparisons, s_tran(K)
and s_comm of the preference set, and the refined ranking's agreement with the input. Inputs: a
preferences JSONL (``instance_id``, ``item_a`` shown first, ``item_b``, ``winner``), pairwise
``--log_samples`` files, a loader's human scores or Summarize from Feedback; ``--flip P`` adds
label noise first (the paper uses P = 0.1).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from logic_consistency.common import check_link_loop
from logic_consistency.metrics import UndefinedMetricError, transitivity
from logic_consistency.metrics.ranking import RANKING_METHODS, rank_scores
from logic_consistency.outputs import atomic_write, atomic_write_json, check_outputs, jsonl_chunks

from .preferences import (
    Comparison,
    Instance,
    PreferenceSet,
    from_loader,
    from_samples,
    from_summarize_feedback,
    read_preferences,
)

__all__ = [
    "Comparison",
    "Instance",
    "PreferenceSet",
    "RepairOptions",
    "RepairRun",
    "chat_records",
    "data_statistics",
    "flip_labels",
    "from_loader",
    "from_samples",
    "from_summarize_feedback",
    "read_preferences",
    "repair",
    "run_repair",
]

METHOD_ALIASES = {"win_loss": "win_loss", "elo": "elo", "bt": "bradley_terry", "bradley_terry": "bradley_terry"}


def flip_labels(prefs: PreferenceSet, share: float, *, seed: int = 0) -> tuple[PreferenceSet, int]:
    """Flip the winner of a random ``share`` of all comparisons (``round(share * total)`` of them,
    drawn without replacement from ``numpy.random.default_rng(seed)``); the paper's noise (10%)."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"flip share must be in [0, 1], got {share!r}")
    slots = [(key, k) for key, inst in prefs.items() for k in range(len(inst.comparisons))]
    count = round(share * len(slots))
    chosen = {slots[i] for i in np.random.default_rng(seed).choice(len(slots), size=count, replace=False)}
    out: PreferenceSet = {}
    for key, inst in prefs.items():
        comps = [
            Comparison(c.first, c.second, c.loser) if (key, k) in chosen else c for k, c in enumerate(inst.comparisons)
        ]
        out[key] = Instance(context=inst.context, texts=dict(inst.texts), comparisons=comps)
    return out, count


# ------------------------------------------------------------------------------------ core
def _index(instance: Instance) -> dict[str, int]:
    return {item: k for k, item in enumerate(instance.texts)}


def instance_scores(instance: Instance, method: str = "win_loss") -> dict[str, float]:
    """Score of every item of one instance (NaN for items in no comparison)."""
    index = _index(instance)
    winners = [index[c.winner] for c in instance.comparisons]
    losers = [index[c.loser] for c in instance.comparisons]
    scores = rank_scores(np.array(winners, dtype=np.int64), np.array(losers, dtype=np.int64), len(index), method=method)
    return {item: float(scores[k]) for item, k in index.items()}


def repair(prefs: PreferenceSet, *, method: str = "win_loss") -> PreferenceSet:
    """The REPAIR-ed preference set: every pair with different scores, in both presentation orders.

    Args:
        prefs: input preferences.
        method: ``win_loss`` (default), ``elo`` or ``bradley_terry`` (alias ``bt``). Negated
            records are added by :func:`chat_records`; the set holds "better" judgements only.

    Returns:
        A new preference set with the same instances, contexts and texts.
    """
    method = METHOD_ALIASES.get(method, method)
    if method not in RANKING_METHODS:
        raise ValueError(f"method must be one of win_loss, elo, bt, got {method!r}")
    out: PreferenceSet = {}
    for key, instance in prefs.items():
        scores = instance_scores(instance, method)
        items = list(instance.texts)
        refined = Instance(context=instance.context, texts=dict(instance.texts))
        for a_pos, a in enumerate(items):
            for b in items[a_pos + 1 :]:
                sa, sb = scores[a], scores[b]
                if math.isnan(sa) or math.isnan(sb) or sa == sb:
                    continue  # unknown relation: not compared (partial order)
                winner = a if sa > sb else b
                refined.comparisons.append(Comparison(a, b, winner))
                refined.comparisons.append(Comparison(b, a, winner))
        out[key] = refined
    return out


# ----------------------------------------------------------------------------------- statistics
def _instance_stats(instance: Instance, ks: Sequence[int]) -> dict[str, float | None]:
    index = _index(instance)
    n = len(index)
    wins = np.zeros((n, n), dtype=bool)
    winners_by_pair: dict[frozenset[str], set[str]] = defaultdict(set)
    orders_by_pair: dict[frozenset[str], set[str]] = defaultdict(set)
    for c in instance.comparisons:
        wins[index[c.winner], index[c.loser]] = True
        pair = frozenset((c.first, c.second))
        winners_by_pair[pair].add(c.winner)
        orders_by_pair[pair].add(c.first)
    out: dict[str, float | None] = {}
    for k in ks:
        try:
            out[f"s_tran_{k}"] = transitivity(wins, k) if n >= k else None
        except UndefinedMetricError:
            out[f"s_tran_{k}"] = None
    both = [pair for pair, firsts in orders_by_pair.items() if len(firsts) == 2]
    out["s_comm"] = float(np.mean([len(winners_by_pair[p]) == 1 for p in both])) if both else None
    return out


def data_statistics(prefs: PreferenceSet, *, ks: Sequence[int] = (3, 5)) -> dict[str, Any]:
    """Comparisons, comparisons per instance, and instance-averaged s_tran(K) / s_comm (None when
    undefined for every instance) with the number of instances each is defined on."""
    per_instance = [_instance_stats(inst, ks) for inst in prefs.values()]
    n_comparisons = sum(len(inst.comparisons) for inst in prefs.values())
    stats: dict[str, Any] = {
        "instances": len(prefs),
        "comparisons": n_comparisons,
        "comparisons_per_instance": n_comparisons / len(prefs) if prefs else None,
    }
    for name in [f"s_tran_{k}" for k in ks] + ["s_comm"]:
        values = [float(value) for s in per_instance if (value := s[name]) is not None]
        stats[name] = float(np.mean(values)) if values else None
        stats[f"{name}_instances"] = len(values)
    return stats


def agreement(original: PreferenceSet, scores: dict[str, dict[str, float]]) -> dict[str, float | None]:
    """Share of input comparisons the refined ranking agrees with (strictly), and the tied share.

    Both are ``None`` (undefined, ``null`` in the JSON) when the input holds no comparison.
    """
    agree = tied = total = 0
    for key, instance in original.items():
        for c in instance.comparisons:
            total += 1
            sw, sl = scores[key][c.winner], scores[key][c.loser]
            if sw > sl:
                agree += 1
            elif sw == sl:
                tied += 1
    if not total:
        return {"agreement": None, "tied": None}
    return {"agreement": agree / total, "tied": tied / total}


# --------------------------------------------------------------------------------------- output
# Provenance: the suite's own wording (the paper's REPAIR fine-tuning prompts are not published);
# it follows the suite's pairwise prompts (tasks/pairwise/*/_*_yaml).
DEFAULT_TEMPLATE = (
    "{context_block}Compare the two {noun}s below.\n\n{Noun} A: {text_a}\n\n{Noun} B: {text_b}\n\n"
    "Question: Which {noun} is {relation}? Answer with a single letter, A or B."
)


def chat_records(prefs: PreferenceSet, *, negated: bool, noun: str = "response") -> Iterable[dict[str, Any]]:
    """Chat-style fine-tuning records (``messages``: user prompt, assistant letter) of a
    preference set; with ``negated`` also the "which is worse?" question with the other letter.

    Raises:
        ValueError: an item has no text (chat data needs the texts), naming instance and item.
    """
    for key, instance in prefs.items():
        missing = [item for item, text in instance.texts.items() if text is None]
        if missing:
            raise ValueError(
                f"instance {key!r}: item {missing[0]!r} has no text; chat-style data needs text_a/text_b "
                "in the input (use --ids-only to write item ids only)"
            )
        context_block = f"Context: {instance.context}\n\n" if instance.context else ""
        for c in instance.comparisons:
            relations = [("better", c.winner)] + ([("worse", c.loser)] if negated else [])
            for relation, answer_item in relations:
                prompt = DEFAULT_TEMPLATE.format(
                    context_block=context_block,
                    noun=noun,
                    Noun=noun.capitalize(),
                    text_a=instance.texts[c.first],
                    text_b=instance.texts[c.second],
                    relation=relation,
                )
                yield {
                    "messages": [
                        {"role": "user", "content": prompt},
                        {"role": "assistant", "content": "A" if answer_item == c.first else "B"},
                    ],
                    "instance_id": key,
                    "item_a": c.first,
                    "item_b": c.second,
                    "relation": relation,
                }


def id_records(prefs: PreferenceSet, *, negated: bool) -> Iterable[dict[str, Any]]:
    """The same records as :func:`chat_records` with item ids instead of messages."""
    for key, instance in prefs.items():
        for c in instance.comparisons:
            yield {
                "instance_id": key,
                "item_a": c.first,
                "item_b": c.second,
                "relation": "better",
                "answer_item": c.winner,
            }
            if negated:
                yield {
                    "instance_id": key,
                    "item_a": c.first,
                    "item_b": c.second,
                    "relation": "worse",
                    "answer_item": c.loser,
                }


# ------------------------------------------------------------------ the ``repair`` command's run
OUTPUTS = ("repaired.jsonl", "repaired_with_negated.jsonl", "repair_stats.json")


@dataclass(frozen=True)
class RepairOptions:
    """The ``repair`` command's settings, one per option (``input`` or ``loader`` names the input)."""

    out: str
    input: str | None = None
    format: str = "auto"
    loader: str | None = None
    split: str = "validation"
    max_items: int | None = None
    method: str = "win_loss"
    flip: float = 0.0
    seed: int = 0
    ks: tuple[int, ...] = (3, 5)
    noun: str | None = None
    ids_only: bool = False


@dataclass(frozen=True)
class RepairRun:
    """What :func:`run_repair` wrote: ``summary`` (as in ``repair_stats.json``) and the files, in :data:`OUTPUTS` order."""

    summary: dict[str, Any]
    written: list[Path]


def _load(options: RepairOptions) -> tuple[PreferenceSet, list[Path], str]:
    """Read the input named by the options; returns prefs, input files and a noun for prompts."""
    if options.loader:
        if options.input:
            raise ValueError("give either INPUT or --loader, not both")
        return _load_from_loader(options)
    if not options.input:
        raise ValueError("INPUT is required (or --loader)")
    path = Path(options.input)
    check_link_loop(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: input file not found")
    return _load_file(path, options.format)


def _summarize_feedback(split: str = "validation", path: Path | None = None) -> PreferenceSet:
    """The human comparisons of Summarize from Feedback (a split, or a JSONL file of them)."""
    # Deferred, the module's one: the loader imports datasets, which this module needs for no other
    # input (python -X importtime: importing this module takes 2.3 s without it, 5.2 s with it).
    from logic_consistency.tasks.data.summarize_feedback import load_comparisons

    return from_summarize_feedback(load_comparisons(split, path=path))


def _load_from_loader(options: RepairOptions) -> tuple[PreferenceSet, list[Path], str]:
    if options.loader == "summarize_feedback":
        return _summarize_feedback(options.split), [], "summary"
    import importlib

    module = importlib.import_module(f"logic_consistency.tasks.data.{options.loader}")
    rows = module.load(max_items=options.max_items)["test"]
    return from_loader(rows), [], "summary" if options.loader == "summeval" else "item"


def _load_file(path: Path, fmt: str) -> tuple[PreferenceSet, list[Path], str]:
    if fmt == "auto":
        fmt = "samples" if path.name.startswith("samples_") else "jsonl"
    if fmt == "samples":
        prefs, unparseable, ties = from_samples(path)
        if unparseable:
            print(f"{unparseable} unparseable judgements in {path} were skipped")
        if ties:
            print(f"{ties} tied judgements (equal log-likelihoods, no winner) in {path} were skipped")
        return prefs, [path], "item"
    if fmt == "summarize_feedback":
        return _summarize_feedback(path=path), [path], "summary"
    return read_preferences(path), [path], "response"


def run_repair(options: RepairOptions) -> RepairRun:
    """``repair``: read the input, optionally flip labels, REPAIR and write the :data:`OUTPUTS` into ``options.out``."""
    method = METHOD_ALIASES.get(options.method)
    if method is None:
        raise ValueError(f"--method must be one of win_loss, elo, bt, got {options.method!r}")
    targets = [Path(options.out) / name for name in OUTPUTS]
    # Checked before reading, so that no input, however malformed, is ever written over.
    check_outputs([(target, "json") for target in targets], [options.input] if options.input else [], argument="--out")
    prefs, _, noun = _load(options)
    flipped = 0
    if options.flip:
        prefs, flipped = flip_labels(prefs, options.flip, seed=options.seed)
    before = data_statistics(prefs, ks=options.ks)
    repaired = repair(prefs, method=method)
    after = data_statistics(repaired, ks=options.ks)
    agree = agreement(prefs, {key: instance_scores(inst, method) for key, inst in prefs.items()})
    if options.ids_only:
        plain, with_negated = list(id_records(repaired, negated=False)), list(id_records(repaired, negated=True))
    else:  # materialised first, so that a missing text fails before anything is written
        named = options.noun or noun
        plain = list(chat_records(repaired, negated=False, noun=named))
        with_negated = list(chat_records(repaired, negated=True, noun=named))
    atomic_write(targets[0], jsonl_chunks(plain))
    atomic_write(targets[1], jsonl_chunks(with_negated))
    summary = {
        "method": method,
        "flipped": flipped,
        "before": before,
        "after": after,
        "after_with_negated_records": len(with_negated),
        **agree,
    }
    atomic_write_json(targets[2], summary, indent=2)
    return RepairRun(summary=summary, written=targets)
