"""REPAIR's inputs: preference sets read from a JSONL file, a pairwise task's samples, a loader, or
Summarize from Feedback (see :mod:`logic_consistency.tasks.pairwise.repair`).

One item id names one text and one instance id one context: a second, different text or context
for the same id is an error naming the file, line and id (keeping the first would pair the wrong
texts in the fine-tuning data without a word).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_consistency.common import instance_rng, read_samples
from logic_consistency.tasks.answers import TIE_TOLERANCE, parse_choice
from logic_consistency.tasks.data.seed import DEFAULT_SEED

__all__ = [
    "Comparison",
    "Instance",
    "PreferenceSet",
    "balanced_winner_first",
    "from_loader",
    "from_samples",
    "from_summarize_feedback",
    "read_preferences",
]


@dataclass(frozen=True)
class Comparison:
    """``first`` was shown as option A, ``second`` as option B; ``winner`` is one of them."""

    first: str
    second: str
    winner: str

    @property
    def loser(self) -> str:
        return self.second if self.winner == self.first else self.first


@dataclass
class Instance:
    """One context with its items (id -> text, text may be None) and comparisons."""

    context: str | None = None
    texts: dict[str, str | None] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)

    def add(
        self, comparison: Comparison, text_first: str | None = None, text_second: str | None = None, *, where: str = ""
    ) -> None:
        """Add a comparison and its items' texts.

        Raises:
            ValueError: An item already has another text (names ``where``, the item and both texts):
                one id must name one text, or the refined data would pair the wrong texts.
        """
        for item, text in ((comparison.first, text_first), (comparison.second, text_second)):
            known = self.texts.get(item)
            if known is None:
                self.texts[item] = text
            elif text is not None and text != known:
                raise ValueError(
                    f"{where}: item {item!r} has two different texts: {known!r:.80} and {text!r:.80}; "
                    "give each text its own item id"
                )
        self.comparisons.append(comparison)

    def set_context(self, context: str | None, *, where: str = "") -> None:
        """Set the context; a second, different context for the same instance is an error."""
        if context is None:
            return
        if self.context is not None and context != self.context:
            raise ValueError(
                f"{where}: two different contexts for one instance_id: {self.context!r:.80} and "
                f"{context!r:.80}; give each context its own instance_id"
            )
        self.context = context


#: instance id -> instance, in input order.
PreferenceSet = dict[str, Instance]


# ---------------------------------------------------------------------------------------- inputs
def read_preferences(path: str | Path) -> PreferenceSet:
    """Read a JSONL preference file (module docstring); errors name the line and field."""
    prefs: PreferenceSet = {}
    for number, record in read_samples(Path(path)):
        where = f"{path} line {number}"
        first, second, winner = _checked_comparison(record, where)
        instance = prefs.setdefault(str(record["instance_id"]), Instance())
        where = f"{where}: instance_id {str(record['instance_id'])!r}"
        instance.set_context(record.get("context"), where=where)
        instance.add(Comparison(first, second, winner), record.get("text_a"), record.get("text_b"), where=where)
    if not prefs:
        raise ValueError(f"{path}: no preferences found")
    return prefs


def _checked_comparison(record: dict[str, Any], where: str) -> tuple[str, str, str]:
    """A preference line's ``item_a``, ``item_b`` and ``winner``, its ids and texts checked (errors name ``where``)."""
    for key in ("instance_id", "item_a", "item_b", "winner"):
        if not isinstance(record.get(key), (str, int)) or isinstance(record.get(key), bool) or str(record[key]) == "":
            raise ValueError(f"{where}: field '{key}' must be a non-empty string or integer id")
    first, second, winner = str(record["item_a"]), str(record["item_b"]), str(record["winner"])
    if first == second:
        raise ValueError(f"{where}: item_a and item_b are the same item {first!r}")
    if winner not in (first, second):
        raise ValueError(f"{where}: field 'winner' must be item_a or item_b ({first!r} or {second!r}), got {winner!r}")
    for key in ("text_a", "text_b", "context"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise ValueError(f"{where}: field '{key}' must be a string")
    return first, second, winner


def from_samples(path: str | Path, choices: Sequence[str] = ("A", "B")) -> tuple[PreferenceSet, int, int]:
    """The model's ``normal`` judgements from a pairwise task's ``--log_samples`` file.

    The pairwise task asks every ordered pair (i, j), i != j, in row-major order, first with the
    ``normal`` template; log-likelihood runs log two answers (one per option letter) per
    judgement. Unparseable generated answers are skipped and counted, and so are ties (equal
    log-likelihoods of the two letters: neither option won, so there is no winner to record).

    Returns:
        The preference set, the number of unparseable judgements and the number of ties.
    """

    prefs: PreferenceSet = {}
    unparseable = ties = 0
    for number, sample in read_samples(Path(path)):
        where = f"{path} line {number}"
        doc, items, ids, pairs = _pairwise_doc(sample, where)
        resps, loglikelihood = _responses(sample, where, len(pairs))
        instance = prefs.setdefault(str(doc["instance_id"]), Instance())
        where = f"{where}: instance_id {str(doc['instance_id'])!r}"
        instance.set_context(doc.get("context"), where=where)
        for k, (i, j) in enumerate(pairs):
            a_wins = _first_wins(resps, k, loglikelihood, choices)
            if a_wins is None:  # a tie of log-likelihoods, or an answer that names no option
                ties, unparseable = (ties + 1, unparseable) if loglikelihood else (ties, unparseable + 1)
                continue
            instance.add(Comparison(ids[i], ids[j], ids[i] if a_wins else ids[j]), items[i], items[j], where=where)
    if not prefs:
        raise ValueError(f"{path}: no samples found")
    return prefs, unparseable, ties


def _pairwise_doc(
    sample: dict[str, Any], where: str
) -> tuple[dict[str, Any], list[Any], list[str], list[tuple[int, int]]]:
    """A pairwise sample's doc, its items and their ids, and the ordered pairs it asks (row-major)."""
    doc = sample.get("doc")
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list) or "instance_id" not in doc:
        raise ValueError(f"{where}: not a pairwise-task sample (no doc.items / doc.instance_id)")
    items = doc["items"]
    ids = [str(i) for i in doc.get("item_ids") or range(len(items))]
    n = len(items)
    return doc, items, ids, [(i, j) for i in range(n) for j in range(n) if i != j]


