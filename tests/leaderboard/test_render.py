"""The static page: self-contained, hostile strings stay text, and it really renders in Chromium."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import shutil
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.leaderboard.board.failures import failure_error
from logic_consistency.leaderboard.board.identity import row_id, settings_id
from logic_consistency.leaderboard.board.ingest import BootstrapSettings, ingest_results
from logic_consistency.leaderboard.board.merge import make_document
from logic_consistency.leaderboard.page.render import embed_json, render_file, render_html

BOOT = BootstrapSettings(n_resamples=300)
PWN = "document.body.setAttribute('data-pwned','{}')"
HOSTILE = {
    "name": "<script>alert(1)</script><script>" + PWN.format("name") + "</script>",
    "model_args": '"><img src=x onerror="' + PWN.format("img") + '">',
    "revision": "</script><script>" + PWN.format("close") + "</script><!--",
    "task": '<svg onload="' + PWN.format("svg") + '">task</svg>',
    "metric": "<b onmouseover=alert(1)>m</b>",
    "results_file": '<iframe src="javascript:alert(1)"></iframe>\u2028&amp;',
    "failure": "<style>*{display:none}</style><script>" + PWN.format("failure") + "</script>",
}


class _Dom(HTMLParser):
    """Collects tags and text of an HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Dom:
    dom = _Dom()
    dom.feed(html)
    return dom


@pytest.fixture(scope="module")
def row(dummy_run: Path) -> dict[str, Any]:
    return ingest_results(dummy_run, name="plain-model", night="2026-06-01", bootstrap=BOOT)


@pytest.fixture(scope="module")
def hostile_document(row: dict[str, Any]) -> dict[str, Any]:
    """A valid leaderboard where every free-text field an attacker controls carries markup."""
    bad = copy.deepcopy(row)
    bad["model"].update(name=HOSTILE["name"], model_args=HOSTILE["model_args"], revision=HOSTILE["revision"])
    task = next(name for name, entry in bad["tasks"].items() if entry["kind"] == "task" and entry["metrics"])
    bad["tasks"][HOSTILE["task"]] = bad["tasks"].pop(task)
    bad["settings"]["tasks"][HOSTILE["task"]] = bad["settings"]["tasks"].pop(task)
    metrics = bad["tasks"]["logic_consistency_pairwise"]["metrics"]
    metrics[HOSTILE["metric"]] = metrics.pop(next(iter(metrics)))
    bad["provenance"]["results_file"] = HOSTILE["results_file"]
    # measured an hour later, so the hostile row's board is the latest one, which the page draws first
    measured = datetime.fromisoformat(row["measured_at"].replace("Z", "+00:00")) + timedelta(hours=1)
    bad["measured_at"] = (
        measured.strftime("%Y-%m-%dT%H:%M:%SZ") if row["measured_at"].endswith("Z") else measured.isoformat()
    )
    bad["settings_id"] = settings_id(bad["settings"])
    bad["row_id"] = row_id(
        bad["model"]["name"],
        bad["model"]["revision"],
        bad["model"]["precision"],
        bad["prompt_set"]["id"],
        bad["settings_id"],
    )
    failure = {
        "name": HOSTILE["failure"],
        "backend": HOSTILE["model_args"],
        "model_args": HOSTILE["name"],
        "night": "2026-06-01",
        "failed_at": "2026-06-01T03:00:00Z",
        "error": failure_error("lm_eval_failed", returncode=1),  # no free text: a code (issue 46)
        "log_file": None,
    }
    return make_document("leaderboard", [row, bad], [failure], night="2026-06-01", bootstrap=BOOT)


def test_embedded_json_cannot_break_out_of_its_script_element() -> None:
    value = {"s": "</script><!-- & \u2028 \u2029 <b>", "k<>": [1.5, None]}
    text = embed_json(value)
    assert not set(text) & {"<", ">", "&"} and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == value


