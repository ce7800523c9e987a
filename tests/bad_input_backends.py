"""Bad-input cases of the suite's backends: mistyped, refused or out-of-range ``--model_args``, and
chat endpoints whose replies are not usable readings; each message names the backend and argument,
or the endpoint and the position at fault."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from bad_inputs_support import CaseTable, build_task, copy_data

from logic_consistency.harness_ext.publish.cache_json import RequestCacheError

CASES = CaseTable()
URL = "http://127.0.0.1:9/v1/chat/completions"


def _check(model: str, args: str) -> None:
    from logic_consistency.harness_ext.backends.registry import check_model_args

    check_model_args(model, args)


for _model, _args, _expect in [
    ("lc-chat", f"base_url={URL},max_token=1", ("lc-chat --model_args", "'max_token'", "'max_tokens'")),
    ("lc-chat", f"base_url={URL},top_logprob=5", ("lc-chat --model_args", "'top_logprob'", "'top_logprobs'")),
    ("lc-chat", f"base_url={URL},top_logprobs=1", ("lc-chat --model_args", "top_logprobs", "at least 2")),
    ("lc-chat", f"base_url={URL},timeout=0", ("lc-chat --model_args", "timeout", "at least 1")),
    ("lc-chat", f"base_url={URL},api_key=sk-x", ("lc-chat --model_args", "api_key", "OPENAI_API_KEY")),
    ("lc-chat", f"base_url={URL},auth_token=x", ("lc-chat --model_args", "auth_token", "OPENAI_API_KEY")),
    ("lc-hf", "pretrained=x,min_shared_token=8", ("lc-hf --model_args", "'min_shared_tokens'")),
    ("lc-hf", "pretrained=x,prefix_sharing=maybe", ("lc-hf --model_args", "prefix_sharing", "true or false")),
    ("lc-embedded", "model=gemma-3-27m", ("lc-embedded --model_args", "'gemma-3-270m'")),
    ("lc-embedded", "pretrained=x", ("lc-embedded --model_args", "pretrained", "model=<name>")),
]:
    CASES.add(f"{_model} --model_args {_args.split(',')[-1]}", lambda _, m=_model, a=_args: _check(m, a), *_expect)


def _reply(body: bytes, content_type: str = "application/json") -> Any:
    from logic_consistency.harness_ext.chat.reply import checked_reply, logprob_content

    return logprob_content(checked_reply(body, url=URL, content_type=content_type), url=URL)


for _name, _body, _type, _expect in [
    ("malformed JSON", b'{"choices": [', "application/json", "not JSON"),
    ("an HTML login page", b"<html>Sign in</html>", "text/html", "text/html"),
    ("choices: []", b'{"choices": []}', "application/json", "without choices"),
    ("empty logprobs.content", b'{"choices": [{"logprobs": {"content": []}}]}', "application/json", "logprobs"),
]:
    CASES.add(
        f"lc-chat reply: {_name}", lambda _, b=_body, t=_type: _reply(b, t), "base_url=http://127.0.0.1:9 ", _expect
    )


def _reading(*top: tuple[str, Any]) -> Any:
    from logic_consistency.harness_ext.chat.choice_reading import read_choices

    entries = [{"token": token, "logprob": logprob} for token, logprob in top]
    return read_choices([{"token": "x", "logprob": -1.0, "top_logprobs": entries}], ["A", "B"])


for _name, _top, _expect in [
    ("NaN log-probability", [("A", math.nan)], ("position 0", "entry 0", "nan")),
    ("+inf log-probability", [("B", -1.0), ("A", math.inf)], ("position 0", "entry 1", "inf")),
    ("positive log-probability", [("A", 3.0)], ("position 0", "'A'", "3.0")),
    ("listed probabilities above 1", [("A", -0.1), ("B", -0.1)], ("position 0", "sum to", "> 1")),
    ("empty top_logprobs", [], ("no top log-probabilities",)),
    ("a token listed twice, same value", [("A", -0.7), ("B", -2.0), ("A", -0.7)], ("position 0", "'A'", "twice")),
    ("a token listed twice, other value", [("A", -0.7), ("A", -3.0)], ("position 0", "'A'", "entries 0 and 1")),
]:
    CASES.add(f"lc-chat reading: {_name}", lambda _, t=tuple(_top): _reading(*t), *_expect)


class _Read(Exception):  # noqa: N818 - carries what a reading found, for the table to check
    """Raised by a case that checks a reading rather than an error."""


def _position_zero_empty(_: Path) -> None:
    """The audit: position 0 empty, position 1 lists the choices; "no top log-probabilities" was reported."""
    from logic_consistency.harness_ext.chat.choice_reading import read_choices

    empty = {"token": "x", "logprob": -0.1, "top_logprobs": []}
    listed = {
        "token": "B",
        "logprob": -0.2,
        "top_logprobs": [{"token": "B", "logprob": -0.2}, {"token": "A", "logprob": -2.0}],
    }
    a, b = read_choices([empty, listed], ["A", "B"])
    raise _Read(f"read at position {a.position}: A {a[0]}, B {b[0]}")


CASES.add(
    "lc-chat reading: position 0 empty, position 1 listed", _position_zero_empty, "position 1", "A -2.0", error=_Read
)


def _ctp_on_chat(tmp: Path) -> None:
    from logic_consistency.harness_ext.chat.judge import ChatJudgeLM

    copy_data(tmp)
    task = build_task("logic_consistency_causal_ctp_so")
    ChatJudgeLM(base_url=URL, model="m").check_tasks([task])


CASES.add(
    "lc-chat CTP refused when the run starts",
    _ctp_on_chat,
    "logic_consistency_causal_ctp_so",
    "stage 'ranking'",
    "Refused before any call",
)


def _preflight(entry: str, check: str) -> Any:
    """One model list entry through one preflight check (issue 29: these were found only after lm_eval started)."""

    def run(tmp: Path) -> Any:
        from logic_consistency.leaderboard.run import preflight
        from logic_consistency.leaderboard.run.modellist import load_model_list

        path = tmp / "models.yaml"
        path.write_text(f"models:\n  - {{name: judge, model: dummy, {entry}}}\n", encoding="utf-8")
        (spec,) = load_model_list(path)
        saved = {name: os.environ.pop(name, None) for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")}
        try:
            return getattr(preflight, check)(spec)
        finally:
            os.environ.update({name: value for name, value in saved.items() if value is not None})

    return run


for _name, _entry, _which, _expect in [
    ("metadata seed -1", "metadata: {seed: -1}", "check_metadata", ("models[0] (judge): metadata", "metadata.seed")),
    (
        "metadata ks above max_items",
        "metadata: {ks: [3, 8], max_items: 5}",
        "check_metadata",
        ("metadata.max_items=5", "metadata.ks=[3, 8]"),
    ),
    (
        "metadata option of the wrong type",
        "metadata: {max_items: {nested: 3}}",
        "check_metadata",
        ("metadata.max_items",),
    ),
    (
        "hub push without a token",
        "extra_args: ['--hf_hub_log_args', 'hub_results_org=o,push_results_to_hub=True']",
        "check_extra_args",
        ("models[0] (judge): extra_args", "--hf_hub_log_args", "HF_TOKEN"),
    ),
]:
    CASES.add(f"preflight: {_name}", _preflight(_entry, _which), *_expect, error=ValueError)


# ------------------------------------------------------------------------------------ --use_cache of another shape
# Issue 54 item 7: a stored answer that is JSON, but not of its request's kind, failed far from the cache (a
# ValueError unpacking it), naming no file. Each is now refused as it is read, naming the file and the key.
def _cached(kind: str, args: tuple[Any, ...], stored: str) -> Any:
    def run(tmp: Path) -> Any:
        import sqlite3

        from lm_eval.api.instance import Instance
        from lm_eval.api.model import LM, CachingLM, hash_args

        class NoCalls(LM):
            def loglikelihood(self, requests: Any, disable_tqdm: bool = False) -> Any:
                raise AssertionError("the model was asked: the cached answer was not read")

            generate_until = loglikelihood_rolling = loglikelihood

        path = tmp / "cache_rank0.db"
        with sqlite3.connect(path) as connection:  # SqliteDict's own table, the answer as JSON text
            connection.execute('CREATE TABLE "unnamed" (key TEXT PRIMARY KEY, value BLOB)')
            connection.execute('INSERT INTO "unnamed" VALUES (?, ?)', (hash_args(kind, args), stored))
        connection.close()
        caching = CachingLM(NoCalls(), str(path))
        try:
            return getattr(caching, kind)([Instance(kind, {}, args, 0)])
        finally:
            caching.dbdict.close()

    return run


for _kind, _args, _stored, _expect in [
    ("loglikelihood", ("Q: 2+2?", " 4"), "[-0.5, true, 3]", "a (log-likelihood, is-greedy) pair"),
    ("loglikelihood", ("Q: 2+2?", " 4"), '"True"', "a (log-likelihood, is-greedy) pair"),
    ("loglikelihood", ("Q: 2+2?", " 4"), '{"tuple": [-0.5, 1]}', "a (log-likelihood, is-greedy) pair"),
    ("generate_until", ("Q: 2+2?", {"until": ["\n"]}), "4", "a text"),
    ("loglikelihood_rolling", ("Some text.",), '"-3.5"', "a number"),
]:
    CASES.add(
        f"--use_cache holding JSON of another shape: {_kind} {_stored}",
        _cached(_kind, _args, _stored),
        "--use_cache:",
        "cache_rank0.db: the stored answer (key ",
        "JSON of another shape",
        f"a {_kind} answer is {_expect}",
        "delete it",
        error=RequestCacheError,
    )
