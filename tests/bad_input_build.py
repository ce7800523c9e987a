"""Bad-input cases of the nightly build found before any model call: the night, the model list (alias
bomb, control characters, ``extra_args`` in any spelling, timeouts), backends and tasks, and folders
that cannot be written; each message names the file, entry, argument or path at fault."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bad_inputs_support import CaseTable, cli

from logic_consistency.leaderboard.run.nightly import build

CASES = CaseTable()

#: Nine levels of nine aliases: 9**9 (387 million) strings once expanded, from eleven lines.
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{level}: &{level} [{', '.join([f'*{previous}'] * 9)}]\n" for previous, level in zip("abcdefgh", "bcdefghi")
)


def _build(
    tmp: Path,
    entries: str,
    *,
    top: str = "",
    night: str = "2026-01-01",
    lm_eval: str | None = "/bin/false",
    **kwargs: Any,
) -> Any:
    """A build whose ``lm_eval`` fails at once (``None``: the suite's own, whose backends the build checks)."""
    models = tmp / "models.yaml"
    models.write_text(f"{top}models:\n{entries}", encoding="utf-8")
    return build(
        tmp / "lb", model_list=models, night=night, lm_eval=lm_eval, progress=False, log=lambda _: None, **kwargs
    )


for _label, _entries, _top, _expect in [
    ("alias bomb", "  - {name: m, model: dummy, metadata: {bomb: *i}}\n", ALIAS_BOMB, ("models.yaml", "alias bomb")),
    (
        "recursive alias",
        "  - &m {name: m, model: dummy, metadata: {me: *m}}\n",
        "",
        ("models.yaml", "refers to itself"),
    ),
    ("name with an escape", '  - {name: "evil\\e[31m", model: dummy}\n', "", ("models.yaml", "'name'", "U+001B")),
    ("name with a newline", '  - {name: "a\\nb", model: dummy}\n', "", ("models.yaml", "'name'", "U+000A")),
    ("name with a bidi override", '  - {name: "a\\u202eb", model: dummy}\n', "", ("models.yaml", "U+202E")),
    ("revision with a tab", '  - {name: m, model: dummy, revision: "a\\tb"}\n', "", ("'revision'", "U+0009")),
    ("extra_args -a", "  - {name: m, model: dummy, extra_args: [-a, pretrained=B]}\n", "", ("m)", "--model_args")),
    (  # issue 42: it passed the preflight, then lm_eval's parser refused it ("exited with status 2")
        "model_args that looks like an option",
        "  - {name: m, model: dummy, model_args: '-pretrained=B'}\n",
        "",
        ("models.yaml", "'model_args'", "-pretrained=B", "begins with '-'"),
    ),
    ("extra_args -c", "  - {name: m, model: dummy, extra_args: [-c, other]}\n", "", ("extra_args", "--use_cache")),
    ("extra_args -t", "  - {name: m, model: dummy, extra_args: ['-t', arc_easy]}\n", "", ("extra_args", "--tasks")),
    ("extra_args --output_pat", "  - {name: m, model: dummy, extra_args: [--output_pat, x]}\n", "", ("--output_path",)),
    ("extra_args --config", "  - {name: m, model: dummy, extra_args: [--config=c.yaml]}\n", "", ("--config",)),
    ("extra_args a typo", "  - {name: m, model: dummy, extra_args: [--num_fewshots, '1']}\n", "", ("'--num_fewshot'",)),
    # issue 46 (leftover): glued short forms are parsed by argparse, as lm_eval parses them
    ("extra_args -apretrained=B", "  - {name: m, model: dummy, extra_args: [-apretrained=B]}\n", "", ("--model_args",)),
    (
        "extra_args -sapretrained=B",
        "  - {name: m, model: dummy, extra_args: [-sapretrained=B]}\n",
        "",
        ("--model_args",),
    ),
    ("extra_args -Cc.yaml", "  - {name: m, model: dummy, extra_args: [-Cc.yaml]}\n", "", ("--config",)),
    (
        "extra_args with a --gen_kwargs key given twice",
        "  - {name: m, model: dummy, extra_args: [--gen_kwargs, temperature=0, --gen_kwargs, 'temperature=1']}\n",
        "",
        ("models[0] (m)", "extra_args", "--gen_kwargs: key 'temperature' given twice"),
    ),
    # issue 54 item 6: refused before any call, naming the flag (it ran the model, then failed as unreadable_results)
    (
        "extra_args --predict_only",
        "  - {name: m, model: dummy, extra_args: [--predict_only]}\n",
        "",
        ("models[0] (m)", "--predict_only", "refused in builds", "'bypass'"),
    ),
    ("extra_args -x", "  - {name: m, model: dummy, extra_args: [-x]}\n", "", ("--predict_only", "refused in builds")),
    ("timeout of 1e300 s", "  - {name: m, model: dummy, timeout: 1.0e+300}\n", "", ("'timeout'", "604800")),
    (  # issue 54: the declaration that publishes an endpoint's host is a boolean, never a guess from text
        "public_endpoint that is text",
        "  - {name: m, model: dummy, public_endpoint: 'yes'}\n",
        "",
        ("models[0] (m)", "'public_endpoint' must be"),
    ),
    (
        "unknown task",
        "  - {name: m, model: dummy, tasks: logic_consistency_pairwis}\n",
        "",
        ("'logic_consistency_pairwise'",),
    ),
]:
    CASES.add(
        f"build model list: {_label}",
        lambda tmp, entries=_entries, top=_top: _build(tmp, entries, top=top),
        *_expect,
        error=ValueError,
    )

CASES.add(
    "build model list: unknown backend",
    lambda tmp: _build(tmp, "  - {name: m, model: lc-chta}\n", lm_eval=None),
    "models[0] (m)",
    "'lc-chta'",
    "'lc-chat'",
    error=ValueError,
)

for _command in ("build",):  # ingest's nights: bad_input_board.py
    for _night, _expect in [
        ("2026-1-5", ("--night", "'2026-01-05'")),
        ("9999-12-31", ("--night 9999-12-31", "future")),
    ]:

        def _night_case(tmp: Path, command: str = _command, night: str = _night) -> Any:
            target = [] if command == "build" else [str(tmp)]
            return cli("leaderboard", command, *target, "--out", str(tmp / "lb"), "--night", night, "--no-progress")

        CASES.add(f"{_command} --night {_night}", _night_case, *_expect, error=ValueError)


@CASES.case("build with a cache folder that cannot be written", "cannot write", "cache")
def _(tmp: Path) -> Any:
    cache = tmp / "cache"
    cache.mkdir()
    cache.chmod(0o500)
    try:
        if os.access(cache, os.W_OK):  # root writes anyway: make the path unusable another way
            cache.chmod(0o700)
            cache.rmdir()
            cache.write_text("a file, not a folder")
        return _build(tmp, "  - {name: m, model: dummy}\n", cache_dir=cache)
    finally:
        if cache.is_dir():
            cache.chmod(0o700)


@CASES.case("build with a HOME that cannot be written", "cannot write", "LOGIC_CONSISTENCY_CACHE", error=OSError)
def _(tmp: Path) -> Any:
    (tmp / "home").write_text("a file, so nothing can be created below it")
    saved = {name: os.environ.pop(name, None) for name in ("HOME", "LOGIC_CONSISTENCY_CACHE", "XDG_CACHE_HOME")}
    os.environ["HOME"] = str(tmp / "home" / "user")
    try:
        return _build(tmp, "  - {name: m, model: lc-embedded, model_args: 'model=smollm2-135m-instruct'}\n")
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value


# the run paths (issues 29 and 33): found before any lm_eval starts
for _label, _entries, _top, _expect in [
    (
        "api_limits key matching no model",
        "  - {name: m, model: dummy}\n",
        "api_limits: {'judge.example.org:443': 2}\n",
        ("models.yaml", "api_limits", "judge.example.org:443", "matches no model"),
    ),
    (
        "api_limits key without a port",
        "  - {name: m, model: dummy}\n",
        "api_limits: {'judge.example.org': 2}\n",
        ("api_limits", "'judge.example.org'", "no port"),
    ),
    (
        "api_limits key of another scheme",
        "  - {name: m, model: dummy}\n",
        "api_limits: {'ftp://h:21': 2}\n",
        ("api_limits", "'ftp://h:21'", "not http or https"),
    ),
    (
        "api_limits keys naming one endpoint twice",
        "  - {name: m, model: dummy, model_args: 'base_url=http://localhost:8000/v1'}\n",
        "api_limits: {'localhost:8000': 2, '127.0.0.1:8000': 3}\n",
        ("api_limits", "'127.0.0.1:8000'", "twice"),
    ),
    (
        "--cache_requests (dill pickles), with shards",
        "  - {name: m, model: dummy, shards: 2, extra_args: [--cache_requests, 'true']}\n",
        "",
        ("models[0] (m)", "--cache_requests", "refused in builds", "dill pickles"),
    ),
    (
        "--cache_requests (dill pickles), abbreviated, without shards",
        "  - {name: m, model: dummy, extra_args: [--cache_req=refresh]}\n",
        "",
        ("models[0] (m)", "--cache_req=refresh", "--cache_requests", "refused in builds"),
    ),
]:
    CASES.add(
        f"build model list: {_label}",
        lambda tmp, entries=_entries, top=_top: _build(tmp, entries, top=top),
        *_expect,
        error=ValueError,
    )

for _address, _expect in [
    ("", ("--ray-address ''", "expected auto, host:port")),
    ("ray://", ("--ray-address 'ray://'", "expected auto")),
    ("10.0.0.1:port", ("--ray-address '10.0.0.1:port'",)),
]:
    CASES.add(
        f"build --ray-address {_address!r}",
        lambda tmp, address=_address: cli(
            "leaderboard", "build", "--out", str(tmp / "lb"), "--executor", "ray", "--ray-address", address
        ),
        *_expect,
        error=ValueError,
    )


@CASES.case("build --ray-address where no Ray listens", "--ray-address '127.0.0.1:9'", "no Ray head answers")
def _(tmp: Path) -> Any:
    from logic_consistency.leaderboard.run.executor import build_executor

    return _build(tmp, "  - {name: m, model: dummy}\n", executor=build_executor("ray", address="127.0.0.1:9"))


@CASES.case("build --ray-address of a web server", "--ray-address '127.0.0.1:", "is not a Ray head", "HTTP/1 server")
def _(tmp: Path) -> Any:  # issue 42: ray.init waited about 14 minutes there, then a traceback
    import http.server
    import threading

    from logic_consistency.leaderboard.run.executor import build_executor

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        address = f"127.0.0.1:{server.server_address[1]}"
        return _build(tmp, "  - {name: m, model: dummy}\n", executor=build_executor("ray", address=address))
    finally:
        server.shutdown()
        server.server_close()