def test_the_page_is_self_contained_and_holds_no_raw_hostile_markup(hostile_document: dict[str, Any]) -> None:
    html = render_html(hostile_document)
    assert html.count("<script") == 2 and html.count("</script>") == 2
    for text in HOSTILE.values():
        assert text not in html
    # no external resource anywhere: the only URL is the SVG namespace used by the script
    assert set(re.findall(r"https?://[^\s\"')]+", html)) == {"http://www.w3.org/2000/svg"}
    data = re.search(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', html, re.DOTALL)
    assert data is not None and json.loads(data.group(1))["doc"] == hostile_document
    # the CSP allows exactly the page's own script and style
    script = re.search(r"<script>(.*)</script>", html, re.DOTALL).group(1)  # type: ignore[union-attr]
    style = re.search(r"<style>(.*)</style>", html, re.DOTALL).group(1)  # type: ignore[union-attr]
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)  # type: ignore[union-attr]
    for block in (script, style):
        digest = base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp
    assert "default-src 'none'" in csp and "innerHTML" not in script and "eval(" not in script


def test_rendering_refuses_an_invalid_document(hostile_document: dict[str, Any]) -> None:
    broken = copy.deepcopy(hostile_document)
    broken["rows"][0]["settings_id"] = "0" * 16
    with pytest.raises(ValueError, match="not a valid leaderboard"):
        render_html(broken)


