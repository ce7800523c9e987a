"""A ``--use_cache`` file holding JSON of another shape is named and refused where lm-eval reads it (issue 54
item 7): a run fills the cache through lm-eval's evaluator (``simple_evaluate(use_cache=...)``, as ``lm_eval
--use_cache`` does), its answers are then replaced by JSON of another shape, and the rerun stops at the first
one read, naming the file, the key and the kind of answer its request takes, before the model is asked.
Before, a list where ``loglikelihood`` takes a pair failed as a ``ValueError`` in the task's scoring, naming
no file. The one-answer cases are ``tests/bad_input_backends.py``'s."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_multistage import Calculator, _run  # noqa: E402

from logic_consistency.harness_ext.publish.cache_json import RequestCacheError  # noqa: E402


def _pairs_as_text(value: str) -> str:
    return '"True"' if value.startswith('{"tuple"') else value


@pytest.mark.parametrize(
    ("reshape", "kind"),
    [(lambda value: "[-1.0, false]", "generate_until"), (_pairs_as_text, "loglikelihood")],
    ids=["every answer a list", "the pairs a text"],
)
def test_a_cache_of_another_shape_is_refused_naming_the_file_before_the_model_is_asked(
    tmp_path: Path, reshape: Callable[[str], str], kind: str
) -> None:
    cache = str(tmp_path / "cache")
    first = _run(Calculator(), use_cache=cache)
    path = tmp_path / "cache_rank0.db"
    with sqlite3.connect(path) as connection:
        rows = connection.execute('SELECT key, value FROM "unnamed"').fetchall()
        connection.executemany('UPDATE "unnamed" SET value = ? WHERE key = ?', [(reshape(v), k) for k, v in rows])
    connection.close()
    again = Calculator()
    with pytest.raises(RequestCacheError) as refused:
        _run(again, use_cache=cache)
    message = str(refused.value)
    assert message.startswith(f"--use_cache: {path}: the stored answer (key "), message
    assert "JSON of another shape" in message and f"where a {kind} answer is" in message
    assert again.calls[kind] == 0 and first["results"]["toy_two_stage"]
