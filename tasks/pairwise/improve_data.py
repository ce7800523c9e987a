"""Where ``improve repair`` takes its training preferences from (``--train-data``).

``task`` (the default): the evaluated task's own ``instance_split: train`` documents. ``summarize_feedback``:
the pairwise paper's data (Liu et al. §4.2, Appendix B), Summarize from Feedback's train split
(``$LOGIC_CONSISTENCY_DATA``'s copy, else the hub); ``summarize_feedback:PATH`` a JSONL file in its schema;
``--limit`` bounds the posts. ``msmarco[:DIR]`` (Table 5): the 800 training queries of the paper's seeded
1K MS MARCO sample with GPT-3.5's passage rankings (:mod:`...data.msmarco`; its 200 test queries are the task
``logic_consistency_msmarco``); ``--limit`` bounds the queries; a query and two passages fit its prompt.

The prompts stay the evaluated task's own, so the task must show a source text (its ``context``) and two
items. External documents are not the task's, so the train/test check compares content (lower-cased words,
no punctuation): a document that shares any :data:`NGRAM`-word (13) passage with a test context, or equals a
shorter one, is refused (the 13-gram overlap of contamination checks, Brown et al., 2020), so one changed
word, another case or a missing last word does not hide an article.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from logic_consistency.harness_ext.training.recipe_api import Example, TrainingError
from logic_consistency.outputs import atomic_write
from logic_consistency.tasks.improve_splits import load_split

from .preferences import PreferenceSet, from_loader, from_summarize_feedback

__all__ = [
    "FEEDBACK",
    "MSMARCO",
    "TASK",
    "FeedbackData",
    "TrainData",
    "NGRAM",
    "check_contexts_disjoint",
    "check_prompt_shows_context",
    "check_train_data_fits",
    "load_external",
    "load_feedback",
    "load_msmarco",
    "parse_train_data",
    "load_test_split",
    "write_training_data",
]

TASK = "task"
FEEDBACK = "summarize_feedback"
MSMARCO = "msmarco"
#: ``--train-data`` source -> (what a document shows, the task that fits).
_FITS = {FEEDBACK: ("a post and two summaries", "logic_consistency_summeval"),
         MSMARCO: ("a query and two passages", "logic_consistency_msmarco")}  # fmt: skip
#: Tasks that pose the same comparison as the suite's variants (MS MARCO's queries on NovelEval's test half).
_VARIANT_FITS = {MSMARCO: ("logic_consistency_noveleval",)}
#: The overlap check's passage length in words (the 13-gram overlap of contamination checks, Brown et
#: al., 2020): one shared passage refuses a post. A test context shorter than this is compared whole
#: only (a short one, a query, would be found inside many posts by chance).
NGRAM = 13
_PROBE = "LOGIC-CONSISTENCY-CONTEXT-PROBE"


@dataclass(frozen=True)
class TrainData:
    """A parsed ``--train-data``: ``kind`` is ``task``, ``summarize_feedback`` or ``msmarco``; ``path`` an
    explicit file (a folder for ``msmarco``)."""

    kind: str = TASK
    path: Path | None = None


def parse_train_data(value: str) -> TrainData:
    """``task``, ``summarize_feedback[:PATH]`` or ``msmarco[:DIR]``.

    Raises:
        ValueError: Another value (naming ``--train-data`` and the accepted forms).
    """
    kind, colon, path = value.partition(":")
    if kind == TASK and not colon:
        return TrainData()
    if kind in (FEEDBACK, MSMARCO) and (not colon or path):
        return TrainData(kind, Path(path) if path else None)
    raise ValueError(
        f"--train-data: {value!r} is not a training data source; use {TASK} (the task's own train split), "
        f"{FEEDBACK} (Summarize from Feedback's train split), {FEEDBACK}:PATH (a JSONL file in its schema), "
        f"{MSMARCO} (MS MARCO with GPT-3.5 rankings) or {MSMARCO}:DIR (a folder of its two files)"
    )


def check_train_data_fits(data: TrainData, task: str) -> None:
    """Refuse external training data for a task whose prompt poses another comparison (before any load):
    Summarize from Feedback's posts fit SummEval's prompt, MS MARCO's queries NovelEval's, and no other.

    Raises:
        TrainingError: Naming ``--train-data``, the task and the task that fits.
    """
    if data.kind == TASK:
        return
    shows, fits = _FITS[data.kind]
    if not task.startswith((fits, *_VARIANT_FITS.get(data.kind, ()))):
        raise TrainingError(
            f"--train-data {data.kind}: its documents are {shows}, a comparison the prompt of {task} does not "
            f"pose; use --tasks {fits} (or the task's own data: --train-data task)"
        )


@dataclass(frozen=True)
class FeedbackData:
    """Summarize-from-Feedback comparisons as pairwise documents and human preferences, and their source."""

    docs: list[dict[str, Any]]
    prefs: PreferenceSet
    source: dict[str, Any] = field(default_factory=dict)


def _first_posts(comparisons: Iterable[Any], limit: int | None) -> list[Any]:
    """The comparisons of the first ``limit`` distinct posts (all of them for ``None``)."""
    posts: set[str] = set()
    kept = []
    for comparison in comparisons:
        if comparison.instance_id not in posts:
            if limit is not None and len(posts) >= limit:
                continue
            posts.add(comparison.instance_id)
        kept.append(comparison)
    return kept


def load_feedback(path: Path | None, limit: int | None) -> FeedbackData:
    """The train split's comparisons of the first ``limit`` posts, as a pairwise task's documents.

    Raises:
        DatasetFormatError: A malformed record (naming the file, line and field).
        FileNotFoundError: ``LOGIC_CONSISTENCY_DATA`` is set and lacks the file, or ``path`` is missing.
    """
    from logic_consistency.tasks.data.summarize_feedback import load_with_source

    if path is not None and not path.is_file():
        raise FileNotFoundError(f"--train-data {FEEDBACK}:{path}: file not found")
    comparisons, source = load_with_source("train", path=path)
    kept = _first_posts(comparisons, limit)
    prefs = from_summarize_feedback(kept)
    docs = [
        {"instance_id": key, "context": inst.context, "items": list(inst.texts.values()), "item_ids": list(inst.texts)}
        for key, inst in prefs.items()
    ]
    counts = {"comparisons_read": len(comparisons), "comparisons": len(kept), "posts": len(prefs)}
    split = "train" if path is None else None  # an explicit file is what it is
    return FeedbackData(docs, prefs, {"name": FEEDBACK, "split": split, **source, **counts})


def load_msmarco(path: Path | None, limit: int | None) -> FeedbackData:
    """The first ``limit`` of the 800 training queries of the paper's MS MARCO sample (all of them for
    ``None``) as a pairwise task's documents, their GPT-3.5 preferences and source.

    Raises:
        DatasetFormatError: A malformed record (naming the file, line and field).
        FileNotFoundError: A file is missing.
    """
    from logic_consistency.tasks.data.msmarco import load_part

    if path is not None and not path.is_dir():
        raise FileNotFoundError(f"--train-data {MSMARCO}:{path}: folder not found")
    rows, source = load_part(path, "train", limit=limit)
    prefs = from_loader(rows)
    comparisons = sum(len(inst.comparisons) for inst in prefs.values())
    docs = [{key: row[key] for key in ("instance_id", "context", "items", "item_ids")} for row in rows]
    return FeedbackData(docs, prefs, {**source, "comparisons": comparisons})


def load_external(data: TrainData, limit: int | None) -> FeedbackData | None:
    """The training preferences of ``--train-data`` when they are not the task's own (``None`` then)."""
    if data.kind == FEEDBACK:
        return load_feedback(data.path, limit)
    if data.kind == MSMARCO:
        return load_msmarco(data.path, limit)
    return None


