"""Bad-input cases of the boards and the commands: corrupt boards, outputs over inputs, bad command
arguments, failing models in a build, bad lc-chat settings; each message names the file, argument or
model at fault."""

from __future__ import annotations

import copy
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_inputs_support import CaseTable, cli
from conftest import hand_row

from logic_consistency.leaderboard.board.failures import failure_error
from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.leaderboard.board.schema import load_document, validate
from logic_consistency.leaderboard.run.nightly import build

CASES = CaseTable()


# ------------------------------------------------------------------------------------ boards
def _board(tmp: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    document = make_document("leaderboard", [hand_row()], [], night="2026-01-01")
    validate(document)
    edit(document)
    path = tmp / "lb" / "leaderboard.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _failure(**error: Any) -> dict[str, Any]:
    """A failure record as the build writes it, its ``error`` edited by ``error``."""
    return {
        "name": "m", "backend": "lc-chat", "model_args": "model=m", "night": "2026-01-01",
        "failed_at": "2026-01-01T03:00:00Z", "error": {**failure_error("timeout"), **error}, "log_file": None,
    }  # fmt: skip


def _metric(document: dict[str, Any], task: str, name: str) -> dict[str, Any]:
    return document["rows"][0]["tasks"][task]["metrics"][name]


BOARD_EDITS: list[tuple[str, Callable[[dict[str, Any]], None], tuple[str, ...]]] = [
    (
        "score 7.5",
        lambda d: _metric(d, "logic_consistency_summeval", "s_comm").update(score=7.5),
        ("s_comm", "logic_consistency_summeval", "maximum"),
    ),
    (
        "score NaN",
        lambda d: _metric(d, "logic_consistency_summeval", "s_tran_3").update(score=math.nan),
        ("s_tran_3", "NaN"),
    ),
    (
        "score Infinity",
        lambda d: _metric(d, "logic_consistency_causal", "cgp").update(score=math.inf),
        ("cgp", "NaN or infinite"),
    ),
    ("tau -2", lambda d: _metric(d, "logic_consistency_causal", "tau_all").update(score=-2), ("tau_all", "minimum")),
    ("ci95 reversed", lambda d: _metric(d, "logic_consistency_causal", "tau_all").update(ci95=[0.5, 0.1]), ("ci95",)),
    (
        "count negative",
        lambda d: d["rows"][0]["tasks"]["logic_consistency_causal"]["counts"]["unparseable_judgement"].update(total=-1),
        ("unparseable_judgement", "total"),
    ),
    ("score a string", lambda d: _metric(d, "logic_consistency_causal", "cgp").update(score="0.5"), ("cgp", "score")),
    ("missing rows", lambda d: d.pop("rows"), ("rows",)),
    ("settings edited", lambda d: d["rows"][0]["settings"].update(limit=99.0), ("settings_id",)),
    ("duplicate row", lambda d: d["rows"].append(copy.deepcopy(d["rows"][0])), ("row_id",)),
    ("schema version 4", lambda d: d.update(schema_version="4.0"), ("schema_version",)),
    ("model name empty", lambda d: d["rows"][0]["model"].update(name=""), ("model", "name")),
    # issue 46: a failure is a code of the closed vocabulary and its fixed sentence, never a run's text
    (
        "failure free text",
        lambda d: d["failures"].append(_failure(message="404 for url http://h/t/tok/v1")),
        ("failures",),
    ),
    ("failure unknown code", lambda d: d["failures"].append(_failure(code="gateway_said_so")), ("failures",)),
    ("failure stderr kept", lambda d: d["failures"].append(_failure(stderr_tail="Bearer abc")), ("failures",)),
    (
        "failure absolute log",
        lambda d: d["failures"].append({**_failure(), "log_file": "/home/op/lb/runs/x.log"}),
        ("log_file",),
    ),
]
for _name, _edit, _expect in BOARD_EDITS:
    CASES.add(
        f"board validate: {_name}",
        lambda tmp, edit=_edit: load_document(_board(tmp, edit)),
        "leaderboard.json",
        *_expect,
    )


@CASES.case("board not JSON", "leaderboard.json", "not valid JSON", "line 1")
def _(tmp: Path) -> Any:
    path = tmp / "leaderboard.json"
    path.write_text('{"rows": [', encoding="utf-8")
    return load_document(path)


@CASES.case("board not UTF-8", "leaderboard.json", "UTF-8")
def _(tmp: Path) -> Any:
    path = tmp / "leaderboard.json"
    path.write_bytes(b"\xff\xfe{}")
    return load_document(path)


@CASES.case("board missing", "leaderboard.json", error=FileNotFoundError)
def _(tmp: Path) -> Any:
    return load_document(tmp / "leaderboard.json")


# ------------------------------------------------------------------------------------ commands
@CASES.case("render over its own board", "--out", "refusing to write over the input", "leaderboard.json")
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: None)
    return cli("leaderboard", "render", str(board), "--out", str(board))


