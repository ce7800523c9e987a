"""Helpers of the shard and Ray tests: an ``lm_eval`` that knows the deterministic ``lc-test-hash`` model."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logic_consistency.common import RESULTS_PATTERN, find_files
from logic_consistency.leaderboard.board.modelid import slug

#: The run folder of the model ``hash`` under ``runs/<night>/``.
HASH_RUN = slug("hash")

HASH_LM = Path(__file__).resolve().parents[1] / "fixtures" / "hash_lm.py"
#: One task of each stateful kind and family: pairwise (plain, PairS, self-agreement), GV (two
#: stages), causal (prompted ranking, and the conditional-probability group with its group score).
SHARD_TASKS = (
    "logic_consistency_summeval",
    "logic_consistency_summeval_pairs",
    "logic_consistency_summeval_cot_sc",
    "logic_consistency_gv_arithmetic",
    "logic_consistency_causal_ranking",
    "logic_consistency_causal_ctp",
)
#: Volatile parts of a row: when and how long it ran, and where its results file is.
VOLATILE_PROVENANCE = ("run_time_seconds", "date", "results_file")


def hash_lm_eval(folder: Path) -> str:
    """An ``lm_eval`` executable (a script in ``folder``) that also knows ``lc-test-hash``."""
    script = folder / "lm_eval_hash"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HASH_LM}" "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return str(script)


def model_list(
    folder: Path,
    *,
    tasks: Sequence[str] = SHARD_TASKS,
    limit: int = 3,
    extra: str = "",
    entry: str = "",
    name: str = "models.yaml",
) -> Path:
    """A model list with the one model ``hash`` (``lc-test-hash``)."""
    path = folder / name
    text = f"""
        tasks: {json.dumps(list(tasks))}
        limit: {limit}
        metadata: {{max_items: 5}}
        batch_size: 1
        {extra}
        models:
          - {{name: hash, model: lc-test-hash{entry}}}
    """
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


#: A key the stand-in model echoes in every generation and its log (``HASH_LM_ECHO``): a backend that
#: leaks its credential. Its name is a key variable's, so every file the build keeps must be redacted.
SECRET = "sk-unit-test-" + "7" * 20
ECHO_ENV = f", env: {{HASH_LM_ECHO: HASH_LM_API_KEY, HASH_LM_API_KEY: '{SECRET}'}}"


def files_holding(folder: Path, secret: str = SECRET) -> list[Path]:
    """Every file under ``folder`` that holds ``secret`` (raw or JSON-escaped)."""
    forms = {secret.encode(), json.dumps(secret)[1:-1].encode()}
    return [p for p in sorted(folder.rglob("*")) if p.is_file() and any(f in p.read_bytes() for f in forms)]


def scrubbed_echoes(folder: Path) -> int:
    """How many ``echo.txt`` files (written raw by the stand-in model, one per ``lm_eval``) under ``folder``
    the build redacted: each proves the scrub of what the suite's own writers never saw. Every value of a
    model list's ``env`` is redacted, the echo's own variable name (``HASH_LM_ECHO``'s value) too; a
    shard's file, scrubbed again when the model finishes, still reads ``=[redacted HASH_LM_API_KEY]``
    (redaction keeps its own labels)."""
    return sum("=[redacted HASH_LM_API_KEY]" in p.read_text(encoding="utf-8") for p in folder.rglob("echo.txt"))


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A row without what legitimately differs between two runs (timings and dates)."""
    out = {key: value for key, value in row.items() if key not in ("measured_at",)}
    out["provenance"] = {k: v for k, v in row["provenance"].items() if k not in VOLATILE_PROVENANCE}
    return out


def newest_results(folder: Path) -> Path:
    """The newest ``results_*.json`` below ``folder``."""
    return max(find_files(folder, RESULTS_PATTERN), key=lambda path: path.stat().st_mtime)


def samples_lines(results: Path) -> dict[str, list[str]]:
    """``{task: lines}`` of the samples files beside a results file."""
    stamp = results.name[len("results_") : -len(".json")]
    return {
        path.name[len("samples_") : -len(f"_{stamp}.jsonl")]: path.read_text(encoding="utf-8").splitlines()
        for path in results.parent.glob(f"samples_*_{stamp}.jsonl")
    }
