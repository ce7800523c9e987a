"""``logic-consistency check-task FILE.yaml``: load a task YAML as lm-eval does and name what is wrong.

``lm_eval --tasks NAME --include_path DIR`` silently skips any YAML file it cannot read, so a
malformed file, a missing ``task:`` key or a missing ``include:`` all end in "Tasks not found", and
an unknown metric in ``KeyError: None``. This command reads one file the way lm-eval 0.4.13 does
(its ``load_yaml`` and ``TaskManager``, ``include_defaults=False``) and stops at the first problem
with one line naming the file, the key and the line: malformed YAML, an ``include:`` that names no
file or a cycle, no ``task:`` key, a ``!function`` that cannot be imported, an unregistered metric or
aggregation (with the closest name), or any error lm-eval raises while building the task.

On success it prints the task name, its output type and, unless ``--no-data``, the number of
documents lm-eval would evaluate (``--no-data`` checks everything before the data).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from logic_consistency.common import check_link_loop
from logic_consistency.harness_ext.task.loading import TASKS_DIR

__all__ = [
    "TaskCheck",
    "TaskFileError",
    "check_task",
    "explain_unknown_metric",
    "explain_unreadable_task_files",
    "unreadable_task_files",
]


#: The suite's task folder (:data:`~logic_consistency.harness_ext.task.loading.TASKS_DIR`).
SUITE_TASKS = TASKS_DIR


class TaskFileError(ValueError):
    """A task YAML cannot be loaded; the message names the file, the key and the line."""


class TaskCheck(dict[str, Any]):
    """What a valid task file defines: ``task``, ``output_type``, ``yaml_path`` and, if loaded, ``docs``."""


def _where(path: Path, line: int | None, key: str | None) -> str:
    return f"{path}" + (f" line {line}" if line else "") + (f": key {key!r}" if key else "")


def _nodes(path: Path) -> yaml.Node | None:
    """The YAML node tree of ``path`` (tags kept as written; nothing is constructed or imported)."""
    with path.open("rb") as handle:
        return yaml.compose(handle, Loader=yaml.SafeLoader)


def _key_line(path: Path, key: str, index: int | None = None) -> int | None:
    """The 1-based line of top-level ``key`` in ``path`` (of its entry ``index`` if given), or ``None``."""
    root = _nodes(path)
    if isinstance(root, yaml.MappingNode):
        for key_node, value in root.value:
            if key_node.value == key:
                if index is not None and isinstance(value, yaml.SequenceNode) and index < len(value.value):
                    return int(value.value[index].start_mark.line) + 1
                return int(key_node.start_mark.line) + 1
    return None


def _function_tags(node: Any, key: str = "") -> Iterator[tuple[str, str, int]]:
    """Every ``!function`` value under ``node``: (key path, target, 1-based line)."""
    if isinstance(node, yaml.ScalarNode) and node.tag == "!function":
        yield key, str(node.value), int(node.start_mark.line) + 1
    elif isinstance(node, yaml.MappingNode):
        for key_node, value in node.value:
            yield from _function_tags(value, f"{key}.{key_node.value}" if key else str(key_node.value))
    elif isinstance(node, yaml.SequenceNode):
        for index, value in enumerate(node.value):
            yield from _function_tags(value, f"{key}[{index}]")


def _read_one(path: Path, *, resolve: bool = False) -> dict[str, Any]:
    """lm-eval's ``load_yaml`` of ``path`` alone (no includes), its errors as :class:`TaskFileError`."""
    from lm_eval.tasks._yaml_loader import load_yaml

    try:
        return dict(load_yaml(path, resolve_func=resolve, recursive=False))
    except (yaml.YAMLError, UnicodeDecodeError, OSError) as error:  # UnicodeDecodeError before ValueError
        raise _unreadable(path, error) from None
    except ValueError as error:  # lm-eval: "Expected YAML dict from ..., got list"
        if "Expected YAML dict" not in str(error):
            raise
        got = str(error).rpartition(", got ")[2] or str(error)
        raise TaskFileError(f"{path}: a task file is a mapping of keys (task: ...), this one holds a {got}") from None


