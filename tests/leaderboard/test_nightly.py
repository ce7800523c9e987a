"""The nightly build: model list, one subprocess per model, failures recorded, cache reused, history kept."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.leaderboard.board.ingest import BootstrapSettings
from logic_consistency.leaderboard.board.modelid import identify, slug
from logic_consistency.leaderboard.board.schema import load_document
from logic_consistency.leaderboard.run.modellist import (
    ModelSpec,
    default_model_list,
    load_model_list,
)
from logic_consistency.leaderboard.run.nightly import build, lm_eval_run

BOOT = BootstrapSettings(n_resamples=1000)
SMALL = (
    "--tasks",
    "logic_consistency_pairwise",
    "--limit",
    "2",
    "--metadata",
    json.dumps({"max_items": 5}),
    "--n-resamples",
    "1000",
    "--no-progress",
)


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- model list


def test_the_shipped_list_holds_the_two_embedded_models() -> None:
    specs = load_model_list()
    assert default_model_list().name == "models.yaml"
    assert [(s.name, s.backend, s.model_args) for s in specs] == [
        ("smollm2-135m-instruct", "lc-embedded", "model=smollm2-135m-instruct"),
        ("gemma-3-270m", "lc-embedded", "model=gemma-3-270m"),
    ]
    assert all(s.tasks == "logic_consistency" and s.limit is None for s in specs)


def test_settings_precedence_file_then_entry_then_command_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "models.yaml",
        """
        tasks: logic_consistency
        limit: 10
        metadata: {max_items: 8, seed: 1}
        batch_size: 4
        models:
          - {name: a, model: hf, model_args: {pretrained: org/a, revision: abc123}, limit: 3, metadata: {max_items: 6}}
          - {name: b, model: vllm, model_args: "pretrained=org/b,dtype=bfloat16", apply_chat_template: true,
             timeout: 60, extra_args: ["--gen_kwargs", "temperature=0"], env: {CUDA_VISIBLE_DEVICES: 1}}
          - {name: c, model: hf, enabled: false}
    """,
    )
    a, b = load_model_list(path)
    assert (a.limit, a.metadata, a.batch_size, a.model_args) == (
        3.0,
        {"max_items": 6, "seed": 1},
        "4",
        "pretrained=org/a,revision=abc123",
    )
    assert (b.limit, b.metadata, b.apply_chat_template, b.timeout, b.env) == (
        10.0,
        {"max_items": 8, "seed": 1},
        True,
        60.0,
        {"CUDA_VISIBLE_DEVICES": "1"},
    )
    a2, b2 = load_model_list(path, {"limit": 2, "metadata": {"max_items": 5}, "tasks": None})
    assert (a2.limit, b2.limit) == (2.0, 2.0)
    assert a2.metadata == {"max_items": 5, "seed": 1} and b2.metadata == {"max_items": 5, "seed": 1}
    assert a2.tasks == "logic_consistency"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models:\n  - {name: a, model: hf, colour: red}\n", r"models\[0\] \(a\): unknown key\(s\) \['colour'\]"),
        ("models:\n  - {model: hf}\n", r"models\[0\]: 'name' is required"),
        ("models:\n  - {name: a, model: hf}\n  - {name: a, model: vllm}\n", r"duplicate model name\(s\) \['a'\]"),
        ("limit: -1\nmodels:\n  - {name: a, model: hf}\n", r"'limit' must be in \(0, inf\), got -1"),
        ("models: []\n", r"'models' must be a non-empty list"),
        ("models:\n  - {name: a, model: hf, extra_args: --x}\n", r"models\[0\] \(a\): 'extra_args' must be a list"),
        ("models: [\n", r"not valid YAML"),
    ],
)
def test_model_list_errors_name_file_entry_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path / "list.yaml", text)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: .*{message}"):
        load_model_list(path)


def test_lm_eval_command_line(tmp_path: Path) -> None:
    spec = ModelSpec(
        name="m",
        backend="hf",
        model_args="pretrained=org/m",
        tasks="logic_consistency",
        limit=2.0,
        metadata={"max_items": 5},
        batch_size="8",
        apply_chat_template=True,
        extra_args=("--device", "cuda:0"),
    )
    command = lm_eval_run(
        spec, lm_eval="lm_eval", output_path=tmp_path / "out", cache_path=tmp_path / "cache" / "m"
    ).argv()
    assert command == [
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        "pretrained=org/m",
        "--tasks",
        "logic_consistency",
        "--metadata",
        '{"max_items": 5}',
        "--batch_size",
        "8",
        "--output_path",
        str(tmp_path / "out"),
        "--log_samples",
        "--limit",
        "2",
        "--apply_chat_template",
        "--use_cache",
        str(tmp_path / "cache" / "m"),
        "--device",
        "cuda:0",
    ]


def test_model_identity(tmp_path: Path) -> None:
    embedded = identify("lc-embedded", "model=gemma-3-270m", embedded_sha=lambda name: f"sha-of-{name}")
    assert (embedded.name, embedded.revision, embedded.revision_source, embedded.precision) == (
        "gemma-3-270m",
        "sha-of-gemma-3-270m",
        "gguf_sha256",
        "float32",
    )
    hub = identify("hf", "pretrained=org/m,revision=0123abc,dtype=bfloat16")
    assert (hub.name, hub.revision, hub.revision_source, hub.precision) == (
        "org/m",
        "0123abc",
        "model_args",
        "bfloat16",
    )
    (tmp_path / "logic_consistency_model.json").write_text(json.dumps({"gguf_sha256": "f" * 64}), encoding="utf-8")
    local = identify("hf", {"pretrained": str(tmp_path)}, name="local")
    assert (local.name, local.revision, local.revision_source) == ("local", "f" * 64, "manifest")
    pinned = identify("vllm", "pretrained=org/m", revision="v1", precision="fp8")
    assert (pinned.revision, pinned.revision_source, pinned.precision) == ("v1", "model_list", "fp8")
    assert identify("hf", "pretrained=org/m").revision_source == "unpinned"
    assert slug("org/model") != slug("org-model") and "/" not in slug("org/model")
    with pytest.raises(ValueError, match="not key=value"):
        identify("hf", "pretrained")


# ----------------------------------------------------------------------------- failure modes (fake lm_eval)

FAKE_LM_EVAL = """\
#!{python}
import sys, time
from pathlib import Path
args = sys.argv[1:]
out = Path(args[args.index("--output_path") + 1])
model = out.name.rsplit("-", 1)[0]  # the name in runs/<night>/<name>-<hash>; the backend is dummy
if model == "crash":
    print("loading...", flush=True)
    from logic_consistency.harness_ext.publish.failure_facts import record_failure
    record_failure(RuntimeError("CUDA out of memory"))  # what lm_eval's entry point records (issue 54)
    print("Traceback (most recent call last):\\n  File x\\nRuntimeError: CUDA out of memory", file=sys.stderr)
    sys.exit(1)