def test_hostile_strings_render_as_text_in_chromium(
    hostile_document: dict[str, Any], tmp_path: Path, browser: Callable[..., Any]
) -> None:
    page = render_file(hostile_document, tmp_path / "index.html")
    run = browser(page, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = _parse(run.stdout)
    body = next(attrs for tag, attrs in dom.tags if tag == "body")
    assert body.get("data-rendered") == "ok", run.stdout[-3000:]
    assert "data-pwned" not in body and "data-pwned=" not in run.stdout.split("</script>")[-1]
    tags = [tag for tag, _ in dom.tags]
    assert tags.count("script") == 2 and "img" not in tags and "iframe" not in tags and "b" not in tags
    text = "".join(dom.text)
    # the board with the hostile row is drawn first (latest); its strings appear verbatim as text
    for key in ("name", "model_args", "failure"):
        assert HOSTILE[key] in text, key
    options = [attrs.get("value") for tag, attrs in dom.tags if tag == "option"]
    assert HOSTILE["task"] in options or HOSTILE["task"] in text


def test_the_page_draws_every_section(row: dict[str, Any], tmp_path: Path, browser: Callable[..., Any]) -> None:
    document = make_document("leaderboard", [row], night="2026-06-01", bootstrap=BOOT)
    page = render_file(document, tmp_path / "index.html")
    run = browser(page, "--dump-dom")
    dom = _parse(run.stdout)
    body = next(attrs for tag, attrs in dom.tags if tag == "body")
    assert body.get("data-rendered") == "ok", run.stdout[-3000:]
    table_rows = [attrs for tag, attrs in dom.tags if tag == "tr" and attrs.get("data-row-id")]
    assert [attrs["data-row-id"] for attrs in table_rows] == [row["row_id"]]
    classes = [attrs.get("class") for _, attrs in dom.tags]
    assert classes.count("radar-card") == 1
    ks = [m for m in row["tasks"]["logic_consistency_pairwise"]["metrics"] if m.startswith("s_tran_")]
    assert len(ks) >= 2  # the suite reports s_tran at several K, so the chart draws a line per model
    assert [tag for tag, _ in dom.tags].count("polyline") == 1
    text = "".join(dom.text)
    assert "s_tran(3)" in text and "K (items per sampled subset)" in text
    assert ("generation label" in text) == bool(row["confusion"])
    assert row["provenance"]["lm_eval_version"] in text and row["settings_id"] in text
    shot = tmp_path / "page.png"
    screenshot = browser(page, f"--screenshot={shot}", "--window-size=1400,2000")
    assert screenshot.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


def test_render_command(row: dict[str, Any], tmp_path: Path, cli: Callable[..., Any]) -> None:
    (tmp_path / "leaderboard.json").write_text(
        json.dumps(make_document("leaderboard", [row], bootstrap=BOOT)), encoding="utf-8"
    )
    run = cli("leaderboard", "render", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "index.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    missing = cli("leaderboard", "render", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and f"{tmp_path / 'nope.json'}: leaderboard file not found" in missing.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_script_parts_are_each_a_complete_script(tmp_path: Path) -> None:
    """Every part parses on its own (``node --check``), and together they are the page's one script."""
    from importlib import resources

    from logic_consistency.leaderboard.page.render import PAGE_SCRIPTS

    parts = {
        name: resources.files("logic_consistency.leaderboard.page").joinpath(name).read_text(encoding="utf-8")
        for name in PAGE_SCRIPTS
    }
    for name, text in parts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        checked = children.run(["node", "--check", str(tmp_path / name)], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, f"{name}: {checked.stderr}"
        assert len(text.splitlines()) <= 400, name
    broken = tmp_path / "broken.js"  # the check itself: an unclosed part fails it
    broken.write_text(parts["page.js"].rstrip()[: -len("})();")], encoding="utf-8")
    assert children.run(["node", "--check", str(broken)], capture_output=True, timeout=60).returncode != 0


def test_an_instruct_model_with_its_chat_template_and_a_base_model_share_one_board(
    dummy_run: Path, tmp_path: Path, browser: Callable[..., Any]
) -> None:
    """How a model is prompted is a row property: both rows are ranked side by side, each showing it."""
    chat_folder = tmp_path / "chat"
    chat_folder.mkdir()
    for source in dummy_run.parent.iterdir():  # the same run, as lm-eval records it with --apply_chat_template
        (chat_folder / source.name).write_bytes(source.read_bytes())
    chat_results = chat_folder / dummy_run.name
    results = json.loads(chat_results.read_text(encoding="utf-8"))
    results.update(chat_template="{{ messages }}", chat_template_sha="c4a7" * 16, fewshot_as_multiturn=True)
    chat_results.write_text(json.dumps(results), encoding="utf-8")
    instruct = ingest_results(chat_results, name="instruct-model", night="2026-06-01", bootstrap=BOOT)
    base = ingest_results(dummy_run, name="base-model", night="2026-06-01", bootstrap=BOOT)
    document = make_document("leaderboard", [instruct, base], night="2026-06-01", bootstrap=BOOT)
    assert len(document["boards"]) == 1 and instruct["settings_id"] == base["settings_id"]
    assert (
        instruct["provenance"]["fewshot_as_multiturn"] is True and base["provenance"]["chat_template_applied"] is False
    )
    page = render_file(document, tmp_path / "index.html")
    run = browser(page, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = _parse(run.stdout)
    body = next(attrs for tag, attrs in dom.tags if tag == "body")
    assert body.get("data-rendered") == "ok", run.stdout[-3000:]
    ranked = [attrs["data-row-id"] for tag, attrs in dom.tags if tag == "tr" and attrs.get("data-row-id")]
    assert sorted(ranked) == sorted([instruct["row_id"], base["row_id"]])  # one table, both rows
    text = "".join(dom.text)
    assert "chat template c4a7c4a7" in text and "no chat template" in text
    assert "2 rows on 1 board" in text and "One board: every row below was measured under the same settings." in text


#: Names that are properties of every JavaScript object: as plain-object keys they set the prototype
#: (``entries["__proto__"] = ...``) or read a built-in (``row.tasks["constructor"]``).
PROTO_NAMES = ("__proto__", "constructor", "toString")


def _proto_row(model: str, *, missing: str | None = None) -> dict[str, Any]:
    """A hand row named ``model`` whose tasks and metrics are :data:`PROTO_NAMES` (scores differ per
    metric: 0.1, 0.2, 0.3), without the task ``missing`` if given."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/conftest.py: the hand-written row
    from conftest import hand_row

    row = hand_row(model)
    template_settings = next(iter(row["settings"]["tasks"].values()))
    template_entry = next(iter(row["tasks"].values()))
    tasks = [name for name in PROTO_NAMES if name != missing]
    row["settings"]["tasks"] = {name: copy.deepcopy(template_settings) for name in tasks}
    metrics = {
        name: {"score": score, "ci95": [score, score], "n": 2, "higher_is_better": True, "lm_eval_stderr": None}
        for name, score in zip(PROTO_NAMES, (0.1, 0.2, 0.3), strict=True)
    }
    row["tasks"] = {name: copy.deepcopy(template_entry) | {"metrics": copy.deepcopy(metrics)} for name in tasks}
    row["provenance"]["task_config_hashes"] = {name: template_settings["config_hash"] for name in tasks}
    row["provenance"]["results_file"] = f"runs/{model}/results.json"  # one run per model
    row["settings_id"] = settings_id(row["settings"])
    row["row_id"] = row_id(model, "unpinned", "n/a", row["prompt_set"]["id"], row["settings_id"])
    return row


def test_names_that_are_javascript_object_properties_render_as_data(
    tmp_path: Path, browser: Callable[..., Any]
) -> None:
    """Issue 29: a task or metric named ``__proto__`` emptied the score table or lost a column, with
    ``data-rendered="ok"``. Every row, column, cell and view must be there."""
    rows = [_proto_row(name) for name in PROTO_NAMES]
    document = make_document("leaderboard", rows, night="2026-06-01", bootstrap=BOOT)
    assert len(document["boards"]) == 1
    page = render_file(document, tmp_path / "index.html")
    run = browser(page, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = _parse(run.stdout)
    body = next(attrs for tag, attrs in dom.tags if tag == "body")
    assert body.get("data-rendered") == "ok", run.stdout[-3000:]
    views = [attrs.get("value") for tag, attrs in dom.tags if tag == "option" and attrs.get("value") in PROTO_NAMES]
    assert sorted(views) == sorted(PROTO_NAMES)  # every task is a view of the board
    table = run.stdout[run.stdout.index('id="leaderboard"') :]
    table = table[: table.index("</table>")]
    heads = re.findall(r'<th[^>]*scope="col"[^>]*><button type="button">([^<]*)</button>', table)
    assert heads == ["Model", *PROTO_NAMES, "Unparseable", "Instances", "Measured"]  # every metric a column
    ranked = [attrs["data-row-id"] for tag, attrs in _parse(table).tags if tag == "tr" and attrs.get("data-row-id")]
    assert sorted(ranked) == sorted(row["row_id"] for row in rows)  # every model is a row
    for row in rows:
        line = table[table.index(f'data-row-id="{row["row_id"]}"') :]
        line = line[: line.index("</tr>")]
        assert f'<span class="modelname">{row["model"]["name"]}</span>' in line
        scores = re.findall(r'<div class="score">([^<]*)</div>', line)
        assert sorted(scores) == ["0.100", "0.200", "0.300"], (row["model"]["name"], scores)  # no empty cell


def test_a_view_a_row_lacks_is_not_read_from_the_object_prototype(tmp_path: Path, browser: Callable[..., Any]) -> None:
    """The view ``constructor`` (the largest task, so drawn first) on a row without that task: the row's
    cells are empty ("—"), not read from ``Object``'s constructor (which stopped the page)."""
    rows = [_proto_row("full"), _proto_row("partial", missing="constructor")]
    rows[0]["tasks"]["constructor"]["n_instances"] = 3
    rows[1]["settings"] = rows[0]["settings"]  # one board: the partial row ran the same settings
    rows[1]["settings_id"] = rows[0]["settings_id"]
    rows[1]["row_id"] = row_id("partial", "unpinned", "n/a", rows[1]["prompt_set"]["id"], rows[1]["settings_id"])
    document = make_document("leaderboard", rows, night="2026-06-01", bootstrap=BOOT)
    page = render_file(document, tmp_path / "index.html")
    run = browser(page, "--dump-dom")
    body = next(attrs for tag, attrs in _parse(run.stdout).tags if tag == "body")
    assert body.get("data-rendered") == "ok", run.stdout[-3000:]
    table = run.stdout[run.stdout.index('id="leaderboard"') :]
    for row, scores in ((rows[0], ["0.100", "0.200", "0.300"]), (rows[1], [])):
        line = table[table.index(f'data-row-id="{row["row_id"]}"') :]
        line = line[: line.index("</tr>")]
        assert sorted(re.findall(r'<div class="score">([^<]*)</div>', line)) == scores
    assert table.count('<td class="na">—</td>') == 3  # the partial row: one empty cell per metric
