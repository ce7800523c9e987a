"""MS MARCO passage reranking with GPT-3.5 rankings (Sun et al., 2023), the data of the pairwise paper's
Table 5 (Liu et al., "Aligning with Logic", Appendices B and L).

RankGPT's ``marco-train-10k.jsonl`` (``query``, ``positive_passages``, ``retrieved_passages`` in BM25
order) and ``marco-train-10k-gpt3.5.json`` (one GPT-3.5 answer such as ``"[2] > [1] > [3]"`` per query,
read as the authors' ``receive_response`` reads it, :func:`parse_permutation`). One instance per query:
its first ``passages`` (10) retrieved passages scored by their place in GPT-3.5's ranking, shown in a
seeded order (not BM25's, which the ranking follows). The paper
randomly samples 1K queries, 800 for training and 200 for testing (App. B); its draw is unpublished, so
:func:`paper_split` draws with the suite's seed. :func:`load` is the task ``logic_consistency_msmarco``
over the 200 (each ``instance_half: test``); ``improve repair --train-data msmarco`` trains on the 800
(:func:`load_part`). Sources: ``$LOGIC_CONSISTENCY_DATA/msmarco/`` or a folder (upstream file names);
online, the README's Google Drive files. The project's data has no copy; the tests read a hand-written
folder in this schema (``tests/fixtures/data/msmarco``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import datasets
import numpy as np

from logic_consistency.common import INSTANCE_HALF
from logic_consistency.tasks.data.seed import DEFAULT_SEED

from . import _source
from ._common import (
    DatasetFormatError,
    check_options,
    jsonl_objects,
    pairwise_dataset,
    require_id,
    require_records,
    require_str,
    shuffle_items,
)

__all__ = [
    "FILES",
    "PASSAGES",
    "SAMPLE",
    "SAMPLE_SEED",
    "TRAIN_QUERIES",
    "URLS",
    "load",
    "load_part",
    "load_with_source",
    "paper_split",
    "parse_permutation",
]

LOCAL_DIR = "msmarco"
QUERIES_FILE = "marco-train-10k.jsonl"
PERMUTATIONS_FILE = "marco-train-10k-gpt3.5.json"
FILES = (QUERIES_FILE, PERMUTATIONS_FILE)
#: The Google Drive files of the RankGPT README (file ids as linked there).
URLS = {
    QUERIES_FILE: "https://drive.google.com/uc?export=download&id=1G3MpQ5a4KgUS13JJZFE9aQvCbQfgSQzj",
    PERMUTATIONS_FILE: "https://drive.google.com/uc?export=download&id=1i7ckK7kN7BAqq5g7xAd0dLv3cTYYiclA",
}
#: Candidate passages per query (Liu et al. Appendix B).
PASSAGES = 10
#: Liu et al. App. B: "we randomly sample 1K queries", "800 queries for training and 200 for testing".
SAMPLE, TRAIN_QUERIES = 1000, 800
#: The seed of that draw: the paper's is not published, so the suite's default seed.
SAMPLE_SEED = DEFAULT_SEED
#: The field that marks a document's half (``train`` / ``test``): the paper's split, not a hash of its id.
HALF = INSTANCE_HALF


def parse_permutation(answer: str, n: int) -> list[int]:
    """0-based passage order of a GPT-3.5 answer over ``n`` passages, as the authors' ``receive_response``:
    digit runs are 1-based numbers; repeats and numbers outside 1..n are dropped; missing passages follow
    in their original order."""
    order: list[int] = []
    for number in (int(run) - 1 for run in re.findall(r"\d+", answer)):
        if 0 <= number < n and number not in order:
            order.append(number)
    return order + [k for k in range(n) if k not in order]


def _files(folder: Path | None) -> tuple[dict[str, Path], dict[str, Any]]:
    """The two files (an explicit folder, the local data directory, else the download) and their source."""
    if folder is None and (root := _source.local_data_dir()) is not None:
        folder = root / LOCAL_DIR
        paths = {name: _source.local_file(root, LOCAL_DIR, name) for name in FILES}
    elif folder is not None:
        paths = {name: folder / name for name in FILES}
        missing = [str(p) for p in paths.values() if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"{missing[0]}: file not found (an MS MARCO folder holds {' and '.join(FILES)})")
    else:
        try:
            paths = _source.download(URLS)
        except OSError as error:
            raise _source.not_downloaded("MS MARCO (RankGPT's Google Drive files)", error) from error
        return paths, {"url": URLS[QUERIES_FILE], "sha256": _digest(paths)}
    return paths, {"file": str(folder.resolve()), "sha256": _digest(paths)}


def _digest(paths: dict[str, Path]) -> str:
    """One SHA-256 over both files, in :data:`FILES` order."""
    digest = hashlib.sha256()
    for name in FILES:
        digest.update(paths[name].read_bytes())
    return digest.hexdigest()


def _row(record: Any, answer: Any, *, source: str, line: int, passages: int) -> dict[str, Any]:
    location = f"line {line}"
    if not isinstance(record, dict):
        raise DatasetFormatError(source, location, None, "must be a JSON object")
    query = require_str(record.get("query"), source=source, location=location, field="query")
    retrieved = record.get("retrieved_passages")
    if not isinstance(retrieved, list) or len(retrieved) < 2:
        raise DatasetFormatError(source, location, "retrieved_passages", "must be a list of at least two passages")
    if not isinstance(answer, str) or not answer.strip():  # an empty answer ranks nothing: never a made-up order
        raise DatasetFormatError(
            source, f"entry {line - 1}", None, f"must be the GPT-3.5 answer string (a ranking), got {answer!r:.40}"
        )
    texts, ids = _passages(retrieved, source=source, location=location)
    score = _ranking_scores(answer, len(retrieved), passages)
    n = min(passages, len(retrieved))
    if len(set(ids[:n])) != n:
        raise DatasetFormatError(source, location, "retrieved_passages", "repeats a docid among the kept passages")
    return {
        "instance_id": hashlib.sha1(query.encode("utf-8")).hexdigest()[:12],
        "context": query,
        "items": texts[:n],
        "item_ids": ids[:n],
        "human_scores": [score[k] for k in range(n)],
        "aspect": "relevance",
    }


def _ranking_scores(answer: str, retrieved: int, passages: int) -> dict[int, float]:
    """The first ``passages`` retrieved passages' scores by their place in GPT-3.5's ranking (best highest)."""
    order = parse_permutation(answer, retrieved)  # over every retrieved passage, as GPT-3.5 ranked them
    kept = [k for k in order if k < passages]  # the first ``passages`` retrieved, in GPT-3.5's order
    return {k: float(len(kept) - 1 - place) for place, k in enumerate(kept)}


def _passages(retrieved: list[Any], *, source: str, location: str) -> tuple[list[str], list[str]]:
    """The texts and docids of a query's retrieved passages."""
    texts, ids = [], []
    for k, passage in enumerate(retrieved):
        field = f"retrieved_passages[{k}]"
        if not isinstance(passage, dict):
            raise DatasetFormatError(source, location, field, "must be an object")
        texts.append(require_str(passage.get("text"), source=source, location=location, field=f"{field}.text"))
        ids.append(require_id(passage.get("docid"), source=source, location=location, field=f"{field}.docid"))
    return texts, ids


