"""δ-CAUSAL (Cui et al., ACL Findings 2024): defeasible cause-effect pairs, for the causal epistemic
consistency tasks (Cui et al., "Nuance Matters", section 4.1).

One document per CSV row (1,969 rows of ``shuffled_test_extended.csv``; the paper's "1,970 pairs"
counts rows): one cause-effect pair with one original defeater and one original supporter, the input
of one generation phase (paper Appendix B.2). ``one_per_pair=True`` keeps only the first row of each
of the 500 distinct (cause, effect) pairs. Fields: ``id``, ``pair_id``, ``domain``, ``keyword``,
``keyword_model``, ``cause``, ``effect_interval``, ``effect``, ``defeater_interval``, ``defeater``,
``supporter`` (upstream names differ: ``long_term_interval``, ``long_term_effect``,
``defeater_time_interval``, ``assumption``) and ``display_order``, a permutation of 0..9 seeded by
``seed`` and ``id``: the order in which the ten intermediates (0 = label -5 ... 9 = label +5) are
shown in the ranking prompt. Sources: ``delta-causal-dataset/<file>`` of github
``cui-shaobo/defeasibility-in-causality`` at a pinned commit, or ``$LOGIC_CONSISTENCY_DATA/delta_causal/``.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path

import datasets

from logic_consistency.common import text_lines
from logic_consistency.options import check_option
from logic_consistency.tasks.data.seed import DEFAULT_SEED

from . import _source
from ._common import (
    DatasetFormatError,
    check_options,
    delimited_records,
    instance_rng,
    make_dataset_dict,
    require_records,
    require_str,
)

__all__ = ["BASE_URL", "COMMIT", "FEATURES", "SPLIT_FILES", "N_INTERMEDIATES", "load", "read_rows"]

REPO = "cui-shaobo/defeasibility-in-causality"
COMMIT = "ebfdbc8443146c287fb1b2629f1faac884889471"
BASE_URL = _source.github_raw_url(REPO, COMMIT, "delta-causal-dataset")
LOCAL_DIR = "delta_causal"
#: Split name -> upstream file name.
SPLIT_FILES: Mapping[str, str] = {
    "test": "shuffled_test_extended.csv",
    "validation": "shuffled_val_extended.csv",
    "train": "shuffled_train.csv",
}
#: Number of intermediates of one document (five defeaters, five supporters).
N_INTERMEDIATES = 10

#: Upstream column -> document field. Columns that must hold text are in ``_REQUIRED_TEXT``.
_COLUMNS: Mapping[str, str] = {
    "ID": "id",
    "domain": "domain",
    "keyword": "keyword",
    "keyword-model": "keyword_model",
    "cause": "cause",
    "long_term_interval": "effect_interval",
    "long_term_effect": "effect",
    "defeater_time_interval": "defeater_interval",
    "defeater": "defeater",
    "supporter": "supporter",
}
#: The validation file names its last column ``assumption`` (same meaning as ``supporter``).
_ALIASES: Mapping[str, str] = {"assumption": "supporter"}
_REQUIRED_TEXT: frozenset[str] = frozenset({"ID", "cause", "long_term_effect", "defeater", "supporter"})

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "pair_id": datasets.Value("string"),
        "domain": datasets.Value("string"),
        "keyword": datasets.Value("string"),
        "keyword_model": datasets.Value("string"),
        "cause": datasets.Value("string"),
        "effect_interval": datasets.Value("string"),
        "effect": datasets.Value("string"),
        "defeater_interval": datasets.Value("string"),
        "defeater": datasets.Value("string"),
        "supporter": datasets.Value("string"),
        "display_order": datasets.Sequence(datasets.Value("int32")),
    }
)


def _header(fields: list[str], source: str) -> list[str]:
    """Canonical column names of the header line, checked to hold every expected column."""
    names = [_ALIASES.get(name.strip(), name.strip()) for name in fields]
    for column in _COLUMNS:
        if column not in names:
            raise DatasetFormatError(source, "line 1", column, f"is missing from the header (found {fields})")
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise DatasetFormatError(source, "line 1", duplicated[0], "appears twice in the header")
    return names


def read_rows(path: Path) -> list[dict[str, str]]:
    """Read and validate one δ-CAUSAL CSV file.

    Args:
        path: Local path of the file.

    Returns:
        One dict per record with the document fields of the module docstring (strings only, in
        file order; ``pair_id`` included, ``display_order`` not).

    Raises:
        DatasetFormatError: Missing header column, wrong number of fields, an empty required field
            (ID, cause, long_term_effect, defeater, supporter) or a repeated ID; the message names
            the file, the line and the field.
    """
    source = str(path)
    rows: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    # text_lines drops a byte-order mark written by spreadsheet software.
    with closing(text_lines(path)) as handle:
        reader = csv.reader(handle)
        names: list[str] | None = None
        for first_line, last_line, fields in delimited_records(reader, source=source):
            # A quoted field may span lines: report the record's first line.
            location = f"line {first_line}"
            if names is None:
                names = _header(fields, source)
                continue
            if not fields or all(not field.strip() for field in fields):
                continue  # blank line
            if len(fields) != len(names):
                raise DatasetFormatError(
                    source, location, None, f"has {len(fields)} fields, expected {len(names)} (one per header column)"
                )
            record = dict(zip(names, fields))
            row: dict[str, str] = {}
            for column, field in _COLUMNS.items():
                value = require_str(
                    record[column],
                    source=source,
                    location=location,
                    field=column,
                    allow_empty=column not in _REQUIRED_TEXT,
                )
                row[field] = value.strip()
            if row["id"] in seen:
                raise DatasetFormatError(
                    source, location, "ID", f"repeats ID {row['id']!r} (first seen on line {seen[row['id']]})"
                )
            seen[row["id"]] = last_line
            row["pair_id"] = row["id"].split("-", 1)[0]
            rows.append(row)
    if names is None:
        raise DatasetFormatError(source, None, None, "is empty (no header line)")
    return require_records(rows, source=source, what="δ-CAUSAL documents", header=True)


def display_order(seed: int, document_id: str) -> list[int]:
    """The seeded per-document order in which the ranking prompt shows the ten intermediates."""
    return [
        int(index) for index in instance_rng(seed, document_id, "ranking_display_order").permutation(N_INTERMEDIATES)
    ]


def load(
    *,
    split: str = "test",
    one_per_pair: bool = False,
    seed: int = DEFAULT_SEED,
) -> datasets.DatasetDict:
    """Load δ-CAUSAL for the causal consistency tasks (lm-eval ``custom_dataset`` entry point).

    Args:
        split: ``"test"`` (default, the paper's data: ``shuffled_test_extended.csv``),
            ``"validation"`` or ``"train"``. Whatever the source split, the result's split is
            named ``"test"`` (the one lm-eval evaluates).
        one_per_pair: Keep only the first row (file order) of each (cause, effect) pair.
        seed: Seed of each document's ``display_order``.

    Returns:
        ``DatasetDict`` with one split ``"test"`` (1,969 documents for the full test file).

    Raises:
        ValueError: Unknown ``split`` or invalid ``seed``.
        FileNotFoundError: ``LOGIC_CONSISTENCY_DATA`` is set but the file is missing.
        DatasetFormatError: A record is malformed.
    """
    check_options(None, seed)
    check_option("split", split)
    check_option("one_per_pair", one_per_pair)
    filename = SPLIT_FILES[split]
    path = _source.resolve_files(LOCAL_DIR, [filename], BASE_URL)[filename]
    rows = read_rows(path)
    if one_per_pair:
        kept: dict[tuple[str, str], dict[str, str]] = {}
        for row in rows:
            kept.setdefault((row["cause"], row["effect"]), row)
        rows = list(kept.values())
    documents = [{**row, "display_order": display_order(seed, row["id"])} for row in rows]
    return make_dataset_dict(documents, FEATURES)
