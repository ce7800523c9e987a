"""Wrap a whole lm-eval benchmark (a group, a tag or a task) under option variants: one YAML per leaf.

``logic-consistency wrap mmlu --transforms cyclic --out my_tasks/`` finds the benchmark's leaf tasks
in lm-eval's index, loads each (its documents: offline, the local copy), and before any model call
reports per leaf the detected options field, answer field, number of options, documents excluded and
request count (:class:`LeafPlan`). It then writes one wrapped task per leaf and transform
(``<leaf>_<transform>.yaml``) and a group ``<benchmark>_<transforms>`` whose aggregates are the
metrics every member reports, weighted by size as lm-eval's own ``mmlu`` group is. A group entry
that carries overrides (``{task: <tag or task>, num_fewshot: 5}``) is refused in one line: lm-eval
0.4.13 applies a tag's overrides by collapsing its members, and a wrapper of the leaf's own YAML
would silently lose them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from logic_consistency.options import OptionError, check_option
from logic_consistency.outputs import atomic_write, check_writable

from .fields import FieldsError, detect_fields
from .transforms import question_orders, referring_positions

__all__ = ["GROUP_METRICS", "LeafPlan", "WrapResult", "benchmark_leaves", "wrap_benchmark"]

#: The metrics every wrapped task reports, whatever its transform: the group's aggregates.
GROUP_METRICS = ("acc_original", "acc_mean", "acc_circular", "content_consistency", "pairwise_agreement")
TASK_CLASS = "logic_consistency.tasks.invariance.task.InvarianceTask"


@dataclass(frozen=True)
class LeafPlan:
    """What one wrapped leaf will ask, known before any model call."""

    base: str
    wrapped: str
    transform: str
    options_field: str
    answer_field: str
    n_options: int
    documents: int
    excluded: int
    requests: int

    def line(self) -> str:
        """One line of the report."""
        return (
            f"{self.wrapped}: options field {self.options_field!r}, answer field {self.answer_field!r}, "
            f"{self.n_options} options, {self.documents:,} questions ({self.excluded:,} excluded), "
            f"{self.requests:,} requests"
        )


@dataclass
class WrapResult:
    """The leaves' plans, the group's name and the files written."""

    group: str
    leaves: list[LeafPlan] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def _group_members(entry: Any, where: str) -> list[str]:
    from lm_eval.tasks._yaml_loader import load_yaml  # lm-eval's own YAML reader (lm_eval_hooks.py)

    members = []
    for item in load_yaml(entry.yaml_path, resolve_func=False).get("task") or []:
        if isinstance(item, dict):
            name = item.get("task", item.get("group"))
            extra = sorted(key for key in item if key not in ("task", "group"))
            if extra:
                raise OptionError(
                    f"{where}: group {entry.name!r} lists {name!r} with overrides {extra}; lm-eval 0.4.13 "
                    "collapses a tag's members under overrides and a wrapper reads the leaf's own YAML: wrap "
                    "the leaves by name instead"
                )
            members.append(str(name))
        else:
            members.append(str(item))
    return members


def benchmark_leaves(index: dict[str, Any], name: str, *, where: str = "wrap") -> list[str]:
    """The leaf tasks of ``name`` (a task, a group or a tag) in lm-eval's ``index``, in order, once each.

    Raises:
        OptionError: ``name`` is unknown, or a group lists a member with overrides.
    """
    from lm_eval.tasks._index import Kind

    entry = index.get(name)
    if entry is None:
        raise OptionError(f"{where}: {name!r} is no task, group or tag lm-eval knows (see `lm_eval ls tasks`)")
    if entry.kind == Kind.TAG:
        members = sorted(entry.tags)
    elif entry.kind == Kind.GROUP:
        members = _group_members(entry, where)
    else:
        return [name]
    leaves: list[str] = []
    for member in members:
        leaves += [leaf for leaf in benchmark_leaves(index, member, where=where) if leaf not in leaves]
    return leaves


def _plan_leaf(task: Any, transform: str, options: dict[str, Any]) -> LeafPlan:
    docs = task.eval_docs
    fields = detect_fields(task, docs, mode="fields")
    kept, requests = 0, 0
    for position, doc in enumerate(docs):
        choices = doc[fields.options]
        if len(choices) != fields.n_options or (options["referring"] == "exclude" and referring_positions(choices)):
            continue
        orders = question_orders(transform, choices, int(doc[fields.answer]), question=position, **options)
        kept, requests = kept + 1, requests + len(orders) * fields.n_options
    name = f"{task.config.task}_{transform}"
    return LeafPlan(
        task.config.task,
        name,
        transform,
        fields.options,
        fields.answer,
        fields.n_options,
        kept,
        len(docs) - kept,
        requests,
    )


def _task_yaml(plan: LeafPlan, transform: str, options: dict[str, Any]) -> str:
    metadata = {"transform": transform, "referring_options": options["referring"], "version": 1.0}
    if transform == "random":
        metadata.update(max_variants=options["max_variants"], seed=options["seed"])
    document = {"task": plan.wrapped, "class": "CLASS", "base_task": plan.base, "metadata": metadata}
    text = yaml.safe_dump(document, sort_keys=False)
    header = f"# written by logic-consistency wrap: lm-eval's {plan.base} under transform {transform}\n"
    return header + text.replace("class: CLASS", f"class: !function {TASK_CLASS}")


def _group_yaml(group: str, members: Sequence[str]) -> str:
    document = {
        "group": group,
        "task": list(members),
        "aggregate_metric_list": [{"metric": m, "aggregation": "mean", "weight_by_size": True} for m in GROUP_METRICS],
        "metadata": {"version": 1.0},
    }
    return "# written by logic-consistency wrap: one wrapped task per leaf and transform\n" + yaml.safe_dump(
        document, sort_keys=False
    )


def wrap_benchmark(
    benchmark: str,
    transforms: Sequence[str],
    out: Path,
    *,
    referring: str = "exclude",
    max_variants: int = 24,
    seed: int = 1234,
    report: Any = print,
) -> WrapResult:
    """Plan every leaf of ``benchmark`` under each transform (``report`` gets one line per leaf, before any
    file is written), then write the wrapped tasks and their group into ``out``.

    Raises:
        OptionError: A bad transform or option, an unknown benchmark, a group member with overrides, or a
            leaf that cannot be wrapped (a cloze task, no options field), each in one line.
    """
    from lm_eval.tasks import TaskManager

    options = {
        "referring": check_option("referring_options", referring, label="--referring-options"),
        "max_variants": check_option("max_variants", max_variants, label="--max-variants"),
        "seed": check_option("seed", seed, label="--seed"),
    }
    for transform in transforms:
        check_option("transform", transform, label="--transforms")
    manager = TaskManager()
    leaves = benchmark_leaves(manager.task_index, benchmark)
    result = WrapResult(group=f"{benchmark}_{'_'.join(transforms)}")
    if result.group in manager.task_index:
        raise OptionError(f"wrap: the group name {result.group!r} is already a task or group lm-eval knows")
    loaded = manager.load(leaves)["tasks"]
    for leaf in leaves:
        for transform in transforms:
            try:
                plan = _plan_leaf(loaded[leaf], transform, options)
            except (FieldsError, ValueError) as error:
                raise OptionError(f"wrap {benchmark}: {error}") from None
            report(plan.line())
            result.leaves.append(plan)
    out.mkdir(parents=True, exist_ok=True)
    texts = {out / f"{plan.wrapped}.yaml": _task_yaml(plan, plan.transform, options)
             for plan in result.leaves}  # fmt: skip
    texts[out / f"{result.group}.yaml"] = _group_yaml(result.group, [plan.wrapped for plan in result.leaves])
    for path in texts:
        check_writable(path)
    for path, text in texts.items():
        result.files.append(atomic_write(path, [text.encode("utf-8")]))
    return result