def _unreadable(path: Path, error: yaml.YAMLError | UnicodeDecodeError | OSError) -> TaskFileError:
    """Why ``path`` cannot be read as YAML: malformed (at its line and column), not UTF-8, or unreadable."""
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        line = f" line {mark.line + 1} column {mark.column + 1}" if mark else ""
        what = " ".join(part for part in (error.context, error.problem) if part)
        return TaskFileError(f"{path}{line}: malformed YAML: {what}")
    if isinstance(error, yaml.YAMLError):
        return TaskFileError(f"{path}: malformed YAML: {error}")
    if isinstance(error, UnicodeDecodeError):
        return TaskFileError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})")
    return TaskFileError(f"{path}: cannot be read ({error.strerror or error})")


def _chain(path: Path, seen: tuple[Path, ...] = ()) -> list[Path]:
    """``path`` and every file it includes (depth first), each checked as lm-eval would read it."""
    if path in seen:
        raise TaskFileError(f"{seen[-1]}: key 'include': include cycle back to {path}")
    config = _read_one(path)
    files = [path]
    includes = config.get("include")
    for include in includes if isinstance(includes, list) else [] if includes is None else [includes]:
        if not isinstance(include, str):
            where = _where(path, _key_line(path, "include"), "include")
            raise TaskFileError(f"{where}: {include!r} is not a file name")
        target = Path(include) if Path(include).is_absolute() else path.parent / include
        if not target.is_file():
            where = _where(path, _key_line(path, "include"), "include")
            raise TaskFileError(f"{where}: {include!r} names no file (looked for {target.resolve()})")
        files += _chain(target.resolve(), (*seen, path))
    return files


def _check_functions(files: list[Path]) -> None:
    """Import every ``!function`` target of ``files`` as lm-eval does; name the first that fails."""
    for path in files:
        try:
            _read_one(path, resolve=True)
        except TaskFileError:
            raise
        except (ImportError, AttributeError, ValueError, SyntaxError) as error:
            message = f"{type(error).__name__}: {error}"
            tags = list(_function_tags(_nodes(path)))
            key, target, line = next(
                ((k, t, n) for k, t, n in tags if t in message or t.rpartition(".")[0] in message),
                tags[0] if tags else ("", "?", 0),
            )
            raise TaskFileError(f"{_where(path, line, key or None)}: !function {target}: {message}") from None


def _defining_file(files: list[Path], key: str) -> Path:
    """The file whose ``key`` lm-eval uses: the including file wins over its includes."""
    return next((path for path in files if key in _read_one(path)), files[0])


def _check_metrics(config: dict[str, Any], files: list[Path]) -> None:
    """Every ``metric_list`` metric and aggregation must be registered in lm-eval (else ``KeyError: None``)."""
    metric_list = config.get("metric_list")
    if not metric_list or config.get("process_results") is not None:
        return
    path = _defining_file(files, "metric_list")
    if not isinstance(metric_list, list):
        where = _where(path, _key_line(path, "metric_list"), "metric_list")
        raise TaskFileError(f"{where}: must be a list of {{metric: NAME}} entries")
    for index, entry in enumerate(metric_list):
        where = _where(path, _key_line(path, "metric_list", index), None)
        if not isinstance(entry, dict) or "metric" not in entry:
            raise TaskFileError(f"{where}: key 'metric_list[{index}]' has no 'metric:' name")
        problem = _metric_problem(entry)
        if problem:
            raise TaskFileError(f"{where}: key 'metric_list[{index}].{problem}")


