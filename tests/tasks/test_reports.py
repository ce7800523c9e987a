"""The family registry: families declare their metrics' display facts; readers find them by walking the package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logic_consistency.tasks import reports

ROOT = Path(__file__).resolve().parents[2]


def test_every_family_with_a_display_module_is_found_and_no_other_module() -> None:
    found = reports.family_modules("display")
    folders = sorted(p.parent.name for p in (ROOT / "tasks").glob("*/display.py"))
    assert found == tuple(f"logic_consistency.tasks.{name}.display" for name in folders)
    assert set(folders) == {"causal"}


def test_every_family_with_a_metrics_file_is_found_and_no_other_file() -> None:
    found = [path.parent.name for path in reports.family_files(reports.METRICS_FILE)]
    folders = sorted(p.parent.name for p in (ROOT / "tasks").glob(f"*/{reports.METRICS_FILE}"))
    assert found == folders
    assert set(folders) == {"pairwise", "gv", "causal", "invariance"}


GOOD = """\
metrics:
  my_rate: {label: mine, order: 5, kind: rate, description: my rate}
  'my_series_(\\d+)': {label: 'mine({value})', order: 6, kind: radar_rate, description: mine, series: K}
"""


def test_a_metrics_file_declares_displays_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "_metrics_yaml"
    path.write_text(GOOD, encoding="utf-8")
    rate, series = reports.load_metric_file(path)
    assert rate == reports.MetricDisplay("my_rate", label="mine", order=5, description="my rate")
    assert series.info(3) == {**series.info(3), "label": "mine(3)", "radar": True, "series": "K", "order": 6.3}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metrics: {m: {label: l, order: 1, kind: rate, description: d, lable: l}}", r"'m'.*'lable' was unexpected"),
        ("metrics: {m: {label: l, order: 1, kind: ratio, description: d}}", r"'m', key 'kind': 'ratio' is not one of"),
        ("metrics: {m: {label: l, order: 1, kind: rate}}", r"'m'.*'description' is a required property"),
        ("metrics: {m: {label: l, order: one, kind: rate, description: d}}", r"'m', key 'order': 'one' is not of type"),
        ("metrics: {m: {label: l, order: 1, kind: rate, description: d, series_axis: K}}", r"'m'.*'series' is a"),
        ("metrics: {m_(x: {label: l, order: 1, kind: rate, description: d, series: K}}", r"'m_\(x'.*one group"),
        ("metrics: {1: {label: l, order: 1, kind: rate, description: d}}", r"metric name 1 is not a string"),
        ("metric: {m: {label: l, order: 1, kind: rate, description: d}}", r"one key 'metrics'"),
        ("metrics: [m", r"not valid YAML"),
        (
            "metrics:\n  m: {label: l, order: 1, kind: rate, description: d}\n  m: {label: n, order: 2, kind: rate, description: e}",
            r"not valid YAML.*\['m'\] given twice",
        ),
    ],
)
def test_a_bad_metrics_file_is_an_error_naming_the_file_and_the_metric(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "_metrics_yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(reports.DeclarationError, match=rf"^{re.escape(str(path))}: .*{message}"):
        reports.load_metric_file(path)


@pytest.mark.parametrize(
    ("name", "label", "radar", "value"),
    [
        ("s_comm", "s_comm", True, None),
        ("s_tran_4", "s_tran(4)", True, 4),
        ("gv_consistency", "GV", True, None),
        ("tau_all", "τ all", True, None),
        ("igc_density", "IGC dens", False, None),
    ],
)
def test_declared_metrics_are_found_with_their_facts(name: str, label: str, radar: bool, value: int | None) -> None:
    info = reports.metric_display(name)
    assert info is not None and info["label"] == label and info["radar"] is radar
    assert info.get("series_value") == value
    for key in ("description", "range", "higher_is_better", "order", "count"):
        assert key in info


def test_an_undeclared_metric_has_no_display_facts() -> None:
    assert reports.metric_display("my_new_metric") is None
    assert reports.metric_display("s_tran_x") is None  # a series needs its integer parameter


def test_counts_and_ranges_are_declared_consistently() -> None:
    ranges = reports.declared_ranges()
    assert set(ranges) <= {(0, 1), (-1, 1)}
    every = [pattern for patterns in ranges.values() for pattern in patterns]
    assert len(every) == len(set(every)), "a metric declared in two ranges"
    for count in ("unparseable", "unparseable_generator", "unparseable_ranking", "n_majority_ties"):
        info = reports.metric_display(count)
        assert info is not None and info["count"] is True
        assert not any(re.fullmatch(pattern, count) for pattern in every)


def test_the_leaderboard_names_no_declared_metric() -> None:
    """leaderboard/ reads metric names from the declarations; its code and page name none of them."""
    ranges = reports.declared_ranges()
    names = [pattern.replace("\\", "") for patterns in ranges.values() for pattern in patterns if "(" not in pattern]
    series = [pattern.split("(", 1)[0] for patterns in ranges.values() for pattern in patterns if "(" in pattern]
    assert "s_comm" in names and "s_tran_" in series
    for path in sorted((ROOT / "leaderboard").rglob("*")):
        if path.suffix not in {".py", ".js", ".html", ".json", ".css"}:
            continue
        text = path.read_text(encoding="utf-8")
        named = [name for name in names if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text)]
        named += [prefix for prefix in series if prefix in text]
        assert not named, f"{path.relative_to(ROOT)} names family metrics {named}"


def test_the_leaderboard_names_no_family_report() -> None:
    """leaderboard/ builds report sections (schema, page) from the hooks; its code and page name none of them."""
    hooks = reports.report_hooks()
    assert [hook.section for hook in hooks] == ["confusion"]
    # the causal report's own fields, besides what its hook declares
    words = {"δ-CAUSAL", "CAUSAL", "Confusion", "n_rankings", "n_unparseable_generation", "n_unparseable_ranking"}
    for hook in hooks:
        words |= {hook.section, hook.title, hook.chart.rows, hook.chart.columns, hook.empty}
    for path in sorted((ROOT / "leaderboard").rglob("*")):
        if path.suffix not in {".py", ".js", ".html", ".json", ".css"}:
            continue
        text = path.read_text(encoding="utf-8")
        named = sorted(word for word in words if re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text))
        assert not named, f"{path.relative_to(ROOT)} names family reports {named}"


def test_a_report_hook_declares_a_valid_schema_and_a_chart() -> None:
    import jsonschema

    for hook in reports.report_hooks():
        jsonschema.Draft202012Validator.check_schema(dict(hook.schema))
        assert hook.chart.info()["kind"] == "count_matrix" and hook.title and hook.description