@CASES.case("render of a NaN board", "leaderboard.json", "tau_all", "NaN")
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: _metric(d, "logic_consistency_causal", "tau_all").update(score=math.nan))
    return cli("leaderboard", "render", str(board), "--out", str(tmp / "page.html"))


@CASES.case("render over a text file", "--out", "notes.txt", "not JSON, HTML or PNG")
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: None)
    (tmp / "notes.txt").write_text("keep me")
    return cli("leaderboard", "render", str(board), "--out", str(tmp / "notes.txt"))


@CASES.case("build --html onto the board", "--html", "leaderboard.json")
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: None)
    return cli("leaderboard", "build", "--out", str(board.parent), "--html", str(board), "--night", "2026-01-01")


@CASES.case("ingest of the board itself", "--out", "over the input", "leaderboard.json")
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: None)
    return cli("leaderboard", "ingest", str(board), "--out", str(board.parent), "--no-progress")


for _argv, _message in [
    (("leaderboard", "build", "--night", "2026-13-45"), "--night"),
    (("leaderboard", "build", "--confidence", "1.5"), "--confidence"),
    (("leaderboard", "build", "--n-resamples", "0"), "--n-resamples"),
    (("leaderboard", "build", "--bootstrap-seed", "-1"), "--bootstrap-seed"),
    (("leaderboard", "build", "--metadata", "{max_items: 5}"), "--metadata"),
    (("leaderboard", "build", "--metadata", "[1]"), "--metadata"),
    (("leaderboard", "ingest", "does-not-exist.json"), "does-not-exist.json"),
    (("leaderboard", "validate", "no-board.json"), "no-board.json"),
    (("export-gv", "no-samples.jsonl", "--out", "x"), "no-samples.jsonl"),
    (("causal-confusion", "no-samples.jsonl"), "no-samples.jsonl"),
    (("correlate", "no-results.json"), "no-results.json"),
    (("repair", "no-prefs.jsonl", "--out", "x"), "no-prefs.jsonl"),
    (("repair", "--out", "x"), "INPUT"),
    (("plan", "--tasks", "logic_consistency_no_such_task"), "logic_consistency_no_such_task"),
    (("plan", "--tasks", "logic_consistency_summeval", "--metadata", "{max_items: 5}"), "--metadata"),
    (("plan", "--tasks", "logic_consistency_summeval", "--metadata", "[5]"), "--metadata"),
    (("plan", "--tasks", "logic_consistency_summeval", "--price-in", "-1"), "--price-in"),
    (("plan", "--tasks", "logic_consistency_summeval", "--price-out", "nan"), "--price-out"),
    (("plan", "--tasks", "logic_consistency_summeval", "--limit", "0"), "--limit"),
    (("plan", "--tasks", "logic_consistency_summeval", "--shards", "0"), "--shards"),
    (("plan", "--tasks", "logic_consistency_summeval", "--tokenizer", "no/such/tokenizer"), "no/such/tokenizer"),
]:

    def _run_cli(tmp: Path, argv: tuple[str, ...] = _argv) -> Any:
        import os

        here = os.getcwd()
        os.chdir(tmp)
        try:
            return cli(*argv)
        finally:
            os.chdir(here)

    CASES.add(f"command {' '.join(_argv)}", _run_cli, _message)


@CASES.case("plan --tokenizer an empty folder", "--tokenizer", "empty-tokenizer", "holds no tokenizer file")
def _(tmp: Path) -> Any:  # issue 42: the message was transformers' about sentencepiece and tiktoken
    (tmp / "empty-tokenizer").mkdir()
    return cli("plan", "--tasks", "logic_consistency_summeval", "--tokenizer", str(tmp / "empty-tokenizer"))


@CASES.case("correlate with an unknown variant", "include_variants", "pairs", "cot")
def _(tmp: Path) -> Any:
    from logic_consistency.tasks.pairwise.report import correlation_report

    return correlation_report([], include_variants=["pairs"])


@CASES.case("samples file that is not a causal sample", "samples_logic_consistency_causal_rank", "line 1", "doc.stages")
def _(tmp: Path) -> Any:
    path = tmp / "samples_logic_consistency_causal_rank_2026-01-01T00-00-00.000000.jsonl"
    path.write_text('{"doc": {}}\n', encoding="utf-8")
    return cli("causal-confusion", str(path), "--out", str(tmp / "out"))


@CASES.case("samples file with a broken line", "samples_logic_consistency_causal_rank", "line 1", "not valid JSON")
def _(tmp: Path) -> Any:
    path = tmp / "samples_logic_consistency_causal_rank_2026-01-01T00-00-00.000000.jsonl"
    path.write_text('{"doc": \n', encoding="utf-8")
    return cli("causal-confusion", str(path), "--out", str(tmp / "out"))


@CASES.case("model list with a typo", "models.yaml", "timeot", "'timeout'")
def _(tmp: Path) -> Any:
    models = tmp / "models.yaml"
    models.write_text("models:\n  - {name: a, model: dummy, timeot: 5}\n", encoding="utf-8")
    return build(
        tmp / "board", model_list=models, night="2026-01-01", lm_eval="/bin/false", progress=False, log=lambda _: None
    )


