"""The bad-input table's cases for outputs, the nightly cache key and the default board (issue 17).

Imported by ``tests/test_bad_inputs.py``, which runs every case (``tests/bad_inputs_support.py``). Faults of the file system are simulated (``errno`` raised where the suite calls the
OS), so the table runs anywhere; ``tests/test_outputs_faults.py`` repeats them on real read-only,
full and immutable file systems where the machine allows it.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

from bad_inputs_support import CaseTable, cli

from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.leaderboard.board.schema import load_document
from logic_consistency.leaderboard.run.nightly import build
from logic_consistency.outputs import OutputError, atomic_write, atomic_write_json, check_outputs

OLD_BOARD = Path(__file__).resolve().parent / "fixtures" / "leaderboard" / "leaderboard-1.0.json"

CASES = CaseTable()


class Observed(Exception):  # noqa: N818 - carries what a case observed, for the table to check
    """Raised by a case that checks an outcome rather than an error (the message holds the outcome)."""


def _board(tmp: Path) -> Path:
    return atomic_write_json(tmp / "lb" / "leaderboard.json", make_document("leaderboard", night="2026-01-01"))


def _refuse(code: int, path: Path | None = None) -> Callable[..., Any]:
    real_open = os.open

    def refuse(target: Any, flags: int = 0, *args: Any, **kwargs: Any) -> Any:
        if (path is None or str(target) == str(path)) and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(code, os.strerror(code), str(target))
        return real_open(target, flags, *args, **kwargs)

    return refuse


# ------------------------------------------------------------------------------------ what is written over
@CASES.case("render --out /dev/null", "--out", "/dev/null", "character device", "not a regular file", error=ValueError)
def _(tmp: Path) -> Any:
    return cli("leaderboard", "render", str(_board(tmp)), "--out", "/dev/null")


@CASES.case("render --out a named pipe", "--out", "pipe.html", "named pipe (FIFO)", error=ValueError)
def _(tmp: Path) -> Any:
    os.mkfifo(tmp / "pipe.html")
    return cli("leaderboard", "render", str(_board(tmp)), "--out", str(tmp / "pipe.html"))


@CASES.case("build --html /dev/null", "--html", "/dev/null", "character device", error=ValueError)
def _(tmp: Path) -> Any:
    return cli("leaderboard", "build", "--out", str(tmp / "lb"), "--html", "/dev/null", "--night", "2026-01-01")


@CASES.case("ingest into a folder whose board is a pipe", "--out", "leaderboard.json", "named pipe", error=ValueError)
def _(tmp: Path) -> Any:
    (tmp / "lb").mkdir()
    os.mkfifo(tmp / "lb" / "leaderboard.json")
    (tmp / "results.json").write_text("{}")
    return cli("leaderboard", "ingest", str(tmp / "results.json"), "--out", str(tmp / "lb"), "--no-progress")


@CASES.case("atomic_write over a device", "refusing to write /dev/null", "character device", error=ValueError)
def _(tmp: Path) -> Any:
    return atomic_write("/dev/null", [b"x"])


@CASES.case("atomic_write to a symlink is refused", "link.json", "symbolic link", "target.json", error=ValueError)
def _(tmp: Path) -> Any:
    (tmp / "target.json").write_text("{}")
    (tmp / "link.json").symlink_to(tmp / "target.json")
    try:
        return atomic_write_json(tmp / "link.json", {"new": 1})
    finally:  # neither the link nor the file it names was written
        assert (tmp / "link.json").is_symlink() and (tmp / "target.json").read_text() == "{}"


@CASES.case("rewriting a page keeps its mode", "mode 0o600", error=Observed)
def _(tmp: Path) -> Any:
    board = _board(tmp)
    page = tmp / "index.html"
    cli("leaderboard", "render", str(board), "--out", str(page))
    page.chmod(0o600)
    cli("leaderboard", "render", str(board), "--out", str(page))
    raise Observed(f"mode {oct(page.stat().st_mode & 0o777)}")


# ------------------------------------------------------------------------------------ the file system refuses
for _code, _words in [
    (errno.ENOSPC, "disk is full"),
    (errno.EROFS, "read-only file system"),
    (errno.EACCES, "permission denied"),
    (errno.EPERM, "immutable"),
]:

    def _replace_refused(tmp: Path, code: int = _code) -> Any:
        with mock.patch("os.replace", side_effect=OSError(code, os.strerror(code))):
            return atomic_write_json(tmp / "out" / "report.json", {"a": 1})

    CASES.add(
        f"write refused at rename ({errno.errorcode[_code]})",
        _replace_refused,
        "cannot write",
        "report.json",
        _words,
        error=OutputError,
    )

    def _render_refused(tmp: Path, code: int = _code) -> Any:
        board = _board(tmp)
        page = tmp / "index.html"
        page.write_text("<!DOCTYPE html>")
        with mock.patch("os.open", side_effect=_refuse(code, page)):
            return cli("leaderboard", "render", str(board), "--out", str(page))

    CASES.add(
        f"render onto a refused page ({errno.errorcode[_code]})",
        _render_refused,
        "cannot write",
        "index.html",
        _words,
        error=OutputError,
    )


@CASES.case("disk full while writing", "cannot write", "big.json", "no space left", error=OutputError)
def _(tmp: Path) -> Any:
    with mock.patch("os.fsync", side_effect=OSError(errno.ENOSPC, "No space left on device")):
        return atomic_write(tmp / "big.json", [b"{}"])


@CASES.case("check_outputs in a read-only folder", "cannot write", "new.json", "read-only", error=OutputError)
def _(tmp: Path) -> Any:
    with mock.patch("tempfile._mkstemp_inner", side_effect=OSError(errno.EROFS, "Read-only file system")):
        return check_outputs([(tmp / "sub" / "new.json", "json")], [])


# ------------------------------------------------------------------------------------ the nightly build
FAKE = "#!{python}\nfrom pathlib import Path\nPath({mark!r}).write_text('ran')\n"


def _fake(tmp: Path) -> tuple[Path, Path, Path]:
    mark, fake, models = tmp / "ran", tmp / "fake_lm_eval", tmp / "models.yaml"
    fake.write_text(FAKE.format(python=sys.executable, mark=str(mark)), encoding="utf-8")
    fake.chmod(0o755)
    models.write_text("models:\n  - {name: m, model: m}\n", encoding="utf-8")
    return fake, models, mark


@CASES.case(
    "build onto an immutable board, before any model runs",
    "cannot write",
    "leaderboard.json",
    "operation not permitted",
    error=OutputError,
)
def _(tmp: Path) -> Any:
    fake, models, mark = _fake(tmp)
    board = _board(tmp)
    try:
        with mock.patch("os.open", side_effect=_refuse(errno.EPERM, board)):
            return build(
                board.parent,
                model_list=models,
                night="2026-01-02",
                lm_eval=str(fake),
                progress=False,
                log=lambda _: None,
            )
    finally:
        assert not mark.exists(), "a model ran before the unwritable board was found"


@CASES.case(
    "build with a read-only runs folder, before any model runs", "cannot write", "runs", "read-only", error=OutputError
)
def _(tmp: Path) -> Any:
    fake, models, mark = _fake(tmp)
    (tmp / "lb" / "runs").mkdir(parents=True)
    real = __import__("tempfile")._mkstemp_inner

    def refuse(folder: str, *args: Any) -> Any:
        if Path(folder).name == "runs":
            raise OSError(errno.EROFS, "Read-only file system")
        return real(folder, *args)

    try:
        with mock.patch("tempfile._mkstemp_inner", side_effect=refuse):
            return build(
                tmp / "lb", model_list=models, night="2026-01-02", lm_eval=str(fake), progress=False, log=lambda _: None
            )
    finally:
        assert not mark.exists()


@CASES.case("build with every model disabled", "models.yaml", "no enabled model", error=ValueError)
def _(tmp: Path) -> Any:
    models = tmp / "models.yaml"
    models.write_text("models:\n  - {name: a, model: hf, enabled: false}\n", encoding="utf-8")
    return build(tmp / "lb", model_list=models, night="2026-01-01", lm_eval="/bin/false", progress=False)


RECORD = "#!{python}\nimport sys\na = sys.argv\nopen({log!r}, 'a').write(a[a.index('--use_cache') + 1] + '\\n')\n"


def _caches(tmp: Path, entries: list[str]) -> list[str]:
    log, fake = tmp / "caches.txt", tmp / "fake_lm_eval"
    fake.write_text(RECORD.format(python=sys.executable, log=str(log)), encoding="utf-8")
    fake.chmod(0o755)
    for day, entry in enumerate(entries, start=1):
        (tmp / "models.yaml").write_text(f"models:\n  - {entry}\n", encoding="utf-8")
        build(
            tmp / "lb",
            model_list=tmp / "models.yaml",
            night=f"2026-01-{day:02d}",
            lm_eval=str(fake),
            progress=False,
            log=lambda _: None,
        )
    return log.read_text(encoding="utf-8").splitlines()


@CASES.case(
    "cache of two revisions with a common 16-character prefix",
    "release-2024-01-a-",
    "release-2024-01-b-",
    error=Observed,
)
def _(tmp: Path) -> Any:
    a, b = _caches(
        tmp,
        [
            "{name: m, model: hf, model_args: 'pretrained=o/m,revision=release-2024-01-a'}",
            "{name: m, model: hf, model_args: 'pretrained=o/m,revision=release-2024-01-b'}",
        ],
    )
    if a != b:
        raise Observed(f"{Path(a).name} | {Path(b).name}")


@CASES.case("cache of another precision", "different caches", error=Observed)
def _(tmp: Path) -> Any:
    a, b, again = _caches(
        tmp,
        [
            "{name: m, model: hf, model_args: 'pretrained=o/m,revision=r1,dtype=float32'}",
            "{name: m, model: hf, model_args: 'pretrained=o/m,revision=r1,dtype=bfloat16'}",
            "{name: m, model: hf, model_args: 'pretrained=o/m,revision=r1,dtype=float32'}",
        ],
    )
    if a != b and a == again:
        raise Observed("different caches, and the same one again for the same identity")


# ------------------------------------------------------------------------------------ the default board
@CASES.case("schema 1.0 board with chat template and base model", "2 row(s) on 1 board(s)", error=Observed)
def _(tmp: Path) -> Any:
    document = load_document(OLD_BOARD)
    raise Observed(f"{len(document['rows'])} row(s) on {len(document['boards'])} board(s)")


@CASES.case(
    "schema 1.0 row with edited settings", "leaderboard-1.0.json", "settings_id", "schema 1.x", error=ValueError
)
def _(tmp: Path) -> Any:
    document = json.loads(OLD_BOARD.read_text(encoding="utf-8"))
    document["rows"][0]["settings"]["limit"] = 7.0
    path = tmp / "leaderboard-1.0.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return load_document(path)


@CASES.case("render --out ending in a slash", "--out", "pages/", "names a folder", error=ValueError)
def _(tmp: Path) -> Any:
    return cli("leaderboard", "render", str(_board(tmp)), "--out", f"{tmp / 'pages'}/")


@CASES.case("build --cache-dir a file", "cannot write into", "leaderboard.json", "not a folder", error=ValueError)
def _(tmp: Path) -> Any:
    fake, models, _ = _fake(tmp)
    board = _board(tmp)
    return build(tmp / "lb2", model_list=models, night="2026-01-02", cache_dir=board, lm_eval=str(fake), progress=False)


# ------------------------------------------------------------------------------------ found by the audit
@CASES.case("render --out a symlink loop", "--out", "loop.html", "symbolic link", error=ValueError)
def _(tmp: Path) -> Any:
    (tmp / "loop.html").symlink_to(tmp / "pool.html")
    (tmp / "pool.html").symlink_to(tmp / "loop.html")
    return cli("leaderboard", "render", str(_board(tmp)), "--out", str(tmp / "loop.html"))


@CASES.case("render --out a 300-character name", "cannot write", "xxxx.html", "File name too long", error=OutputError)
def _(tmp: Path) -> Any:
    return cli("leaderboard", "render", str(_board(tmp)), "--out", str(tmp / ("x" * 300 + ".html")))


@CASES.case("render --out ''", "--out", "empty", error=ValueError)
def _(tmp: Path) -> Any:
    return cli("leaderboard", "render", str(_board(tmp)), "--out", "")


@CASES.case("render of a board that is a pipe", "board.json", "not a regular file", error=ValueError)
def _(tmp: Path) -> Any:
    os.mkfifo(tmp / "board.json")
    return cli("leaderboard", "render", str(tmp / "board.json"), "--out", str(tmp / "page.html"))


@CASES.case("board with a key given twice", "leaderboard.json", "['kind']", "twice", error=ValueError)
def _(tmp: Path) -> Any:
    board = _board(tmp)
    board.write_text(board.read_text().replace('"kind": "leaderboard"', '"kind": "leaderboard", "kind": "night"', 1))
    return load_document(board)


@CASES.case("board nested 100000 deep", "deep.json", "nested too deeply", error=ValueError)
def _(tmp: Path) -> Any:
    (tmp / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    return load_document(tmp / "deep.json")


@CASES.case("schema 1.0 board with settings a string", "$.rows[0].settings", error=ValueError)
def _(tmp: Path) -> Any:
    document = json.loads(OLD_BOARD.read_text(encoding="utf-8"))
    document["rows"][0]["settings"] = "x"
    (tmp / "old.json").write_text(json.dumps(document), encoding="utf-8")
    return load_document(tmp / "old.json")


for _option in ("--timeout", "--limit"):
    for _value in ("nan", "inf"):

        def _non_finite(tmp: Path, option: str = _option, value: str = _value) -> Any:
            (tmp / "models.yaml").write_text("models:\n  - {name: m, model: m}\n", encoding="utf-8")
            return cli(
                "leaderboard",
                "build",
                "--models",
                str(tmp / "models.yaml"),
                "--out",
                str(tmp / "lb"),
                option,
                value,
                "--lm-eval",
                "/bin/true",
                "--no-progress",
            )

        CASES.add(f"build {_option} {_value}", _non_finite, _option.strip("-"), _value, error=ValueError)


for _label, _text, _expect in [
    (
        "model list: a key given twice",
        "models:\n  - {name: a, name: b, model: m}\n",
        ("models.yaml", "['name']", "twice"),
    ),
    (
        "model list: a key given twice on its own line (issue 39)",
        "models:\n  - name: a\n    model: dummy\n    model_args: x=1\n    model: hf\n",
        ("models.yaml", "['model'] given twice (first on line 3)", "line 5"),
    ),
    (
        "model list: env value a mapping",
        "models:\n  - {name: m, model: m, env: {A: {b: 1}}}\n",
        ("models.yaml", "'env'"),
    ),
    (
        "model list: extra_args setting --output_path",
        "models:\n  - {name: m, model: m, extra_args: [--output_path, x]}\n",
        ("models.yaml", "extra_args", "--output_path"),
    ),
    (
        "model list: batch_size empty",
        "models:\n  - {name: m, model: m, batch_size: ''}\n",
        ("models.yaml", "batch_size"),
    ),
]:

    def _bad_list(tmp: Path, text: str = _text) -> Any:
        (tmp / "models.yaml").write_text(text, encoding="utf-8")
        return build(
            tmp / "lb", model_list=tmp / "models.yaml", night="2026-01-01", lm_eval="/bin/true", progress=False
        )

    CASES.add(_label, _bad_list, *_expect, error=ValueError)


@CASES.case("model list not UTF-8", "models.yaml", "line 2", "not valid UTF-8", error=ValueError)
def _(tmp: Path) -> Any:
    (tmp / "models.yaml").write_bytes("models:\n  - {name: caf\xe9, model: m}\n".encode("latin-1"))
    return build(tmp / "lb", model_list=tmp / "models.yaml", night="2026-01-01", lm_eval="/bin/true", progress=False)