def _metric_problem(entry: dict[str, Any]) -> str | None:
    """What lm-eval would fail on in one ``metric_list`` entry (``"metric': ..."``), or ``None``."""
    from lm_eval.api import metrics as _registered  # noqa: F401 - fills the registries
    from lm_eval.api.registry import aggregation_registry, metric_agg_registry, metric_registry

    def near(name: str, known: Any) -> str:
        match = difflib.get_close_matches(name, list(known.keys()), n=1)
        return f"; did you mean {match[0]!r}?" if match else ""

    metric, aggregation = entry["metric"], entry.get("aggregation")
    if isinstance(aggregation, str) and aggregation not in aggregation_registry:
        return f"aggregation': {aggregation!r} is not an aggregation lm-eval registers{near(aggregation, aggregation_registry)}"
    if not isinstance(metric, str) or entry.get("hf_evaluate"):
        return None
    if metric not in metric_registry:
        return (
            f"metric': {metric!r} is not a metric lm-eval registers{near(metric, metric_registry)} (a metric the "
            "task computes itself needs process_results: in the YAML; an HF evaluate metric needs hf_evaluate: true)"
        )
    if aggregation is None and metric not in metric_agg_registry:
        return f"metric': {metric!r} has no default aggregation in lm-eval; add 'aggregation:' (e.g. mean)"
    return None


def _task_name(config: dict[str, Any], path: Path) -> str:
    name = config.get("task")
    if "group" in config:
        where = _where(path, _key_line(path, "group"), "group")
        raise TaskFileError(
            f"{where}: this is a group file, not a task file (lm-eval reads its task: as the member list)"
        )
    if name is None:
        raise TaskFileError(
            f"{path}: no 'task:' key in the file or its includes; lm-eval indexes a task file by its "
            "task: name and skips it without one ('Tasks not found'): add 'task: <name>'"
        )
    if not isinstance(name, str) or not name.strip():
        raise TaskFileError(f"{_where(path, _key_line(path, 'task'), 'task')}: must be a task name, got {name!r}")
    return name


def _task_manager(path: Path) -> Any:
    """lm-eval's ``TaskManager`` over the file's folder and the suite's tasks (the suite's alone if they hold
    the file)."""
    from lm_eval.tasks import TaskManager

    suite = SUITE_TASKS
    folder = path.parent
    paths = [str(suite)] if folder.is_relative_to(suite) else [str(suite), str(folder)]
    index_log = logging.getLogger("lm_eval.tasks._index")
    level = index_log.level
    index_log.setLevel(logging.ERROR)  # the user's folder re-registers the suite's tags: not the user's problem
    try:
        return TaskManager(include_path=paths, include_defaults=False)
    finally:
        index_log.setLevel(level)


def _check_indexed(manager: Any, name: str, path: Path) -> None:
    """Task ``name`` must be indexed from ``path``, not from another file defining the same name."""
    entry = manager.task_index.get(name)
    if entry is None or entry.yaml_path is None or Path(entry.yaml_path).resolve() != path:
        other = (
            "" if entry is None else f": lm-eval takes it from {entry.yaml_path}, a file defining the same task name"
        )
        raise TaskFileError(
            f"{_where(path, _key_line(path, 'task'), 'task')}: task {name!r} is not indexed from this file{other}"
        )