for _name, _entry, _expect in [
    ("model list resources with a typo", "resources: {num_gpu: 1}", ("models.yaml", "(a)", "'num_gpu' -> 'num_gpus'")),
    ("model list with a fractional shard count", "shards: 1.5", ("models.yaml", "(a)", "'shards' must be an integer")),
    ("model list with a custom resource of 0", "resources: {custom: {a100: 0}}", ("(a)", "resources.custom")),
]:

    def _cluster_field(tmp: Path, entry: str = _entry) -> Any:
        models = tmp / "models.yaml"
        models.write_text(f"models:\n  - {{name: a, model: dummy, {entry}}}\n", encoding="utf-8")
        return build(tmp / "board", model_list=models, night="2026-01-01", lm_eval="/bin/false", progress=False)

    CASES.add(_name, _cluster_field, *_expect, error=ValueError)


@CASES.case("a shard variable that is not i/N", "LOGIC_CONSISTENCY_SHARD='2of3'", "expected i/N")
def _(tmp: Path) -> Any:
    from logic_consistency.harness_ext.shards.shard import Shard

    return Shard.parse("2of3")


@CASES.case("build of a corrupt board fails before any model runs", "leaderboard.json", "s_comm")
def _(tmp: Path) -> Any:
    board = _board(tmp, lambda d: _metric(d, "logic_consistency_summeval", "s_comm").update(score=7.5))
    models = tmp / "models.yaml"
    models.write_text("models:\n  - {name: a, model: dummy}\n", encoding="utf-8")
    return build(
        board.parent, model_list=models, night="2026-01-01", lm_eval="/bin/false", progress=False, log=lambda _: None
    )


class _FailedBuild(Exception):
    pass


for _model, _script, _message in [
    ("crash", "import sys; print('RuntimeError: CUDA out of memory', file=sys.stderr); sys.exit(3)", "lm_eval_failed"),
    ("silent", "pass", "no_results"),
]:

    def _failing_build(tmp: Path, model: str = _model, script: str = _script) -> Any:
        fake = tmp / "fake_lm_eval"
        fake.write_text(f"#!{sys.executable}\n{script}\n", encoding="utf-8")
        fake.chmod(0o755)
        models = tmp / "models.yaml"
        models.write_text(f"models:\n  - {{name: {model}, model: dummy}}\n", encoding="utf-8")
        result = build(
            tmp / "board", model_list=models, night="2026-01-01", lm_eval=str(fake), progress=False, log=lambda _: None
        )
        failure = result.document["failures"][0]  # a code and its fixed sentence, never the run's text (issue 46)
        raise _FailedBuild(f"{failure['name']}: [{failure['error']['code']}] {failure['error']['message']}")

    CASES.add(f"build with a failing model ({_model})", _failing_build, _model, _message, error=_FailedBuild)


# ------------------------------------------------------------------------------------ lc-chat (chat endpoints)
def _chat_judge(**kwargs: Any) -> Any:
    from logic_consistency.harness_ext.chat.judge import ChatJudgeLM

    return ChatJudgeLM(**{"base_url": "http://127.0.0.1:9/v1/chat/completions", "model": "m", **kwargs})


def _chat_requests(context: Any, continuation: str, task: str = "logic_consistency_causal_ctp_so") -> Any:
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr

    from logic_consistency.harness_ext.chat.judge import _group_by_context

    if context is None:
        context = JsonChatStr(json.dumps([{"role": "user", "content": "q"}]))
    return _group_by_context([Instance("loglikelihood", {}, (context, continuation), 0, (task, 0, 1))])


CASES.add(
    "lc-chat top_logprobs above 20", lambda _: _chat_judge(top_logprobs=50), "top_logprobs", "50", error=ValueError
)
CASES.add("lc-chat max_tokens 0", lambda _: _chat_judge(max_tokens=0), "max_tokens", error=ValueError)
CASES.add("lc-chat without base_url", lambda _: _chat_judge(base_url=None), "base_url", error=ValueError)
CASES.add(
    "lc-chat multi-word continuation",
    lambda _: _chat_requests(None, " the ground gets wet"),
    "logic_consistency_causal_ctp_so",
    "the ground gets wet",
    error=ValueError,
)
CASES.add(
    "lc-chat plain-text context",
    lambda _: _chat_requests("plain prompt", " A", "logic_consistency_caters"),
    "logic_consistency_caters",
    "--apply_chat_template",
    error=ValueError,
)


@CASES.case(
    "a suite-tasks-only switch that is not 0 or 1",
    "LOGIC_CONSISTENCY_SUITE_TASKS_ONLY='yes'",
    "must be 1",
)
def _(tmp: Path) -> Any:
    import os

    from lm_eval.tasks import TaskManager

    os.environ["LOGIC_CONSISTENCY_SUITE_TASKS_ONLY"] = "yes"
    try:
        return TaskManager(include_path=str(tmp))
    finally:
        del os.environ["LOGIC_CONSISTENCY_SUITE_TASKS_ONLY"]
