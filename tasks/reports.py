"""Registry of what a task family tells readers of its results (the leaderboard).

How each metric is shown (:class:`MetricDisplay`, declared as data in the family's
``_metrics_yaml``: ``label``, ``order``, ``kind`` from :data:`KINDS`, ``description``, and for a
series ``series``, ``series_title``, ``series_axis``; validated by :func:`load_metric_file`), and
the reports a family contributes per task (:class:`ReportHook`, registered from its ``display.py``,
with the JSON Schema and chart of its section). Both are found by walking this package, so the
leaderboard and this module name no family; a metric nobody declared is shown generically.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import jsonschema
import yaml

from logic_consistency.common import load_yaml, read_text

__all__ = [
    "CountMatrixChart",
    "DeclarationError",
    "KINDS",
    "METRICS_FILE",
    "MetricDisplay",
    "ReportHook",
    "declared_ranges",
    "family_files",
    "family_modules",
    "load_metric_file",
    "metric_display",
    "register_metrics",
    "register_report",
    "report_hooks",
]


@dataclass(frozen=True)
class MetricDisplay:
    """How a reader shows one metric (or one series of metrics) a family reports.

    Attributes:
        name: The metric's name in lm-eval's results (without the ``,filter`` suffix); with
            ``series``, a regular expression whose one group is the series parameter
            (``s_tran_(\\d+)``).
        label: Short column label; with ``series``, ``{value}`` stands for the parameter.
        description: One sentence for tooltips.
        range: The values the metric can take (rates ``(0, 1)``, correlations ``(-1, 1)``).
        higher_is_better: The direction of "better"; ``None`` when neither is (a
            ``balanced_rate`` such as position bias, whose ideal is 0.5).
        radar: Shown on the radar chart (a self-consistency rate).
        order: Column order (smaller first); a series adds ``min(value, 9) / 10``.
        count: A count (summed over instances, no interval) rather than a rate.
        series: The name of the series parameter (``"K"``); the page plots such a series against it.
        series_title: The series' own name on that plot (``"s_tran(K)"``).
        series_axis: The parameter's axis label on that plot (``"K (items per sampled subset)"``).
    """

    name: str
    label: str
    description: str
    range: tuple[float, float] = (0.0, 1.0)
    higher_is_better: bool | None = True
    radar: bool = False
    order: float = 100.0
    count: bool = False
    series: str | None = None
    series_title: str | None = None
    series_axis: str | None = None

    def info(self, value: int | None = None) -> dict[str, Any]:
        """The JSON the page reads (``value``: the series parameter of this metric)."""
        info: dict[str, Any] = {
            "label": self.label.format(value=value) if self.series else self.label,
            "description": self.description.format(value=value) if self.series else self.description,
            "range": list(self.range),
            "higher_is_better": self.higher_is_better,
            "radar": self.radar,
            "order": self.order + (min(value, 9) / 10 if self.series and value is not None else 0),
            "count": self.count,
        }
        if self.series:
            info.update(
                series=self.series,
                series_title=self.series_title or self.label,
                series_value=value,
                series_axis=self.series_axis or self.series,
            )
        return info


#: The facts a metric shares with its kind, by the ``kind`` a ``_metrics_yaml`` names (a rate in
#: [0, 1] where higher is better needs none).
KINDS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "rate": MappingProxyType({}),
        "radar_rate": MappingProxyType({"radar": True}),
        "lower_rate": MappingProxyType({"higher_is_better": False}),
        # a rate whose ideal is in the middle (position bias: 0.5 unbiased): neither direction is better
        "balanced_rate": MappingProxyType({"higher_is_better": None}),
        "correlation": MappingProxyType({"range": (-1, 1)}),
        "radar_correlation": MappingProxyType({"range": (-1, 1), "radar": True}),
        "count": MappingProxyType({"higher_is_better": False, "count": True}),
    }
)

METRICS_FILE = "_metrics_yaml"

#: One metric's declaration in a ``_metrics_yaml`` (the series keys only with ``series``).
_DECLARATION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["label", "order", "kind", "description"],
    "additionalProperties": False,
    "properties": {
        "label": {"type": "string", "minLength": 1},
        "order": {"type": "number"},
        "kind": {"enum": list(KINDS)},
        "description": {"type": "string", "minLength": 1},
        "series": {"type": "string", "minLength": 1},
        "series_title": {"type": "string", "minLength": 1},
        "series_axis": {"type": "string", "minLength": 1},
    },
    "dependentRequired": {"series_title": ["series"], "series_axis": ["series"]},
}


class DeclarationError(ValueError):
    """A family's ``_metrics_yaml`` is malformed (the message names the file and the metric)."""


