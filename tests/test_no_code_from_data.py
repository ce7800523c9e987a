"""No file a run, a worker, a user or a download wrote is read with a deserialiser that can run code
(issue 39, item 1): the package's source holds no ``pickle.load(s)`` (nor ``dill``, ``joblib``,
``marshal``, ``shelve`` loads) and no ``torch.load`` without ``weights_only=True``; a shard's metrics
file is JSON that round-trips every metric value exactly, and a planted pickle is refused unread.
"""

from __future__ import annotations

import ast
import json
import math
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from logic_consistency.harness_ext.shards import values as shard_values
from logic_consistency.harness_ext.shards.merge import ShardOutput, _load
from logic_consistency.harness_ext.training.merge import merge_adapter

ROOT = Path(__file__).resolve().parents[1]
#: Folders of the checkout that are not the package's source.
NOT_SOURCE = {".venv", ".typecheck", "tests", "build", "dist", ".git", "node_modules"}
#: Modules whose ``load``/``loads`` (or ``Unpickler``, ``open``) can run code from the file.
CODE_RUNNING = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib", "marshal", "shelve"}


def _source_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if not NOT_SOURCE & set(p.relative_to(ROOT).parts[:-1]))


def _offences(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, call) of every code-running load in ``tree``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in CODE_RUNNING:
            found += [(node.lineno, f"from {node.module} import {a.name}") for a in node.names if "load" in a.name]
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner, name = node.func.value, node.func.attr
        owner_name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        keywords = {k.arg: k.value for k in node.keywords}
        if owner_name in CODE_RUNNING and name in ("load", "loads", "Unpickler", "open"):
            found.append((node.lineno, f"{owner_name}.{name}("))
        elif owner_name == "torch" and name == "load":
            safe = keywords.get("weights_only")
            if not (isinstance(safe, ast.Constant) and safe.value is True):
                found.append((node.lineno, "torch.load( without weights_only=True"))
        elif name == "load" and owner_name in ("np", "numpy"):
            allow = keywords.get("allow_pickle")
            if allow is not None and not (isinstance(allow, ast.Constant) and allow.value is False):
                found.append((node.lineno, "numpy.load(allow_pickle=...)"))
    return found


def test_the_package_never_loads_a_file_with_a_code_running_deserialiser() -> None:
    files = _source_files()
    assert len(files) > 50 and any(p.as_posix().endswith("shards/merge.py") for p in files)
    offences = [
        f"{path.relative_to(ROOT)}:{line}: {call}"
        for path in files
        for line, call in _offences(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offences == []


@pytest.mark.parametrize(
    "text",
    [
        "import pickle\npickle.loads(data)\n",
        "import pickle\nwith open(p, 'rb') as f:\n    pickle.load(f)\n",
        "from pickle import loads\n",
        "import torch\ntorch.load(path)\n",
        "import torch\ntorch.load(path, weights_only=False)\n",
        "import numpy as np\nnp.load(path, allow_pickle=True)\n",
        "import joblib\njoblib.load(path)\n",
    ],
)
def test_the_source_check_finds_each_planted_load(text: str) -> None:
    assert _offences(ast.parse(text)), text


def test_the_source_check_passes_the_safe_forms() -> None:
    safe = "import torch, pickle\ntorch.load(p, weights_only=True)\npickle.dumps(x)\nnp.load(p)\njson.loads(t)\n"
    assert _offences(ast.parse(safe)) == []


VALUES: list[Any] = [
    None,
    True,
    3,
    -0.25,
    "s_comm,none",
    float("nan"),
    float("-inf"),
    (1, "a", None),
    [1, (2.5, [3])],
    {"m": 1.0, "$tuple": 2},
    {(0, 1): 0.5, 2: "x"},
    np.float32(0.1),
    np.int64(7),
    np.bool_(True),
    np.float64("nan"),
    np.array([[1.0, np.nan], [0.5, 2.0]], dtype=np.float32),
    np.array([], dtype=np.int16),
]


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@pytest.mark.parametrize("value", VALUES, ids=[repr(v)[:30] for v in VALUES])
def test_metric_values_round_trip_exactly_through_json(value: Any) -> None:
    text = shard_values.dumps(value, "v")
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} written"))  # strict JSON
    assert _same(shard_values.loads(text, "v"), value)


@pytest.mark.parametrize("value", [object(), {"m": {1, 2}}, np.array(["a"], dtype=object), b"x"])
def test_a_value_json_cannot_hold_is_refused_when_written_naming_it(value: Any) -> None:
    with pytest.raises(TypeError, match=r"cannot be written to a shard's metrics file"):
        shard_values.dumps({"task": value}, "shard 0/2 metrics")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a": 1, "a": 2}', "key 'a' given twice"),
        ('{"a": NaN}', "NaN is not JSON"),
        ('{"$np": ["object", 1]}', "not a number type"),
        ('{"$np": ["nonsense", 1]}', "unknown numpy dtype"),
        ('{"$float": "1e3"}', "is not a number"),
        ('{"$tuple": 3}', "malformed '\\$tuple' entry"),
    ],
)
def test_a_malformed_metrics_file_is_named(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=f"^m.json: .*{problem}"):
        shard_values.loads(text, "m.json")


