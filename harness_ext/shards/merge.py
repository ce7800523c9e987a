"""Merge the shards of one ``lm_eval`` run (:mod:`.shard`) into the results one process writes.

The merged run is what a single ``lm_eval --log_samples`` process writes, in lm-eval's layout, so
``leaderboard ingest`` and ``logic-consistency correlate`` read it like any run. Every task's
per-document metric values are the union of the shards' metrics files (JSON, :mod:`.values`), in the order one process collects
them; every score, standard error, group score and count is then computed by lm-eval itself
(``lm_eval.evaluator_utils._process_results``, the tasks' own aggregations and the run's
``bootstrap_iters``): no shard score is ever averaged. The samples files are the shards' lines in
that order (``task_hashes`` recomputed); task configs are the shards', run-wide keys shard 0's (which
every shard must share: :func:`_check_cover`), and ``total_evaluation_time_seconds`` the shards' sum.

The tasks are rebuilt here (``TaskManager(metadata=model_args | metadata).load(tasks)``); no model is
loaded. Run it as ``python -m logic_consistency.harness_ext.shards.merge SPEC.json`` (:func:`main`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from logic_consistency.outputs import atomic_write

from .shard import METRICS_FORMAT, SHARD_KEY, Shard
from .values import loads

__all__ = ["MERGED_KEY", "ShardOutput", "merge_shards"]

#: Key of a merged results file: how many shards it was merged from.
MERGED_KEY = "logic_consistency_shards"
#: lm-eval's result sections rebuilt by the merge (everything else comes from shard 0).
CORE_KEYS = ("results", "groups", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better", "n-samples")
#: lm-eval's ``config`` keys that define a run (the rest, such as the cache path or batch sizes
#: found, may differ between the shards of one run).
RUN_CONFIG_KEYS = (
    "model",
    "model_args",
    "model_revision",
    "model_sha",
    "model_dtype",
    "limit",
    "bootstrap_iters",
    "gen_kwargs",
    "random_seed",
    "numpy_seed",
    "torch_seed",
    "fewshot_seed",
)
#: Top-level keys of lm-eval's results that define how the model was prompted (the evaluation tracker's)
#: and which code computed the numbers (``add_env_info``): every shard must record the same.
RECORDED_RUN_KEYS = (
    "system_instruction",
    "system_instruction_sha",
    "chat_template",
    "chat_template_sha",
    "fewshot_as_multiturn",
    "lm_eval_version",
    "transformers_version",
)
_RESULTS_FILE = re.compile(r"^results_(?P<stamp>.+)\.json$")


@dataclass(frozen=True)
class ShardOutput:
    """One shard's output: its ``results_<stamp>.json`` (samples files beside it) and metrics file (JSON)."""

    results: Path
    metrics: Path


@dataclass(frozen=True)
class _Shard:
    shard: Shard
    results: dict[str, Any]
    metrics: dict[str, list[tuple[str, int, dict[str, Any]]]]
    path: Path

    @property
    def index(self) -> int:
        return self.shard.index

    def samples_file(self, task: str) -> Path:
        match = _RESULTS_FILE.match(self.path.name)
        assert match is not None
        return self.path.with_name(f"samples_{task}_{match['stamp']}.jsonl")


def _load(output: ShardOutput) -> _Shard:
    try:
        results = json.loads(output.results.read_text(encoding="utf-8"))
        payload = loads(output.metrics.read_text(encoding="utf-8"), str(output.metrics))
    except (OSError, ValueError) as error:
        raise ValueError(f"shard output {output.results} / {output.metrics}: unreadable ({error})") from None
    mark = results.get(SHARD_KEY) if isinstance(results, dict) else None
    if not _RESULTS_FILE.match(output.results.name) or not isinstance(mark, dict):
        raise ValueError(f"{output.results}: not a shard's results file (no {SHARD_KEY!r})")
    shard = Shard.from_mark({k: mark.get(k) for k in ("index", "count")}, str(output.results))
    if not isinstance(mark.get("identity"), dict):
        raise ValueError(f"{output.results}: field {SHARD_KEY!r} records no identity (a shard of an older suite?)")
    if not isinstance(payload, dict) or payload.get("format") != METRICS_FORMAT:
        raise ValueError(f"{output.metrics}: not a shard metrics file of format {METRICS_FORMAT}")
    if list(payload["shard"]) != [shard.index, shard.count]:
        raise ValueError(f"{output.metrics}: shard {payload['shard']} but {output.results} is shard {shard}")
    return _Shard(shard, results, payload["tasks"], output.results)


def _identity(shard: _Shard) -> dict[str, Any]:
    """``{field: value}`` of everything that defines a shard's run (see :func:`.shard.run_identity`)."""
    config = shard.results.get("config") or {}
    mark = shard.results[SHARD_KEY]["identity"]
    fields: dict[str, Any] = {f"config.{key}": config.get(key) for key in RUN_CONFIG_KEYS}
    fields.update({key: shard.results.get(key) for key in RECORDED_RUN_KEYS})
    fields.update({key: mark.get(key) for key in ("build_id", "suite_version", "limit", "samples")})
    tasks = mark.get("tasks") or {}
    fields["tasks"] = sorted(tasks)
    for name, task in tasks.items():
        fields[f"task {name} version"] = task.get("version")
        for option, value in (task.get("options") or {}).items():
            fields[f"task {name} option {option}"] = value
    return fields