def _build_error(error: Exception, path: Path, name: str, files: list[Path]) -> TaskFileError:
    """lm-eval's own error while building the task, whatever its type, in one line; an unknown task key
    (``TypeError: ... unexpected keyword argument``) named at its file and line, with the closest key."""
    message = " ".join(str(error).split()) or repr(error)
    if not (isinstance(error, TypeError) and "unexpected keyword argument" in message):
        return TaskFileError(f"{path}: task {name!r} cannot be built: {type(error).__name__}: {message}")
    from lm_eval.config.task import TaskConfig

    unknown = message.rsplit("'", 2)[-2] if message.count("'") >= 2 else ""
    near = difflib.get_close_matches(unknown, list(TaskConfig.__dataclass_fields__), n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    where = _defining_file(files, unknown)
    path_line = _where(where, _key_line(where, unknown), unknown)
    return TaskFileError(f"{path_line}: task {name!r} cannot be built: TypeError: {message}{hint}")


def _build(path: Path, name: str, files: list[Path]) -> Any:
    """Build task ``name`` with lm-eval's ``TaskManager`` (the file's folder and the suite's tasks)."""
    manager = _task_manager(path)
    _check_indexed(manager, name, path)
    try:
        return manager.load([name])["tasks"][name]
    except TaskFileError:
        raise
    except Exception as error:  # lm-eval's own error, whatever its type, in one line
        raise _build_error(error, path, name, files) from None


def check_task(path: str | Path, *, load_data: bool = True) -> TaskCheck:
    """Check one task YAML the way lm-eval loads it; raise :class:`TaskFileError` at the first problem.

    Args:
        path: The task's YAML file.
        load_data: Build the task (which loads its data) and count its documents.

    Returns:
        The task's name, output type, file and (with ``load_data``) number of documents.
    """
    check_link_loop(Path(path).expanduser())
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise TaskFileError(f"{path}: no such file")
    files = _chain(path)
    from lm_eval.tasks._yaml_loader import load_yaml

    name = _task_name(load_yaml(path, resolve_func=False), path)
    _check_functions(files)
    config = load_yaml(path, resolve_func=True)
    _check_metrics(config, files)
    result = TaskCheck(task=name, output_type=config.get("output_type", "generate_until"), yaml_path=str(path))
    if load_data:
        task = _build(path, name, files)
        result["output_type"] = task.OUTPUT_TYPE
        result["docs"] = len(task.eval_docs)
    return result


def unreadable_task_files(folders: list[str]) -> list[str]:
    """What lm-eval skips without a word in the ``--include_path`` folders: each ``*.yaml`` file that does not
    parse, or whose ``include:`` names no file (one message per file, naming it and the line)."""
    problems = []
    for folder in folders:
        for path in sorted(Path(folder).expanduser().rglob("*.yaml")):
            try:
                _chain(path.resolve())
            except TaskFileError as error:
                problems.append(str(error))
    return problems


def _leaf_files(manager: Any, names: list[str], seen: set[str]) -> Iterator[Path]:
    """The YAML files of the tasks ``names`` name, groups expanded to their members (as indexed by lm-eval)."""
    from lm_eval.tasks._yaml_loader import load_yaml

    for name in names:
        entry = manager.task_index.get(name)
        if name in seen or entry is None or getattr(entry, "yaml_path", None) is None:
            continue
        seen.add(name)
        path = Path(entry.yaml_path)
        config = load_yaml(path, resolve_func=False)
        if "group" not in config:
            yield path
            continue
        members = config.get("task") or []
        yield from _leaf_files(manager, [m for m in members if isinstance(m, str)], seen)


def explain_unknown_metric(manager: Any, tasks: Any) -> TaskFileError | None:
    """lm-eval's ``KeyError: None`` while building a task: the task file and ``metric_list`` entry behind it."""
    from lm_eval.tasks._yaml_loader import load_yaml

    if manager is None:
        from lm_eval.tasks import TaskManager

        manager = TaskManager()
    names = [name for name in (tasks if isinstance(tasks, (list, tuple)) else [tasks]) if isinstance(name, str)]
    for path in _leaf_files(manager, names, set()):
        try:
            _check_metrics(load_yaml(path, resolve_func=True), _chain(path.resolve()))
        except TaskFileError as error:
            return error
    return None


def explain_unreadable_task_files(error: ValueError, argv: list[str]) -> str | None:
    """lm-eval's "Tasks not found: NAME" when an ``--include_path`` file of ``lm_eval``'s ``argv`` could not
    be read: the message naming the file (:func:`unreadable_task_files`); None for any other error."""
    if not str(error).startswith("Tasks not found"):
        return None
    folders = [arg.split("=", 1)[1] for arg in argv if arg.startswith("--include_path=")]
    folders += [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--include_path"]
    problems = unreadable_task_files(folders)
    if not problems:
        return None
    more = (
        f" (and {len(problems) - 1} more file(s): logic-consistency check-task FILE names each)" if problems[1:] else ""
    )
    return f"{error}; --include_path holds a task file lm-eval skipped: {problems[0]}{more}"