class _Planted:
    """Unpickling this runs code: it writes the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.marker, "ran"))


def test_a_planted_pickle_metrics_file_is_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    results = tmp_path / "shard-0-of-2" / "results_2026-01-01T00-00-00.json"
    results.parent.mkdir()
    results.write_text(json.dumps({"logic_consistency_shard": {"index": 0, "count": 2, "identity": {}}}))
    metrics = results.parent / "shard_metrics.json"
    metrics.write_bytes(pickle.dumps(_Planted(marker)))
    with pytest.raises(ValueError, match=f"shard output {results} / {metrics}: unreadable"):
        _load(ShardOutput(results, metrics))
    assert not marker.exists()


def test_merging_a_pickle_adapter_is_refused_before_any_library_loads(tmp_path: Path) -> None:
    folder = tmp_path / "adapter"
    folder.mkdir()
    (folder / "logic_consistency_adapter.json").write_text(json.dumps({"base_model": str(tmp_path / "base")}))
    (folder / "adapter_model.bin").write_bytes(b"planted")
    with pytest.raises(ValueError, match=f"adapter {folder}: adapter_model.bin is in pickle format"):
        merge_adapter(folder)


def test_a_direct_lm_eval_run_with_a_pickle_adapter_is_refused_before_the_model_is_built(tmp_path: Path) -> None:
    from logic_consistency.harness_ext.publish.run import publishing

    folder = tmp_path / "adapter"
    folder.mkdir()
    (folder / "adapter_model.bin").write_bytes(b"planted")
    built: list[Any] = []

    def simple_evaluate(model: str, model_args: str = "") -> dict[str, Any]:
        built.append(model_args)
        return {}

    with pytest.raises(ValueError, match=f"adapter {folder}: adapter_model.bin is in pickle format"):
        publishing(simple_evaluate)(model="hf", model_args=f"pretrained=base,peft={folder}")
    assert built == []
    (folder / "adapter_model.bin").unlink()
    (folder / "adapter_model.safetensors").write_bytes(b"")
    publishing(simple_evaluate)(model="hf", model_args=f"pretrained=base,peft={folder}")
    assert built == [f"pretrained=base,peft={folder}"]


# ------------------------------------------- lm-eval's caches as the suite uses them (issue 46, item 4)
class _Answers:
    """A model stub for lm-eval's ``CachingLM``: answers every request and counts the calls."""

    def __init__(self) -> None:
        self.asked = 0

    def set_cache_hook(self, hook: Any) -> None:
        self.hook = hook

    def loglikelihood(self, requests: list[Any]) -> list[Any]:
        self.asked += len(requests)
        return [(-1.0 / 3.0, True), (float("-inf"), False)][: len(requests)]

    def generate_until(self, requests: list[Any]) -> list[str]:
        self.asked += len(requests)
        return ["an answer ✓"] * len(requests)


def _requests(*args: tuple[Any, ...]) -> list[Any]:
    from types import SimpleNamespace

    return [SimpleNamespace(args=a) for a in args]


def _plant(path: Path, rows: list[tuple[str, Any]]) -> None:
    import sqlite3

    with sqlite3.connect(path) as connection:  # SqliteDict's own table
        connection.execute('CREATE TABLE IF NOT EXISTS "unnamed" (key TEXT PRIMARY KEY, value BLOB)')
        connection.executemany('INSERT INTO "unnamed" VALUES (?, ?)', rows)
    connection.close()


