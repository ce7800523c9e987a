"""Export consistency fine-tuning data (paper §4) from the sample logs of the GV tasks.

From each ``--log_samples`` document whose generator and validator answers both parsed, two
prompt / response pairs: ``role: "generator"`` (prompt x_G, raw generation y_G) and ``role:
"validator"`` (prompt x_V, the answer y_V: its option label, e.g. ``"True"``, ``"B"``, or for a
generated validator such as Appendix G's chain of thought its generated text). Prompts
are the task's text before any chat template. ``consistent_only=True`` keeps the GV-consistent
documents (the paper's D_filtered), ``False`` every complete one (the SELFTRAIN baseline); each
record carries ``consistent``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_consistency.common import check_link_loop, files_or_folders, read_samples, task_of_samples_file
from logic_consistency.outputs import atomic_write, check_outputs, jsonl_chunks

from .common import GENERATOR, PROMPT, VALIDATOR

logger = logging.getLogger("logic_consistency")
#: What a folder given to ``export-gv`` stands for.
SAMPLES_GLOB = "samples_logic_consistency_gv_*.jsonl"

__all__ = ["ExportResult", "export_gv", "export_pairs", "output_name", "pairs_of_sample"]

#: lm-eval's sample-log file name (``datetime.isoformat()`` with ``:`` replaced by ``-``).


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_pairs` wrote.

    Attributes:
        path: The jsonl file.
        documents: Documents read.
        exported: Documents whose pairs were written.
        incomplete: Documents skipped because an answer was unparseable (no ``gv_consistency``).
        pairs: Records written (two per exported document).
    """

    path: Path
    documents: int
    exported: int
    incomplete: int
    pairs: int


def output_name(consistent_only: bool) -> str:
    """File name of an export: ``gv_pairs_consistent.jsonl`` or ``gv_pairs_all.jsonl``."""
    return "gv_pairs_consistent.jsonl" if consistent_only else "gv_pairs_all.jsonl"


def _task_name(path: Path, doc: dict[str, Any]) -> str:
    return task_of_samples_file(path) or f"logic_consistency_gv_{doc.get('gv_task', 'unknown')}"


def pairs_of_sample(sample: dict[str, Any], task: str, *, where: str = "sample") -> list[dict[str, Any]]:
    """The generator and validator records of one logged document; ``[]`` if it is incomplete.

    Raises:
        ValueError: The sample is not from a GV task (no generator / validator stages).
    """
    doc: dict[str, Any] = sample["doc"] if isinstance(sample.get("doc"), dict) else {}
    stages = doc.get("stages")
    if not isinstance(stages, dict) or GENERATOR not in stages:
        raise ValueError(f"{where}: not a generator-validator sample (no doc.stages.{GENERATOR})")
    if sample.get("gv_consistency") is None:
        return []  # an unparseable answer (gv_consistency undefined): no complete (x_G, y_G, x_V, y_V, c)
    validator = stages.get(VALIDATOR)
    if not isinstance(validator, dict) or "label" not in validator.get("parsed", {}):
        raise ValueError(f"{where}: has gv_consistency but no parsed doc.stages.{VALIDATOR}")
    generator = stages[GENERATOR]
    common = {
        "task": task,
        "gv_task": doc.get("gv_task"),
        "doc_id": doc.get("id", sample.get("doc_id")),
        "r": doc.get("r"),
        "consistent": bool(sample["gv_consistency"] == 1),
    }
    return [
        {
            **common,
            "role": GENERATOR,
            "prompt": generator["prompts"][PROMPT],
            "response": str(generator["outputs"][PROMPT]).strip(),
        },
        {
            **common,
            "role": VALIDATOR,
            "prompt": validator["prompts"][PROMPT],
            "response": _validator_response(validator),
        },
    ]


def _validator_response(validator: dict[str, Any]) -> str:
    """y_V: a generated validator's own text (Appendix G's chain of thought ending "|| True"), else its label.

    A scored validator (one log-likelihood per option) has no text: its answer is the option label.
    """
    generated = (validator.get("outputs") or {}).get(PROMPT)
    if isinstance(generated, str) and generated.strip():
        return generated.strip()
    return str(validator["parsed"]["label"])


def _write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    """Write ``records`` as jsonl to ``path`` atomically; return how many were written."""
    count = 0

    def lines() -> Iterator[dict[str, Any]]:
        nonlocal count
        for record in records:
            count += 1
            yield record

    atomic_write(path, jsonl_chunks(lines()))
    return count


def export_pairs(
    samples_paths: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *, consistent_only: bool
) -> ExportResult:
    """Write the prompt / response pairs of GV sample logs to ``out_dir/`` :func:`output_name`.

    Args:
        samples_paths: ``samples_<task>_<timestamp>.jsonl`` files of GV tasks (any number of tasks
            and runs; records are written in the order read).
        out_dir: Output folder (created if missing).
        consistent_only: Keep only GV-consistent documents (``True``) or every complete one.

    Returns:
        What was written.

    Raises:
        FileNotFoundError: A samples file does not exist.
        ValueError: A line is not JSON, or not a GV sample.
    """
    out = Path(out_dir)
    samples_paths = [Path(path) for path in samples_paths]
    check_outputs([(out / output_name(consistent_only), "json")], samples_paths, argument="--out")
    out.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    documents = exported = incomplete = 0
    for raw_path in samples_paths:
        path = Path(raw_path)
        check_link_loop(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: samples file not found")
        before = documents
        for number, sample in read_samples(path):
            documents += 1
            doc: dict[str, Any] = sample["doc"] if isinstance(sample.get("doc"), dict) else {}
            pairs = pairs_of_sample(sample, _task_name(path, doc), where=f"{path} line {number}")
            if not pairs:
                incomplete += 1
                continue
            if consistent_only and not pairs[0]["consistent"]:
                continue
            exported += 1
            records.extend(pairs)
        if documents == before:
            logger.warning("%s: no samples in this file (empty); nothing exported from it", path)
    target = out / output_name(consistent_only)
    written = _write_jsonl(target, records)
    return ExportResult(path=target, documents=documents, exported=exported, incomplete=incomplete, pairs=written)


def _expand(paths: Iterable[str]) -> list[Path]:
    """Files as given; a folder stands for its GV sample logs (searched recursively); each file once."""
    return files_or_folders(paths, SAMPLES_GLOB)


def export_gv(samples: Iterable[str], out: str | os.PathLike[str]) -> tuple[ExportResult, ExportResult]:
    """``export-gv``: both files from GV sample logs (files, or folders holding them), consistent pairs first.

    Args:
        samples: ``samples_<task>_<timestamp>.jsonl`` files of GV tasks, or folders holding them.
        out: The output folder (``gv_pairs_consistent.jsonl`` and ``gv_pairs_all.jsonl``).
    """
    paths = _expand(samples)
    return export_pairs(paths, out, consistent_only=True), export_pairs(paths, out, consistent_only=False)