def load_metric_file(path: Path) -> tuple[MetricDisplay, ...]:
    """The :class:`MetricDisplay` of every metric ``path`` (a ``_metrics_yaml``) declares, in file order."""
    declarations = _read_declarations(path)
    validator = jsonschema.Draft202012Validator(_DECLARATION_SCHEMA)
    return tuple(_metric_display(path, validator, name, declaration) for name, declaration in declarations.items())


def _read_declarations(path: Path) -> dict[Any, Any]:
    """The ``metrics`` mapping of a ``_metrics_yaml`` (the file's one key), else an error naming the file."""
    try:
        document = load_yaml(read_text(path))
    except yaml.YAMLError as error:
        raise DeclarationError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(document, dict) or set(document) != {"metrics"} or not isinstance(document["metrics"], dict):
        raise DeclarationError(f"{path}: expected one key 'metrics' mapping metric names to their display facts")
    return document["metrics"]


def _metric_display(
    path: Path, validator: jsonschema.Draft202012Validator, name: Any, declaration: Any
) -> MetricDisplay:
    """One metric's declaration, checked against the schema (errors name the file, the metric and the key)."""
    if not isinstance(name, str):
        raise DeclarationError(f"{path}: metric name {name!r} is not a string")
    invalid = jsonschema.exceptions.best_match(validator.iter_errors(declaration))
    if invalid is not None:
        where = f", key {invalid.absolute_path[0]!r}" if invalid.absolute_path else ""
        raise DeclarationError(f"{path}: metric {name!r}{where}: {invalid.message}")
    facts = {key: value for key, value in declaration.items() if key != "kind"}
    if "series" in facts and _series_groups(name) != 1:
        raise DeclarationError(f"{path}: metric {name!r}: a series name is a regular expression with one group")
    return MetricDisplay(name, **facts, **KINDS[declaration["kind"]])


def _series_groups(name: str) -> int:
    try:
        return re.compile(name).groups
    except re.error:
        return 0


_TASKS = Path(__file__).parent
_METRICS: dict[str, MetricDisplay] = {}
_SERIES: list[tuple[re.Pattern[str], MetricDisplay]] = []


def register_metrics(*displays: MetricDisplay) -> None:
    """Declare how metrics are shown (a name declared again replaces the earlier declaration)."""
    for display in displays:
        if display.series:
            _SERIES.append((re.compile(display.name), display))
        else:
            _METRICS[display.name] = display


@functools.cache
def _load_declarations() -> None:
    for path in family_files(METRICS_FILE):
        register_metrics(*load_metric_file(path))
    for module in family_modules("display"):
        importlib.import_module(module)


def declared_ranges() -> dict[tuple[float, float], list[str]]:
    """Regular expressions (full-match) of every declared metric that is not a count, by value range."""
    _load_declarations()
    ranges: dict[tuple[float, float], list[str]] = {}
    for name, display in _METRICS.items():
        if not display.count:
            ranges.setdefault(tuple(display.range), []).append(re.escape(name))  # type: ignore[arg-type]
    for pattern, display in _SERIES:
        if not display.count:
            ranges.setdefault(tuple(display.range), []).append(pattern.pattern)  # type: ignore[arg-type]
    return {key: sorted(value) for key, value in ranges.items()}


