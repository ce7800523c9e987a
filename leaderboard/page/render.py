"""The static leaderboard page: one self-contained HTML file (inline CSS, JS and SVG; no network).

The leaderboard document is embedded as ``<script type="application/json">`` with ``<``, ``>`` and
``&`` written as ``\\u003c`` / ``\\u003e`` / ``\\u0026``, so no string from a results file (model
names, error messages, task names, ...) can close the element or start markup. The page script
(``page.js``, ``page_table.js``, ``page_charts.js``, ``page_main.js``; see :data:`PAGE_SCRIPTS`)
builds the DOM with ``textContent``, ``createElement`` and ``createElementNS`` only, never
``innerHTML``. A Content-Security-Policy allows exactly the page's own script and style (by hash)
and nothing else: no network requests, no injected script could run even if one slipped in.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from logic_consistency.credentials import Redactor
from logic_consistency.outputs import atomic_write
from logic_consistency.tasks.reports import metric_display, report_hooks

from ..board.ingest import is_count
from ..board.schema import validate

__all__ = ["embed_json", "metric_info", "render_file", "render_html", "report_info"]

#: The page script, split by job and concatenated in this order into the page's one inline script.
#: Each part is a complete script on its own: ``page.js`` defines the namespace ``LCPage`` (helpers,
#: data, state), ``page_table.js`` and ``page_charts.js`` read it and define ``LCTable`` and
#: ``LCCharts``, and ``page_main.js`` reads all three and draws the page.
PAGE_SCRIPTS = ("page.js", "page_table.js", "page_charts.js", "page_main.js")


def metric_info(name: str) -> dict[str, Any]:
    """Display information of a metric name: what its family declared, neutral defaults otherwise.

    Families declare their metrics (label, description, range, direction, radar, order, count,
    series) in ``tasks/<family>/_metrics_yaml``; the leaderboard names none of them.
    """
    base = name.split(",", 1)[0]
    info = metric_display(base) or {
        "label": base,
        "description": base,
        "range": [0, 1],
        "higher_is_better": True,
        "radar": False,
        "order": 100,
        "count": is_count(base),
    }
    if base != name:  # a non-default lm-eval filter
        info["label"] = f"{info['label']} [{name.split(',', 1)[1]}]"
    return info


def report_info(document: dict[str, Any]) -> list[dict[str, Any]]:
    """What the page needs to show each report section the families declared (``tasks/reports.py``).

    Per section: its title, the note for a board without it, how to chart it, and per row (by
    ``row_id``) the tasks in menu order with the note under each task's chart.
    """
    sections = []
    for hook in report_hooks():
        order: dict[str, list[str]] = {}
        notes: dict[str, dict[str, str]] = {}
        for row in document["rows"]:
            reports = row[hook.section]
            order[row["row_id"]] = sorted(reports, key=lambda task: hook.order(task, reports[task]))
            notes[row["row_id"]] = {task: hook.note(report) for task, report in reports.items()}
        sections.append(
            {
                "section": hook.section,
                "title": hook.title,
                "empty": hook.empty,
                "chart": hook.chart.info(),
                "order": order,
                "notes": notes,
            }
        )
    return sections


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def embed_json(value: Any) -> str:
    """JSON safe to place inside ``<script type="application/json">``.

    ``ensure_ascii`` escapes every non-ASCII character (including U+2028/U+2029); ``<``, ``>``
    and ``&`` become ``\\u003c``, ``\\u003e``, ``\\u0026``, which JSON.parse reads back unchanged,
    so the text can never contain ``</script`` or ``<!--``.
    """
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def _metric_names(document: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for row in document["rows"]:
        for entry in row["tasks"].values():
            names.update(entry["metrics"])
            names.update(entry["counts"])
    return names


def render_html(document: dict[str, Any], *, title: str = "logic-consistency leaderboard") -> str:
    """The page for a (valid) leaderboard document.

    Raises:
        ValueError: ``document`` is not a valid leaderboard.
    """
    validate(document, "<leaderboard>")
    document = Redactor.from_environment().json(document)  # as the board's writer does (nightly.commit)
    payload = {
        "doc": document,
        "metricInfo": {name: metric_info(name) for name in sorted(_metric_names(document))},
        "reports": report_info(document),
    }
    script, style = "".join(_asset(name) for name in PAGE_SCRIPTS), _asset("page.css")
    csp = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    escape = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
    safe_title = "".join(escape.get(char, char) for char in Redactor.from_environment().text(title))
    page = _asset("page.html")
    replacements = {
        "@@CSP@@": csp,
        "@@TITLE@@": safe_title,
        "@@STYLE@@": style,
        "@@DATA@@": embed_json(payload),
        "@@SCRIPT@@": script,
    }
    return re.sub("@@(CSP|TITLE|STYLE|DATA|SCRIPT)@@", lambda match: replacements[match.group(0)], page)


def render_file(document: dict[str, Any], out: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Render ``document`` to ``out`` (written atomically)."""
    return atomic_write(out, [render_html(document, **kwargs).encode("utf-8")])