if model == "hang":
    time.sleep(600)
if model == "garbage":
    (out / "m").mkdir(parents=True, exist_ok=True)
    (out / "m" / "results_2026-01-01T00-00-00.000001.json").write_text("{{}}")
sys.exit(0)
"""


def test_failing_models_are_recorded_and_do_not_stop_the_others(tmp_path: Path) -> None:
    fake = tmp_path / "fake_lm_eval"
    fake.write_text(FAKE_LM_EVAL.format(python=sys.executable), encoding="utf-8")
    fake.chmod(0o755)
    models = _write(
        tmp_path / "models.yaml",
        """
        models:
          - {name: crash, model: dummy}
          - {name: hang, model: dummy, timeout: 2}
          - {name: silent, model: dummy}
          - {name: garbage, model: dummy}
    """,
    )
    result = build(
        tmp_path / "board",
        model_list=models,
        night="2026-05-01",
        lm_eval=str(fake),
        bootstrap=BOOT,
        progress=False,
        log=lambda _: None,
    )
    codes = {o.spec.name: o.failure["error"]["code"] for o in result.outcomes if o.failure}
    assert codes == {
        "crash": "lm_eval_failed",
        "hang": "timeout",
        "silent": "no_results",
        "garbage": "unreadable_results",
    }
    logs = {o.spec.name: o.log_file.read_text(encoding="utf-8") for o in result.outcomes if o.failure}
    assert "failure lm_eval_failed: lm_eval exited with status 1" in logs["crash"]
    assert (
        "failure unreadable_results: unreadable results: " in logs["garbage"]
        and "field 'results' missing" in logs["garbage"]
    )
    crash = next(f for f in result.document["failures"] if f["name"] == "crash")
    assert (crash["error"]["returncode"], crash["error"]["error_class"]) == (1, "RuntimeError")
    assert crash["log_file"].startswith("runs/2026-05-01/")
    assert "loading..." in (tmp_path / "board" / crash["log_file"]).read_text(encoding="utf-8")
    hang = next(o for o in result.outcomes if o.spec.name == "hang")
    assert hang.seconds < 30
    board = load_document(tmp_path / "board" / "leaderboard.json")
    assert board["rows"] == [] and len(board["failures"]) == 4
    # an embedded model that does not exist is refused before any model runs (leaderboard/run/preflight.py)
    unknown = _write(
        tmp_path / "unknown.yaml",
        """
        models:
          - {name: unknown-embedded, model: lc-embedded, model_args: "model=no-such-model"}
    """,
    )
    with pytest.raises(ValueError, match=r"models\[0\] \(unknown-embedded\): model_args: .*'no-such-model'"):
        build(tmp_path / "other", model_list=unknown, night="2026-05-01", lm_eval=str(fake), progress=False)
    assert not (tmp_path / "other" / "runs").exists() or not any((tmp_path / "other" / "runs").iterdir())


RECORD_CACHE = """\
#!{python}
import sys
args = sys.argv[1:]
with open({record!r}, "a", encoding="utf-8") as log:
    print(args[args.index("--use_cache") + 1], file=log)