def _recorded(shard: _Shard) -> dict[str, Any]:
    """``{field: value}`` of what lm-eval itself recorded of each task this shard evaluated: its version
    (``versions``) and the SHA-256 of its config (``configs``: prompt, metrics, generation settings)."""
    fields: dict[str, Any] = {}
    for name, version in (shard.results.get("versions") or {}).items():
        fields[f"lm-eval versions.{name}"] = version
    for name, config in (shard.results.get("configs") or {}).items():
        text = json.dumps(config, sort_keys=True, ensure_ascii=False, default=repr)
        fields[f"lm-eval configs.{name} (SHA-256)"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return fields


def _check_recorded(first: _Shard, shard: _Shard) -> None:
    """The tasks both shards evaluated have the same version and config in lm-eval's own record."""
    reference, other = _recorded(first), _recorded(shard)
    for field in sorted(set(reference) & set(other)):
        if reference[field] != other[field]:
            raise ValueError(
                f"shards {first.shard} and {shard.shard} differ: {field} is {reference[field]!r} in {first.path} "
                f"but {other[field]!r} in {shard.path}; a merge takes the shards of one run only"
            )


def _check_cover(shards: Sequence[_Shard]) -> None:
    """One split, every index exactly once, and one run: the same identity in every shard.

    Shards that differ in what defines their run are refused, naming the field, both values and both
    files: the model and its arguments, the seeds, ``gen_kwargs``, ``--limit``/``--samples``, how the
    model was prompted (system instruction, chat template and its SHA, ``fewshot_as_multiturn``), the
    versions of lm-eval, transformers and the suite, and each task's version, options and config.
    """
    _check_split(shards)
    for shard in shards[1:]:
        _check_identity(shards[0], shard)
        _check_recorded(shards[0], shard)


def _check_split(shards: Sequence[_Shard]) -> None:
    """The shards are of one split, and hold each of its indices exactly once."""
    counts = {shard.shard.count for shard in shards}
    if len(counts) != 1:
        raise ValueError(f"shards of different splits: counts {sorted(counts)}")
    seen: dict[int, Path] = {}
    for shard in shards:
        if shard.index in seen:
            raise ValueError(f"shard {shard.shard} given twice: {seen[shard.index]} and {shard.path}")
        seen[shard.index] = shard.path
    count = shards[0].shard.count
    missing = [f"{index}/{count}" for index in range(count) if index not in seen]
    if missing:
        raise ValueError(f"shard(s) {', '.join(missing)} missing: a merge needs every shard of the split")


def _check_identity(first: _Shard, shard: _Shard) -> None:
    """Both shards have the same identity (:func:`_identity`); a different build is named first."""
    reference, other = _identity(first), _identity(shard)
    for field in sorted(set(reference) | set(other), key=lambda key: (key != "build_id", key)):
        if reference.get(field) != other.get(field):
            what = "come from different builds" if field == "build_id" else "differ"
            raise ValueError(
                f"shards {first.shard} and {shard.shard} {what}: field {field!r} is "
                f"{reference.get(field)!r:.100} in {first.path} but {other.get(field)!r:.100} in {shard.path}; "
                "a merge takes the shards of one run only"
            )


def _raw_metrics(shards: Sequence[_Shard], task: str) -> dict[tuple[str, str], list[Any]]:
    """``{(metric, filter): [value per document]}`` over every shard, in one process's order."""
    entries = [entry for shard in shards for entry in shard.metrics.get(task, [])]
    filters = list(dict.fromkeys(entry[0] for entry in entries))
    entries.sort(key=lambda entry: (filters.index(entry[0]), entry[1]))
    raw: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for filter_key, _doc_id, values in entries:
        for metric, value in values.items():
            raw[(metric, filter_key)].append(value)
    return raw


def _samples_lines(shards: Sequence[_Shard], task: str) -> list[tuple[str, dict[str, Any]]]:
    """Every shard's samples lines of ``task`` (raw text, parsed), in one process's order."""
    lines: list[tuple[str, dict[str, Any]]] = []
    for shard in shards:
        path = shard.samples_file(task)
        if shard.metrics.get(task) and not path.is_file():
            raise ValueError(f"{path}: missing (shard {shard.index} evaluated {task!r})")
        if path.is_file():
            for text in path.read_text(encoding="utf-8").splitlines():
                if text.strip():
                    lines.append((text, json.loads(text)))
    filters = list(dict.fromkeys(str(line.get("filter")) for _, line in lines))
    lines.sort(key=lambda item: (filters.index(str(item[1].get("filter"))), int(item[1]["doc_id"])))
    return lines


def _union(shards: Sequence[_Shard], key: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for shard in shards:
        merged.update(shard.results.get(key) or {})
    return merged


def _recompute(
    shards: Sequence[_Shard], *, tasks: str, model_args: str | Mapping[str, Any], metadata: Mapping[str, Any]
) -> dict[str, Any]:
    """lm-eval's own result sections, computed over the union of the shards' metric values."""
    from lm_eval.evaluator_utils import _process_results
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import simple_parse_args_string

    args = simple_parse_args_string(model_args) if isinstance(model_args, str) else dict(model_args)
    loaded = TaskManager(metadata={**args, **metadata}).load(tasks.split(","))
    n_shot = _union(shards, "n-shot")
    accumulators: dict[str, Any] = {}
    for name, task in loaded["tasks"].items():
        if name in n_shot:
            task.set_config(key="num_fewshot", value=n_shot[name])
        raw = _raw_metrics(shards, name)
        if not raw:
            raise ValueError(f"task {name!r}: no shard evaluated any document")
        accumulators[name] = {"task": task, "raw_metrics": raw, "logged_samples": []}
    bootstrap_iters = shards[0].results.get("config", {}).get("bootstrap_iters", 100000)
    merged: dict[str, Any] = _process_results(accumulators, loaded["groups"], bootstrap_iters)._to_eval_results()
    for key in ("configs", "versions", "n-shot", "higher_is_better"):
        merged[key] = dict(sorted({**merged.get(key, {}), **_union(shards, key)}.items()))
    return merged


def merge_shards(
    outputs: Sequence[ShardOutput],
    out_dir: str | os.PathLike[str],
    *,
    tasks: str,
    model_args: str | Mapping[str, Any] = "",
    metadata: Mapping[str, Any] | None = None,
) -> Path:
    """Merge the shards' outputs into one run under ``out_dir`` (see the module docstring).

    Args:
        outputs: Every shard's output, one per shard index.
        out_dir: Receives ``<model folder of shard 0>/results_<stamp>.json`` and the samples files.
        tasks: The run's ``--tasks``.
        model_args: The run's ``--model_args`` (lm-eval passes them to the tasks as metadata).
        metadata: The run's ``--metadata``.

    Returns:
        The merged results file.

    Raises:
        ValueError: A shard output is unreadable or not a shard's, or the shards do not cover the
            split exactly once (file or shard named).
    """
    from lm_eval.utils import handle_non_serializable

    shards = sorted((_load(output) for output in outputs), key=lambda shard: shard.index)
    if not shards:
        raise ValueError("no shard output to merge")
    _check_cover(shards)
    merged = _recompute(shards, tasks=tasks, model_args=model_args, metadata=metadata or {})
    stamp = datetime.now().isoformat().replace(":", "-")
    folder = Path(out_dir) / shards[0].path.parent.name
    hashes = {
        task: _write_samples(shards, task, folder / f"samples_{task}_{stamp}.jsonl") for task in merged["n-samples"]
    }
    text = json.dumps(
        _results_document(shards, merged, hashes), indent=2, default=handle_non_serializable, ensure_ascii=False
    )
    return atomic_write(folder / f"results_{stamp}.json", [text.encode("utf-8")])


def _write_samples(shards: Sequence[_Shard], task: str, path: Path) -> str:
    """Write the merged samples file of ``task`` at ``path``; returns its hash as lm-eval's ``task_hashes``."""
    from lm_eval.utils import hash_string

    lines = _samples_lines(shards, task)
    atomic_write(path, [(text + "\n").encode() for text, _ in lines])
    return str(hash_string("".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for _, s in lines)))


def _results_document(shards: Sequence[_Shard], merged: dict[str, Any], hashes: dict[str, str]) -> dict[str, Any]:
    """The merged results: lm-eval's sections recomputed, the rest of shard 0's, the summed evaluation time."""
    document = {key: merged[key] for key in CORE_KEYS if key in merged}
    document.update({key: value for key, value in shards[0].results.items() if key not in (*CORE_KEYS, SHARD_KEY)})
    document["task_hashes"] = hashes
    seconds = [float(shard.results.get("total_evaluation_time_seconds") or 0.0) for shard in shards]
    document["total_evaluation_time_seconds"] = str(sum(seconds))
    document[MERGED_KEY] = {"count": len(shards)}
    return document


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m logic_consistency.harness_ext.shards.merge SPEC.json``: merge as SPEC says.

    SPEC is a JSON object: ``shards`` (list of ``[results file, metrics file]``), ``out``,
    ``tasks``, ``model_args``, ``metadata``. Prints the merged results file.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m logic_consistency.harness_ext.shards.merge SPEC.json", file=sys.stderr)
        return 2
    spec = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    path = merge_shards(
        [ShardOutput(Path(results), Path(metrics)) for results, metrics in spec["shards"]],
        spec["out"],
        tasks=spec["tasks"],
        model_args=spec.get("model_args") or "",
        metadata=spec.get("metadata") or {},
    )
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