def metric_display(name: str) -> dict[str, Any] | None:
    """The display facts a family declared for metric ``name`` (no ``,filter``), or ``None``."""
    _load_declarations()
    if name in _METRICS:
        return _METRICS[name].info()
    for pattern, display in _SERIES:
        match = pattern.fullmatch(name)
        if match:
            return display.info(int(match.group(1)))
    return None


@dataclass(frozen=True)
class CountMatrixChart:
    """How a reader draws a report that is a label-by-position count matrix.

    The report holds ``labels`` (the names of rows and columns, in order) and ``counts``
    (``counts[i][j]``: how often row label ``i`` was found at column ``j``); the page shows each
    cell as a percentage of its row.

    Attributes:
        rows: The rows' axis title.
        columns: The columns' axis title.
        cell: One cell's tooltip; ``{row}`` and ``{column}`` stand for its labels.
        signed: The labels are signed numbers: ticks show ``+`` on positive labels and a line
            separates the negative labels from the positive ones.
    """

    kind: ClassVar[str] = "count_matrix"
    rows: str
    columns: str
    cell: str
    signed: bool = False

    def info(self) -> dict[str, Any]:
        """The JSON the page reads."""
        return {"kind": self.kind, "rows": self.rows, "columns": self.columns, "cell": self.cell, "signed": self.signed}


@dataclass(frozen=True)
class ReportHook:
    """One report a family contributes per task, and how readers validate and show it.

    Attributes:
        section: Key of the leaderboard row the reports go under (e.g. ``"confusion"``).
        applies: ``applies(task, results_entry)``: whether ``task`` (its ``results[task]`` entry of
            lm-eval's results JSON) gets this report.
        build: ``build(samples_path, task)``: the report as JSON-serialisable data.
        title: The heading of the report's section on the page.
        description: One sentence on what one task's report is (the schema's description).
        schema: The JSON Schema (draft 2020-12, self-contained) of one task's report.
        chart: How the page draws one task's report.
        empty: The page's note when no row of a board has this report.
        note: ``note(report)``: the sentence under one task's chart.
        order: ``order(task, report)``: sort key of a row's tasks in the page's task menu (the
            first is shown first).
    """

    section: str
    applies: Callable[[str, Mapping[str, Any]], bool]
    build: Callable[[Path, str], dict[str, Any]]
    title: str
    description: str
    schema: Mapping[str, Any]
    chart: CountMatrixChart
    empty: str
    note: Callable[[Mapping[str, Any]], str]
    order: Callable[[str, Mapping[str, Any]], Any]


_HOOKS: dict[str, ReportHook] = {}


def register_report(hook: ReportHook) -> ReportHook:
    """Register ``hook`` (one per section; registering a section again replaces it).

    A family registers its hooks from its ``display.py`` (directly or by importing the module that
    defines them), which :func:`report_hooks` imports.
    """
    _HOOKS[hook.section] = hook
    return hook


def report_hooks() -> tuple[ReportHook, ...]:
    """Every registered hook, after importing every family's ``display`` module."""
    _load_declarations()
    return tuple(_HOOKS.values())


def _families() -> list[str]:
    # a family is a sub-package of this package other than data (the loaders every family shares)
    return sorted(info.name for info in pkgutil.iter_modules([str(_TASKS)]) if info.ispkg and info.name != "data")


def family_modules(name: str) -> tuple[str, ...]:
    """``logic_consistency.tasks.<family>.<name>`` for every family package that has a module ``name``.

    A family is a sub-package of ``logic_consistency.tasks`` other than ``data`` (the loaders every
    family shares). Found by walking the package, so neutral code never names a family.
    """
    modules = (f"{__package__}.{family}.{name}" for family in _families())
    return tuple(module for module in modules if importlib.util.find_spec(module) is not None)


def family_files(name: str) -> tuple[Path, ...]:
    """``tasks/<family>/<name>`` for every family package that has a file ``name`` (as :func:`family_modules`)."""
    return tuple(path for path in (_TASKS / family / name for family in _families()) if path.is_file())