"""


def test_the_request_cache_follows_the_whole_model_identity(tmp_path: Path) -> None:
    """Revisions sharing a 16-character prefix, or another dtype, get their own cache; nothing else does."""
    record = tmp_path / "caches.txt"
    fake = tmp_path / "fake_lm_eval"
    fake.write_text(RECORD_CACHE.format(python=sys.executable, record=str(record)), encoding="utf-8")
    fake.chmod(0o755)
    entries = {
        "a": "{name: m, model: hf, model_args: 'pretrained=org/m,revision=release-2024-01-a,dtype=float32'}",
        "b": "{name: m, model: hf, model_args: 'pretrained=org/m,revision=release-2024-01-b,dtype=float32'}",
        "b-bf16": "{name: m, model: hf, model_args: 'pretrained=org/m,revision=release-2024-01-b,dtype=bfloat16'}",
        "b-again": "{name: m, model: hf, model_args: 'pretrained=org/m,revision=release-2024-01-b,dtype=float32'}",
        "b-batch": "{name: m, model: hf, model_args: 'pretrained=org/m,revision=release-2024-01-b,dtype=float32,"
        "max_batch_size=64,device=cuda:1'}",
        "b-label": "{name: m, model: hf, model_args: 'pretrained=org/m', revision: release-2024-01-b, precision: float32}",
    }
    for day, entry in enumerate(entries.values(), start=1):
        models = _write(tmp_path / "models.yaml", f"models:\n  - {entry}\n")
        build(
            tmp_path / "board",
            model_list=models,
            night=f"2026-05-{day:02d}",
            lm_eval=str(fake),
            bootstrap=BOOT,
            progress=False,
            log=lambda _: None,
        )
    used = dict(zip(entries, record.read_text(encoding="utf-8").splitlines(), strict=True))
    assert used["a"] != used["b"]  # a common 16-character prefix "release-2024-01-"
    assert used["b-bf16"] != used["b"]  # precision
    assert used["b-again"] == used["b"]  # unchanged identity: the cache is reused
    assert used["b-batch"] == used["b"]  # batch size and device do not change answers
    assert used["b-label"] not in (used["a"], used["b"])  # other model_args (no revision/dtype in them)
    assert all(Path(path).parent == tmp_path / "board" / "cache" for path in used.values())
    assert Path(used["a"]).name.startswith(f"{slug('m')}-release-2024-01-a-")


# ----------------------------------------------------------------------------- real lm_eval, two nights


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any]) -> dict[str, Any]:
    """Night 1: dummy model plus a model that cannot load; night 2: the dummy model again."""
    root = tmp_path_factory.mktemp("nightly")
    models = _write(
        root / "models.yaml",
        """
        batch_size: 1
        models:
          - {name: dummy, model: dummy}
          - {name: broken, model: hf, model_args: "pretrained=/nonexistent/model-weights"}
    """,
    )
    out = root / "board"
    first = cli("leaderboard", "build", "--models", str(models), "--out", str(out), "--night", "2026-05-01", *SMALL)
    first_board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    second = cli(
        "leaderboard",
        "build",
        "--models",
        str(models),
        "--out",
        str(out),
        "--night",
        "2026-05-02",
        "--only",
        "dummy",
        "--html",
        str(root / "index.html"),
        *SMALL,
    )
    return {"out": out, "first": first, "first_board": first_board, "second": second, "root": root}


def test_a_model_that_cannot_load_is_recorded_and_the_others_run(two_nights: dict[str, Any]) -> None:
    first, board = two_nights["first"], two_nights["first_board"]
    assert first.returncode == 1, first.stderr[-3000:]
    assert (
        "FAILED broken: [lm_eval_failed] lm_eval ended with an error" in first.stdout and "ok     dummy" in first.stdout
    )
    assert [row["model"]["name"] for row in board["rows"]] == ["dummy"]
    (failure,) = board["failures"]
    assert failure["name"] == "broken" and failure["night"] == "2026-05-01"
    assert failure["error"]["returncode"] not in (0, None) and failure["error"]["code"] == "lm_eval_failed"
    assert "model-weights" in (two_nights["out"] / failure["log_file"]).read_text(encoding="utf-8")
    row = board["rows"][0]
    assert row["provenance"]["limit"] == 2 and row["provenance"]["items_per_instance"] == 5
    assert set(row["tasks"]) >= {"logic_consistency_pairwise", "logic_consistency_summeval"}


def test_the_second_night_is_answered_from_the_cache_and_merged(two_nights: dict[str, Any]) -> None:
    out, second = two_nights["out"], two_nights["second"]
    assert second.returncode == 0, second.stderr[-3000:]
    (cache,) = (out / "cache").glob(f"{slug('dummy')}-unpinned-*_rank0.db")
    assert cache.is_file()
    log = (out / "runs" / "2026-05-02" / slug("dummy") / "lm_eval.log").read_text(encoding="utf-8")
    hits = [int(n) for n, rest in re.findall(r"Cached requests: (\d+), Requests remaining: (\d+)", log) if rest == "0"]
    assert hits and all(n > 0 for n in hits)  # nothing re-scored
    board = load_document(out / "leaderboard.json")
    assert [(r["model"]["name"], r["night"]) for r in board["rows"]] == [("dummy", "2026-05-02")]
    first_row = two_nights["first_board"]["rows"][0]
    assert board["rows"][0]["row_id"] == first_row["row_id"]
    # cached answers give the same scores as the first night
    assert board["rows"][0]["tasks"] == first_row["tasks"]
    assert [f["name"] for f in board["failures"]] == ["broken"]  # not re-run, still failing
    assert [n["night"] for n in board["nights"]] == ["2026-05-01", "2026-05-02"]
    for night in ("2026-05-01", "2026-05-02"):
        assert load_document(out / "history" / f"{night}.json")["nights"][0]["night"] == night
    assert (two_nights["root"] / "index.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
