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

from logic_consistency.common import atomic_write

from .schema import validate

__all__ = ["embed_json", "metric_info", "render_file", "render_html"]

_S_TRAN = re.compile(r"^s_tran_(\d+)$")

#: The page script, split by job and concatenated in this order into the page's one inline script
#: (one closure: ``page.js`` opens it with the helpers, the data and the state; ``page_main.js``
#: closes it with the provenance panel and the wiring). Each part alone is not a complete script.
PAGE_SCRIPTS = ("page.js", "page_table.js", "page_charts.js", "page_main.js")

#: Known metrics: display label, value range, shown on the radar (a self-consistency metric), order.
_KNOWN: dict[str, dict[str, Any]] = {
    "s_comm": {"label": "s_comm", "description": "commutativity: same preference in both presentation orders", "range": [0, 1], "radar": True, "order": 20},
    "s_neg": {"label": "s_neg", "description": "negation invariance: the negated question gets the opposite answer", "range": [0, 1], "radar": True, "order": 30},
    "human_agreement": {"label": "H", "description": "agreement with human preferences (accuracy, not self-consistency)", "range": [0, 1], "radar": False, "order": 40},
    "position_bias": {"label": "pos bias", "description": "position bias: share of judgements won by the first-shown option (0.5 unbiased, 1.0 always A)", "range": [0, 1], "radar": False, "order": 41},
    "p_first_mean": {"label": "P(first)", "description": "mean probability given to the first-shown option (0.5 unbiased)", "range": [0, 1], "radar": False, "order": 42},
    "rank_spearman_win_loss": {"label": "ρ win-loss", "description": "Spearman correlation with human scores of the win-loss ranking of the full pairwise matrix", "range": [-1, 1], "radar": False, "order": 43},
    "rank_spearman_bt": {"label": "ρ B-T", "description": "Spearman correlation with human scores of the Bradley-Terry ranking of the full pairwise matrix", "range": [-1, 1], "radar": False, "order": 44},
    "pairs_spearman": {"label": "ρ PairS", "description": "Spearman correlation with human scores of PairS merge-sort rankings (mean over runs)", "range": [-1, 1], "radar": False, "order": 45},
    "pairs_spearman_calibrated": {"label": "ρ PairS cal", "description": "as ρ PairS, each comparison judged from both presentation orders", "range": [-1, 1], "radar": False, "order": 46},
    "pairs_comparisons_ratio": {"label": "PairS cost", "description": "PairS comparisons per run divided by n(n-1), the full matrix", "range": [0, 1], "radar": False, "order": 47},
    "self_agreement": {"label": "self-agree", "description": "self-agreement: mean share of the majority choice over k sampled chain-of-thought judgements", "range": [0, 1], "radar": False, "order": 48},
    "gv_consistency": {"label": "GV", "description": "generator-validator consistency: the validator accepts the generator's own answer", "range": [0, 1], "radar": True, "order": 50},
    "gv_consistency_strict": {"label": "GV strict", "description": "generator-validator consistency over every document, an unparseable answer counting as inconsistent", "range": [0, 1], "radar": False, "order": 51},
    "gv_left_out": {"label": "GV left out", "description": "share of documents left out of GV consistency (a generator or validator answer could not be parsed)", "range": [0, 1], "radar": False, "order": 52},
    "generator_accuracy": {"label": "gen acc", "description": "generator accuracy (where ground truth exists)", "range": [0, 1], "radar": False, "order": 60},
    "validator_accuracy": {"label": "val acc", "description": "validator accuracy (where ground truth exists)", "range": [0, 1], "radar": False, "order": 61},
    "tau_all": {"label": "τ all", "description": "Kendall tau between generated and ranked order, all intermediates", "range": [-1, 1], "radar": True, "order": 70},
    "tau_defeaters": {"label": "τ def", "description": "Kendall tau within the defeaters", "range": [-1, 1], "radar": False, "order": 71},
    "tau_supporters": {"label": "τ sup", "description": "Kendall tau within the supporters", "range": [-1, 1], "radar": False, "order": 72},
    "cgp": {"label": "CGP", "description": "cross-group position: defeaters ranked before supporters", "range": [0, 1], "radar": True, "order": 80},
    "igc": {"label": "IGC", "description": "intra-group clustering (silhouette definition)", "range": [-1, 1], "radar": True, "order": 90},
    "igc_density": {"label": "IGC dens", "description": "intra-group clustering (density variant)", "range": [0, 1], "radar": False, "order": 91},
}


def metric_info(name: str) -> dict[str, Any]:
    """Display information of a metric name (unknown names get neutral defaults)."""
    base = name.split(",", 1)[0]
    match = _S_TRAN.match(base)
    if match:
        k = int(match.group(1))
        info = {"label": f"s_tran({k})", "description": f"transitivity over random {k}-item subsets",
                "range": [0, 1], "radar": True, "order": 10 + min(k, 9) / 10, "k": k}
    elif base in _KNOWN:
        info = dict(_KNOWN[base])
    else:
        info = {"label": base, "description": base, "range": [0, 1], "radar": False, "order": 100}
    if base != name:  # a non-default lm-eval filter
        info["label"] = f"{info['label']} [{name.split(',', 1)[1]}]"
    return info


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
    payload = {"doc": document, "metricInfo": {name: metric_info(name) for name in sorted(_metric_names(document))}}
    script, style = "".join(_asset(name) for name in PAGE_SCRIPTS), _asset("page.css")
    csp = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    escape = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
    safe_title = "".join(escape.get(char, char) for char in title)
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
