"""NovelEval (Sun et al., 2023): which of two passages is more relevant to a query?

One row per query (21 instances): ``context`` is the query (``queries.tsv``); ``items`` the 20
passages judged for it (``corpus.tsv``) in a seeded order (:func:`._common.shuffle_items`: ``qrels.txt``
lists the relevant ones first), with ``item_ids`` ``"<qid>-<n>"``;
``human_scores`` the graded relevance from ``qrels.txt`` (0 not relevant, 1 partially, 2 relevant;
many ties); ``aspect`` is ``"relevance"``.

Sources: github ``sunnweiwei/RankGPT`` at a pinned commit, folder ``NovelEval/`` (or
``$LOGIC_CONSISTENCY_DATA/noveleval/``). The ``.tsv`` files use CSV quoting (doubled inner quotes,
tabs inside one passage), so they are read with :mod:`csv`, not split on tabs.
"""

from __future__ import annotations

import csv
from contextlib import closing
from pathlib import Path
from typing import Any

import datasets

from logic_consistency.common import text_lines
from logic_consistency.tasks.data.seed import DEFAULT_SEED

from . import _source
from ._common import (
    DatasetFormatError,
    check_options,
    delimited_records,
    pairwise_dataset,
    require_int,
    require_records,
    require_str,
    shuffle_items,
)

__all__ = ["BASE_URL", "COMMIT", "FILES", "RELEVANCE_LEVELS", "load"]

REPO = "sunnweiwei/RankGPT"
COMMIT = "0d62bc3855c7c118048a7c47c18e719b938e291a"
BASE_URL = _source.github_raw_url(REPO, COMMIT, "NovelEval")
LOCAL_DIR = "noveleval"
QUERIES_FILE = "queries.tsv"
CORPUS_FILE = "corpus.tsv"
QRELS_FILE = "qrels.txt"
FILES: tuple[str, ...] = (QUERIES_FILE, CORPUS_FILE, QRELS_FILE)
RELEVANCE_LEVELS: frozenset[int] = frozenset({0, 1, 2})


def _read_tsv_pairs(path: Path, key_field: str, value_field: str) -> dict[str, str]:
    """Read a two-column CSV-quoted ``.tsv`` file into an ordered ``key -> value`` mapping."""
    source = str(path)
    out: dict[str, str] = {}
    with closing(text_lines(path)) as handle:
        reader = csv.reader(handle, delimiter="\t")
        for _, last_line, fields in delimited_records(reader, source=source, kind="TSV"):
            location = f"line {last_line}"
            if not fields:
                continue  # blank line
            if len(fields) != 2:
                raise DatasetFormatError(
                    source, location, None, f"has {len(fields)} columns, expected 2 ({key_field}, {value_field})"
                )
            key = require_str(fields[0], source=source, location=location, field=key_field).strip()
            value = require_str(fields[1], source=source, location=location, field=value_field)
            if key in out:
                raise DatasetFormatError(source, location, key_field, f"repeats {key_field} {key!r}")
            out[key] = value
    return require_records(out, source=source, what=f"{key_field}/{value_field} records")


def _read_qrels(path: Path, queries: dict[str, str], corpus: dict[str, str]) -> dict[str, list[tuple[str, int]]]:
    """Read TREC qrels (``qid iteration docid rel``) into ``qid -> [(docid, rel), ...]`` in file order."""
    source = str(path)
    judged: dict[str, list[tuple[str, int]]] = {}
    seen: set[tuple[str, str]] = set()
    with closing(text_lines(path)) as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            location = f"line {number}"
            if len(fields) != 4:
                raise DatasetFormatError(
                    source, location, None, f"has {len(fields)} columns, expected 4 (qid iteration docid rel)"
                )
            qid, _iteration, docid, rel_text = fields
            if qid not in queries:
                raise DatasetFormatError(source, location, "qid", f"{qid!r} is not a query id of {QUERIES_FILE}")
            if docid not in corpus:
                raise DatasetFormatError(source, location, "docid", f"{docid!r} is not a passage id of {CORPUS_FILE}")
            rel = require_int(rel_text, source=source, location=location, field="rel")
            if rel not in RELEVANCE_LEVELS:
                raise DatasetFormatError(source, location, "rel", f"value {rel} is not one of 0, 1, 2")
            if (qid, docid) in seen:
                raise DatasetFormatError(source, location, "docid", f"{docid!r} is judged twice for query {qid!r}")
            seen.add((qid, docid))
            judged.setdefault(qid, []).append((docid, rel))
    return require_records(judged, source=source, what="relevance judgements")


def _build_rows(paths: dict[str, Path]) -> list[dict[str, Any]]:
    queries = _read_tsv_pairs(paths[QUERIES_FILE], "qid", "query")
    corpus = _read_tsv_pairs(paths[CORPUS_FILE], "docid", "content")
    judged = _read_qrels(paths[QRELS_FILE], queries, corpus)
    rows = []
    for qid, query in queries.items():
        pairs = judged.get(qid, [])
        # A query needs two judged passages to form a pair; in NovelEval every query has 20.
        if len(pairs) < 2:
            raise DatasetFormatError(
                str(paths[QRELS_FILE]),
                None,
                "qid",
                f"query {qid!r} of {paths[QUERIES_FILE]} has {len(pairs)} judged passages, expected at least 2",
            )
        rows.append(
            {
                "instance_id": qid,
                "context": query,
                "items": [corpus[docid] for docid, _ in pairs],
                "item_ids": [docid for docid, _ in pairs],
                "human_scores": [float(rel) for _, rel in pairs],
                "aspect": "relevance",
            }
        )
    return rows


def load(*, max_items: int | None = None, seed: int = DEFAULT_SEED) -> datasets.DatasetDict:
    """Load NovelEval as pairwise-judgement instances (lm-eval ``custom_dataset`` entry point).

    Args:
        max_items: Keep at most this many passages per query: a random subset drawn from ``seed``
            and the query id (stable across runs), in the shuffled order. ``None`` keeps all 20.
        seed: Seed of the item order and of the ``max_items`` subset.

    Returns:
        ``DatasetDict`` with one split ``"test"`` (21 rows for the full data).

    Raises:
        FileNotFoundError: ``LOGIC_CONSISTENCY_DATA`` is set but a file is missing.
        DatasetFormatError: A line is malformed or refers to an unknown query / passage.
    """
    check_options(max_items, seed)
    paths = _source.resolve_files(LOCAL_DIR, FILES, BASE_URL)
    rows = [shuffle_items(row, seed) for row in _build_rows(paths)]
    return pairwise_dataset(rows, max_items, seed)