def load_with_source(
    folder: Path | None = None, *, limit: int | None = None, passages: int = PASSAGES
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The first ``limit`` queries as pairwise rows (``instance_id``, ``context`` = the query, ``items``,
    ``item_ids``, ``human_scores`` = place in the GPT-3.5 ranking), and what was read.

    Raises:
        FileNotFoundError: A file is missing (in ``folder`` or ``LOGIC_CONSISTENCY_DATA``).
        DatasetFormatError: A malformed line, answer, a repeated query, or two files of different lengths.
        ConnectionError: The download failed (naming the local copy to use instead).
    """
    if passages < 2:
        raise ValueError(f"passages must be >= 2, got {passages}")
    paths, source = _files(folder)
    queries_path, answers_path = paths[QUERIES_FILE], paths[PERMUTATIONS_FILE]
    try:
        answers = json.loads(answers_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise DatasetFormatError(str(answers_path), None, None, f"is not valid JSON ({error.msg})") from None
    if not isinstance(answers, list):
        raise DatasetFormatError(str(answers_path), None, None, "must be a JSON list of answers")
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    lines = list(jsonl_objects(queries_path))
    if len(lines) != len(answers):
        raise DatasetFormatError(
            str(answers_path),
            None,
            None,
            f"holds {len(answers)} answers for the {len(lines)} queries of {queries_path}",
        )
    for (number, record), answer in zip(lines, answers, strict=True):
        if limit is not None and len(rows) >= limit:
            break
        row = _row(record, answer, source=str(queries_path), line=number, passages=passages)
        first = seen.setdefault(row["instance_id"], number)  # a repeat would merge two rankings into one
        if first != number:
            raise DatasetFormatError(
                str(queries_path), f"line {number}", "query", f"repeats line {first} ({row['context'][:60]!r})"
            )
        rows.append(row)
    rows = require_records(rows, source=str(queries_path), what="queries")
    return rows, {"name": "msmarco", **source, "queries": len(rows), "passages": passages}


def paper_split(
    rows: list[dict[str, Any]], *, seed: int = SAMPLE_SEED
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The paper's sample of ``rows``: :data:`SAMPLE` drawn at random (all of a smaller copy), the first
    :data:`TRAIN_QUERIES` drawn for training and the rest for testing (a smaller copy: the same 4 : 1
    shares, at least one test query); returns the train rows, the test rows and what was drawn."""
    n = min(SAMPLE, len(rows))
    drawn = np.random.default_rng(seed).choice(len(rows), size=n, replace=False).tolist()
    tests = round(n * (SAMPLE - TRAIN_QUERIES) / SAMPLE) if n == SAMPLE else max(1, round(n / 5))
    chosen = [rows[int(i)] for i in drawn]
    train, test = chosen[: n - tests], chosen[n - tests :]
    record = {"queries_read": len(rows), "sampled": n, "seed": seed, "train_queries": len(train),
              "test_queries": len(test)}  # fmt: skip
    return train, test, record


def load_part(
    folder: Path | None = None,
    part: str = "test",
    *,
    limit: int | None = None,
    passages: int = PASSAGES,
    seed: int = DEFAULT_SEED,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``train`` (800) or ``test`` (200) queries of :func:`paper_split`, the first ``limit`` of them,
    their passages in a seeded order (``seed``, :func:`._common.shuffle_items`: not BM25's, which GPT-3.5's
    ranking follows, so that the first-shown passage does not tend to win), and what was read (the files,
    the draw, the queries kept).

    Raises:
        ValueError: ``part`` is neither ``train`` nor ``test``.
        FileNotFoundError, DatasetFormatError, ConnectionError: As :func:`load_with_source`.
    """
    if part not in ("train", "test"):
        raise ValueError(f"part must be 'train' or 'test', got {part!r}")
    rows, source = load_with_source(folder, passages=passages)
    train, test, drawn = paper_split(rows)
    kept = (train if part == "train" else test)[:limit]
    shown = [{**shuffle_items(row, seed), HALF: part} for row in kept]
    return shown, {**source, "split": part, "sample": drawn, "queries": len(kept), "item_order_seed": seed}


def load(*, max_items: int | None = None, seed: int = DEFAULT_SEED) -> datasets.DatasetDict:
    """The task ``logic_consistency_msmarco``: the 200 test queries of the paper's split (lm-eval
    ``custom_dataset`` entry point), each ranked by GPT-3.5 (the reference order).

    Args:
        max_items: Keep at most this many passages per query (a seeded subset); ``None`` keeps all 10.
        seed: Seed of the passage order and of the ``max_items`` subset (the query sample's is :data:`SAMPLE_SEED`).
    """
    check_options(max_items, seed)
    rows, _ = load_part(None, "test", seed=seed)
    return pairwise_dataset(rows, max_items, seed, extra={HALF: datasets.Value("string")})
