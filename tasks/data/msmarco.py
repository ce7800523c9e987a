"""MS MARCO passage reranking with GPT-3.5 rankings (Sun et al., 2023), the data of the pairwise paper's
Table 5 (Liu et al., "Aligning with Logic", Appendices B and L).

Two files of the RankGPT repository (``sunnweiwei/RankGPT``, README "Download data and model"):
``marco-train-10k.jsonl`` (per line ``query``, ``positive_passages``, ``retrieved_passages``: lists of
``{"docid", "text"}`` in BM25 order) and ``marco-train-10k-gpt3.5.json`` (a JSON list, one GPT-3.5
permutation answer such as ``"[2] > [1] > [3]"`` per query), read as the authors' ``receive_response``
reads it (:func:`parse_permutation`). One instance per query: its first ``passages`` retrieved passages
(10, the paper's "10 candidate passages"), scored by their place in the GPT-3.5 ranking (first of n:
n - 1). The paper's random 1K queries and 800/200 split are not published: a study takes the first
``--limit`` queries. Sources: ``$LOGIC_CONSISTENCY_DATA/msmarco/`` or an explicit folder (upstream file
names); online, the README's Google Drive files through ``datasets.DownloadManager``. The project's data
folder has no copy; the tests read a hand-written folder in this schema (``tests/fixtures/data/msmarco``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from . import _source
from ._common import DatasetFormatError, jsonl_objects, require_records, require_str

__all__ = ["FILES", "PASSAGES", "URLS", "load_with_source", "parse_permutation"]

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
    if not isinstance(answer, str):
        raise DatasetFormatError(
            source, f"entry {line - 1}", None, f"must be the GPT-3.5 answer string, got {answer!r:.40}"
        )
    texts, ids = [], []
    for k, passage in enumerate(retrieved):
        field = f"retrieved_passages[{k}]"
        if not isinstance(passage, dict):
            raise DatasetFormatError(source, location, field, "must be an object")
        texts.append(require_str(passage.get("text"), source=source, location=location, field=f"{field}.text"))
        ids.append(require_str(str(passage.get("docid", "")), source=source, location=location, field=f"{field}.docid"))
    order = parse_permutation(answer, len(retrieved))  # over every retrieved passage, as GPT-3.5 ranked them
    kept = [k for k in order if k < passages]  # the first ``passages`` retrieved, in GPT-3.5's order
    score = {k: float(len(kept) - 1 - place) for place, k in enumerate(kept)}
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


def load_with_source(
    folder: Path | None = None, *, limit: int | None = None, passages: int = PASSAGES
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The first ``limit`` queries as pairwise rows (``instance_id``, ``context`` = the query, ``items``,
    ``item_ids``, ``human_scores`` = place in the GPT-3.5 ranking), and what was read.

    Raises:
        FileNotFoundError: A file is missing (in ``folder`` or ``LOGIC_CONSISTENCY_DATA``).
        DatasetFormatError: A malformed line, answer, or two files of different lengths.
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
        rows.append(_row(record, answer, source=str(queries_path), line=number, passages=passages))
    rows = require_records(rows, source=str(queries_path), what="queries")
    return rows, {"name": "msmarco", **source, "queries": len(rows), "passages": passages}