def check_prompt_shows_context(task: Any, task_name: str, source: str = FEEDBACK) -> None:
    """Refuse a task whose ``normal`` prompt does not show the document's ``context`` (a post must be shown).

    Raises:
        TrainingError: Naming the task and a task that fits.
    """
    probe = {"instance_id": "probe", "context": _PROBE, "items": ["first", "second"], "item_ids": ["1", "2"]}
    try:
        shown = _PROBE in task.render("normal", probe, 0, 1)
    except (jinja2.TemplateError, ValueError):  # ValueError: a variable the probe has not (render_prompt)
        shown = False
    if not shown:
        shows, fits = _FITS[source]
        raise TrainingError(
            f"--train-data {source}: the prompt of {task_name} does not show a source text ({{{{ context }}}}), "
            f"so it cannot pose a comparison of {shows}; use --tasks {fits}"
        )


def load_test_split(task_name: str, metadata: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    """The task loaded on ``instance_split: test``: its prompt renderer (the same on either split) and
    every test document (one load serves the prompts and the check below)."""
    return load_split(task_name, metadata, "test")


def _words(text: str) -> list[str]:
    """``text`` lower-cased, punctuation removed, as words (the overlap check's normal form)."""
    return re.findall(r"[^\W_]+", text.casefold())


def _ngrams(words: Sequence[str]) -> Iterable[str]:
    return (" ".join(words[start : start + NGRAM]) for start in range(len(words) - NGRAM + 1))


def _test_passages(test_docs: Iterable[dict[str, Any]]) -> tuple[dict[str, str], dict[str, str], int]:
    """Every 13-word passage of a test context, and each whole test context of fewer words (-> its document),
    and the test documents with a context."""
    grams: dict[str, str] = {}
    short: dict[str, str] = {}
    compared = 0
    for d in test_docs:
        words = _words(d["context"]) if isinstance(d.get("context"), str) else []
        compared += bool(words)
        for gram in _ngrams(words) if len(words) >= NGRAM else [" ".join(words)] if words else []:
            (grams if len(words) >= NGRAM else short).setdefault(gram, str(d.get("instance_id")))
    return grams, short, compared


def check_contexts_disjoint(
    docs: Sequence[dict[str, Any]], task: str, test_docs: Iterable[dict[str, Any]], source: str = FEEDBACK
) -> int:
    """Refuse training texts that are test documents (``test_docs``) of ``task`` (module docstring);
    return the test documents compared.

    Raises:
        TrainingError: A shared text (naming the post and the test document), or no test context to compare.
    """
    grams, short, compared = _test_passages(test_docs)
    if not compared:
        raise TrainingError(f"--train-data {source}: the test documents of {task} have no context to compare")
    for doc in docs:
        words = _words(str(doc["context"]))
        text = " ".join(words)
        shared = short.get(text) or next((grams[g] for g in _ngrams(words) if g in grams), None)
        if shared is not None:
            raise TrainingError(
                f"--train-data {source}: {'post' if source == FEEDBACK else 'query'} {doc['instance_id']!r} holds the text of {task}'s test document "
                f"{shared!r} (a shared passage of {NGRAM} words, compared lower-cased without punctuation); "
                "refusing to train on the evaluation data"
            )
    return compared


def write_training_data(path: Path, examples: Sequence[Example]) -> None:
    """The examples a row trains on, as the chat records whose hash its manifest's ``data_sha256`` is."""
    # lines made here, not lazily inside the writer: its loop never climbs back into the recipe's code
    atomic_write(path, [json.dumps(e.record(), ensure_ascii=False).encode() + b"\n" for e in examples])
