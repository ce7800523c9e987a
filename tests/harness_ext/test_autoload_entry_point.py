"""The suite's ``lm_eval.tasks`` entry point and the ``.pth`` hook's include-path patch, on both paths.

* lm-eval 0.4.13 (installed) reads no task entry point: the hook adds the suite's folder.
* An lm-eval with task plug-ins by entry point (upstream PR #4015) is simulated by
  :func:`discovering_manager_module`: a ``TaskManager`` that indexes lm-eval's built-ins, then the
  folder of each package named under ``lm_eval.tasks``, then ``include_path`` (the PR's precedence),
  also under ``include_defaults=False``, with lm-eval's real ``TaskIndex``. The hook must notice the
  discovery, step aside, and leave the suite's folder indexed once.
"""

from __future__ import annotations

import configparser
import importlib.metadata as md
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest
from lm_eval.tasks._index import TaskIndex

from logic_consistency.harness_ext import autoload
from logic_consistency.harness_ext.autoload import TASK_ENTRY_POINT_GROUP, lm_eval_discovers_suite, tasks_dir

ROOT = Path(__file__).resolve().parents[2]
SUITE_TASK = "logic_consistency_summeval"


def declared_entry_points() -> list[md.EntryPoint]:
    """The ``lm_eval.tasks`` entry points setup.cfg declares."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    lines = config["options.entry_points"][TASK_ENTRY_POINT_GROUP].strip().splitlines()
    pairs = [line.split("=", 1) for line in lines if line.strip()]
    return [md.EntryPoint(name.strip(), value.strip(), TASK_ENTRY_POINT_GROUP) for name, value in pairs]


def plugin_folder(entry_point: md.EntryPoint) -> Path:
    """The folder of the package an ``lm_eval.tasks`` entry point names (its value is a package)."""
    package = entry_point.load()
    (folder,) = package.__path__
    return Path(folder)


def test_setup_cfg_declares_the_tasks_package_under_lm_eval_tasks() -> None:
    (entry_point,) = declared_entry_points()
    assert (entry_point.name, entry_point.value) == ("logic_consistency", "logic_consistency.tasks")
    assert plugin_folder(entry_point).resolve() == tasks_dir().resolve()


def test_the_installed_metadata_carries_the_entry_point() -> None:
    installed = {ep.name: ep.value for ep in md.entry_points(group=TASK_ENTRY_POINT_GROUP)}
    assert installed.get("logic_consistency") == "logic_consistency.tasks", (
        "the installed metadata lacks the entry point: re-run scripts/setup.sh"
    )


def test_lm_eval_0_4_13_gets_the_folder_from_the_hook() -> None:
    """The real path: the installed lm-eval discovers nothing, so the patch adds the folder."""
    import lm_eval.models  # noqa: F401  (the hook registers the suite's models when this is imported)
    from lm_eval.api.registry import model_registry
    from lm_eval.evaluator import evaluate
    from lm_eval.tasks import TaskManager

    original = TaskManager.__init__.__wrapped__  # type: ignore[attr-defined]
    assert getattr(TaskManager.__init__, "_logic_consistency", False), "the .pth hook is not installed"
    assert lm_eval_discovers_suite(TaskManager, original) is False
    manager = TaskManager(include_defaults=False)
    assert [Path(p) for p in manager.include_path] == [tasks_dir().resolve()]
    assert SUITE_TASK in manager.all_subtasks
    # The rest of the hook is unchanged: models registered, the model object published to multi-stage tasks.
    assert {"lc-hf", "lc-embedded", "lc-chat"} <= set(model_registry.keys())
    assert getattr(evaluate, "_logic_consistency", False)


def discovering_manager_module(entry_points: list[md.EntryPoint], built: list[list[Path]]) -> ModuleType:
    """A module whose ``TaskManager`` discovers ``lm_eval.tasks`` plug-ins as upstream PR #4015 does.

    Built-ins are left out (an empty list) to keep the test fast; ``built`` records the folders of
    every index build.
    """

    class TaskManager:
        def __init__(
            self,
            verbosity: str | None = None,
            include_path: Any = None,
            include_defaults: bool = True,
            metadata: dict[str, Any] | None = None,
        ) -> None:
            self.include_path = include_path
            paths: list[Path] = []  # built-ins would come first (include_defaults)
            paths += [plugin_folder(ep) for ep in entry_points]  # plug-ins even without defaults
            if include_path:
                paths += [
                    Path(p) for p in (include_path if isinstance(include_path, (list, tuple)) else [include_path])
                ]
            built.append([p.resolve() for p in paths])
            self._index = TaskIndex.build(paths)
            self.all_subtasks = sorted(self._index)

    module = ModuleType("fake_lm_eval_tasks_manager")
    module.TaskManager = TaskManager  # type: ignore[attr-defined]
    return module


def test_with_entry_point_discovery_the_patch_steps_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    built: list[list[Path]] = []
    module = discovering_manager_module(declared_entry_points(), built)
    autoload._patch_task_manager(module)
    ours = tasks_dir().resolve()
    with caplog.at_level(logging.WARNING):
        bare = module.TaskManager(include_defaults=False)
        user = module.TaskManager(include_path=[str(tmp_path)])
    assert lm_eval_discovers_suite(module.TaskManager, module.TaskManager.__init__.__wrapped__)
    # built[0] is the hook's one probe; then one build per TaskManager, each with our folder once
    assert built[1:] == [[ours], [ours, tmp_path.resolve()]]
    assert bare.include_path is None and user.include_path == [str(tmp_path)]
    assert SUITE_TASK in bare.all_subtasks and SUITE_TASK in user.all_subtasks
    assert not [r for r in caplog.records if "overrides existing task" in r.getMessage()]


def test_without_the_step_aside_the_folder_would_be_indexed_twice(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """What the step-aside prevents: the hook's include path on top of the plug-in discovery."""
    built: list[list[Path]] = []
    module = discovering_manager_module(declared_entry_points(), built)
    monkeypatch.setattr(autoload, "lm_eval_discovers_suite", lambda *args: False)
    autoload._patch_task_manager(module)
    with caplog.at_level(logging.WARNING):
        module.TaskManager(include_defaults=False)
    ours = tasks_dir().resolve()
    assert built == [[ours, ours]]
    assert [r for r in caplog.records if "overrides existing task" in r.getMessage()]