def test_lm_evals_caching_lm_stores_json_and_round_trips_every_answer_exactly(tmp_path: Path) -> None:
    from lm_eval.api.model import CachingLM

    from logic_consistency.harness_ext.chat.choice_reading import ChoiceAnswer
    from logic_consistency.harness_ext.publish.cache_json import decode_answer, encode_answer

    path = str(tmp_path / "cache_rank0.db")
    model = _Answers()
    first = CachingLM(model, path)  # as --use_cache builds it, with the suite's hook
    asked = _requests(("context", " a"), ("context", " b"))
    written = first.loglikelihood(asked)
    generated = first.generate_until(_requests(("q", {"until": ["\n"]})))
    first.dbdict.close()
    again = CachingLM(_Answers(), path).loglikelihood(asked)
    assert model.asked == 3 and again == written and [type(a) for a in again] == [tuple, tuple]
    assert again[0][0] == -1.0 / 3.0 and again[1][0] == float("-inf") and type(again[0][1]) is bool
    import sqlite3

    with sqlite3.connect(path) as connection:
        kinds = connection.execute('SELECT typeof(value), value FROM "unnamed"').fetchall()
    connection.close()
    assert {kind for kind, _ in kinds} == {"text"}, kinds
    assert ("text", '"an answer ✓"') in kinds and generated == ["an answer ✓"]
    reading = ChoiceAnswer(-0.5, False, missing=True, position=3, tied=True)
    back = decode_answer(encode_answer("0" * 64, reading), path)
    assert (
        type(back) is ChoiceAnswer and back == reading and (back.missing, back.position, back.tied) == (True, 3, True)
    )
    with pytest.raises(TypeError, match="not lm-eval's hash_args key"):
        encode_answer("k", "x")
    with pytest.raises(TypeError, match="is a dict, which the JSON store does not hold"):
        encode_answer("0" * 64, {"a": 1})


def test_a_pickled_use_cache_answer_is_refused_naming_the_file_and_never_run(tmp_path: Path) -> None:
    from lm_eval.api.model import CachingLM, hash_args

    from logic_consistency.harness_ext.publish.request_cache import RequestCacheError

    marker = tmp_path / "code-ran"
    payload = pickle.dumps(_Planted(marker))
    asked = _requests(("context", " a"))
    key = hash_args("loglikelihood", asked[0].args)
    # an lm-eval cache (every answer a pickle): refused when it is opened, before any model call
    whole = tmp_path / "old_rank0.db"
    _plant(whole, [(key, payload)])
    with pytest.raises(RequestCacheError, match=f"--use_cache: {whole} holds an answer that is not JSON text"):
        CachingLM(_Answers(), str(whole))
    # one planted answer among JSON ones: refused when that answer is read, naming the file and the key
    planted = tmp_path / "planted_rank0.db"
    _plant(planted, [("f" * 64, '"fine"'), (key, payload)])
    caching = CachingLM(_Answers(), str(planted))
    with pytest.raises(RequestCacheError, match=f"--use_cache: {planted} holds .* \\(key {key}\\)"):
        caching.loglikelihood(asked)
    caching.dbdict.close()
    assert not marker.exists()


def test_a_request_cache_is_never_read_and_cache_requests_is_refused_first(tmp_path: Path) -> None:
    """``--cache_requests`` (dill pickles): refused on lm_eval's command line and by ``simple_evaluate``; lm-eval's
    ``load_from_cache`` refuses the file, naming it, even where ``cache_requests`` reaches ``evaluate`` directly."""
    import dill
    import lm_eval.api.task
    from lm_eval.caching import cache

    from logic_consistency.harness_ext.autoload import refuse_credentials_first
    from logic_consistency.harness_ext.publish.command_line import check_lm_eval_argv
    from logic_consistency.options import OptionError

    marker = tmp_path / "code-ran"
    original = cache.PATH
    cache.PATH = str(tmp_path)
    try:
        path = Path(cache._cache_file_path("requests-logic_consistency_x"))
        path.write_bytes(dill.dumps(_Planted(marker)))
        with pytest.raises(OptionError, match=f"--cache_requests: {path} holds a dill pickle"):
            lm_eval.api.task.load_from_cache(file_name="requests-logic_consistency_x", cache=True)
        assert lm_eval.api.task.load_from_cache(file_name="requests-logic_consistency_x", cache=False) is None
    finally:
        cache.PATH = original
    assert not marker.exists()
    for argv in (["--cache_requests"], ["--cache_requests", "refresh"], ["--cache_req=true"]):
        with pytest.raises(OptionError, match="--cache_req"):
            check_lm_eval_argv(["--model", "dummy", *argv, "--tasks", "t"])
    check_lm_eval_argv(["--model", "dummy", "--cache_requests", "delete"])  # removes lm-eval's files; reads none
    ran: list[Any] = []
    with pytest.raises(OptionError, match="simple_evaluate: cache_requests=True: .*dill pickles"):
        refuse_credentials_first(lambda model, cache_requests=False: ran.append(model))(
            model="dummy", cache_requests=True
        )
    assert ran == []