def _responses(sample: dict[str, Any], where: str, n_pairs: int) -> tuple[list[Any], bool]:
    """A sample's responses, and whether they are log-likelihoods (two per judgement) or generations."""
    resps = sample.get("resps")
    if not isinstance(resps, list) or not resps:
        raise ValueError(f"{where}: field 'resps' is missing or empty")
    loglikelihood = bool(isinstance(resps[0], list) and resps[0] and isinstance(resps[0][0], (list, tuple)))
    per_judgement = 2 if loglikelihood else 1
    if len(resps) < per_judgement * n_pairs:
        raise ValueError(f"{where}: {len(resps)} responses, expected at least {per_judgement * n_pairs}")
    return resps, loglikelihood


def _first_wins(resps: list[Any], k: int, loglikelihood: bool, choices: Sequence[str]) -> bool | None:
    """Whether judgement ``k`` prefers the first option; ``None`` for a tie (P(A) = 0.5) or, generated,
    an answer that names no option."""
    if loglikelihood:
        logprob_a, logprob_b = float(resps[2 * k][0][0]), float(resps[2 * k + 1][0][0])
        if logprob_a == logprob_b or abs(logprob_a - logprob_b) < TIE_TOLERANCE:
            return None
        return logprob_a > logprob_b
    picked = parse_choice(resps[k][0], choices)
    return None if picked is None else picked == choices[0]


def from_loader(rows: Iterable[dict[str, Any]], *, seed: int = DEFAULT_SEED) -> PreferenceSet:
    """Human preferences of a pairwise dataset loader: every pair with distinct human scores, the higher
    score winning, each shown in a balanced seeded order (:func:`balanced_winner_first`)."""
    prefs: PreferenceSet = {}
    for row in rows:
        key = str(row["instance_id"])
        where = f"instance_id {key!r}"
        instance = prefs.setdefault(key, Instance())
        instance.set_context(row.get("context"), where=where)
        ids, items, scores = [str(i) for i in row["item_ids"]], row["items"], row["human_scores"]
        pairs = [(i, j) for i in range(len(ids)) for j in range(i + 1, len(ids)) if scores[i] != scores[j]]
        for (i, j), winner_first in zip(pairs, balanced_winner_first(len(pairs), seed, key), strict=True):
            win, lose = (i, j) if scores[i] > scores[j] else (j, i)
            a, b = (win, lose) if winner_first else (lose, win)
            instance.add(Comparison(ids[a], ids[b], ids[win]), items[a], items[b], where=where)
    return prefs


def balanced_winner_first(n: int, seed: int, instance_id: str) -> list[bool]:
    """Whether each of an instance's ``n`` pairs shows its winner first (as option A): half of them
    (the odd one's side drawn too), in a seeded order (``instance_rng(seed, instance_id, "pair_order")``).

    A source order that follows the preference (BM25's passages, which GPT-3.5's ranking follows;
    NovelEval's relevance file, relevant first) would otherwise make the answer letter follow the
    position: a training set the model could fit by always answering A.
    """
    rng = instance_rng(seed, instance_id, "pair_order")
    first = n // 2 + (int(rng.integers(2)) if n % 2 else 0)
    flags = [k < first for k in range(n)]
    return [flags[int(k)] for k in rng.permutation(n)]


def from_summarize_feedback(comparisons: Iterable[Any]) -> PreferenceSet:
    """Preference set of Summarize-from-Feedback comparisons (:func:`...summarize_feedback.load_comparisons`)."""
    prefs: PreferenceSet = {}
    for c in comparisons:
        where = f"comparison {c.instance_id!r}"
        instance = prefs.setdefault(c.instance_id, Instance())
        instance.set_context(c.context, where=where)
        instance.add(Comparison(c.item_a, c.item_b, c.winner), c.text_a, c.text_b, where=where)
    return prefs