def test_discovery_without_our_entry_point_keeps_the_patch() -> None:
    """An lm-eval with the feature but an install whose metadata lacks the entry point: still found."""
    built: list[list[Path]] = []
    module = discovering_manager_module([], built)
    autoload._patch_task_manager(module)
    manager = module.TaskManager(include_defaults=False)
    assert built[1:] == [[tasks_dir().resolve()]]
    assert SUITE_TASK in manager.all_subtasks


def recording_manager_module(built: list[bool]) -> ModuleType:
    """A module whose ``TaskManager`` records the ``include_defaults`` it is built with."""

    class TaskManager:
        def __init__(self, include_path: Any = None, include_defaults: bool = True) -> None:
            built.append(include_defaults)

    module = ModuleType("recording_lm_eval_tasks_manager")
    module.TaskManager = TaskManager  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize(("value", "caller", "indexed"), [(None, {}, True), ("0", {}, True), ("1", {}, False),
                                                          ("1", {"include_defaults": True}, True)])  # fmt: skip
def test_suite_tasks_only_leaves_lm_evals_tasks_out_where_the_caller_does_not_choose(
    monkeypatch: pytest.MonkeyPatch, value: str | None, caller: dict[str, bool], indexed: bool
) -> None:
    built: list[bool] = []
    module = recording_manager_module(built)
    autoload._patch_task_manager(module)
    if value is None:
        monkeypatch.delenv(autoload.ENV_SUITE_TASKS_ONLY, raising=False)
    else:
        monkeypatch.setenv(autoload.ENV_SUITE_TASKS_ONLY, value)
    module.TaskManager(**caller)
    assert built[-1] is indexed  # built[0] may be the hook's one probe of the class


def test_suite_tasks_only_indexes_the_suites_folder_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real ``TaskManager`` as ``lm_eval`` builds it (no ``include_defaults``): the suite's tasks, none of lm-eval's."""
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv(autoload.ENV_SUITE_TASKS_ONLY, "1")
    manager = TaskManager(metadata={})
    ours = tasks_dir().resolve()
    assert SUITE_TASK in manager.all_subtasks and "logic_consistency" in manager.all_groups
    files = [Path(entry.yaml_path).resolve() for entry in manager._index.values() if entry.yaml_path is not None]
    assert files and all(path.is_relative_to(ours) for path in files)


def test_a_mistyped_suite_tasks_only_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_consistency.options import OptionError

    monkeypatch.setenv(autoload.ENV_SUITE_TASKS_ONLY, "yes")
    with pytest.raises(OptionError, match=f"{autoload.ENV_SUITE_TASKS_ONLY}='yes': must be 1"):
        autoload.suite_tasks_only()


def test_a_task_not_found_under_suite_tasks_only_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    error = ValueError("Tasks not found: ['hellaswag']")
    monkeypatch.delenv(autoload.ENV_SUITE_TASKS_ONLY, raising=False)
    assert autoload._suite_tasks_only_not_found(error) is None
    monkeypatch.setenv(autoload.ENV_SUITE_TASKS_ONLY, "1")
    explained = autoload._suite_tasks_only_not_found(error)
    assert explained is not None and explained.startswith(str(error)) and autoload.ENV_SUITE_TASKS_ONLY in explained


@pytest.mark.slow
def test_python_dash_m_lm_eval_runs_with_the_hook_on() -> None:
    """``python -m lm_eval`` asks the wrapped loader of ``lm_eval.__main__`` for ``get_code``: the hook's
    loader hands the rest of the loader protocol to the real one (it used to raise AttributeError)."""
    import os
    import sys

    env = {**os.environ, autoload.ENV_SWITCH: "1"}
    result = children.run(
        [sys.executable, "-m", "lm_eval", "run", "--help"], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--tasks" in result.stdout and "get_code" not in result.stderr
