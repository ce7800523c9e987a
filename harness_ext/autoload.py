"""Make plain ``lm_eval --tasks logic_consistency`` find this suite, with no ``--include_path``.

lm-eval 0.4.13 has no task plug-in hook, so the distribution ships ``logic_consistency_autoload.pth``,
whose one line calls :func:`install`: it only registers an import hook. When, and only when, a
program imports lm-eval, the hook adds this suite's ``tasks/`` folder to every ``TaskManager``'s
include path (unless lm-eval already finds it through the ``lm_eval.tasks`` entry point:
:func:`lm_eval_discovers_suite`), registers the declared backends (``backends/registry.py``), and applies the other
patches listed in ``lm_eval_hooks.LM_EVAL_HOOKS`` (the running model for multi-stage tasks, placeholders,
shards, request-cache checks, credential refusal, one-line errors, metrics undefined on some documents).

Turn it off with ``LOGIC_CONSISTENCY_AUTOLOAD=0`` (``--include_path "$(logic-consistency tasks-dir)"`` still
works). Pinned to the lm-eval release it was written against: on another it warns once and applies while
``TaskManager.__init__`` keeps ``include_path``. ``LOGIC_CONSISTENCY_SUITE_TASKS_ONLY=1``, set by the suite's
launchers for runs of its own tasks, leaves lm-eval's built-in tasks out of the index. See docs/backends.md.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logic_consistency.harness_ext.task.loading import ENV_SUITE_TASKS_ONLY as ENV_SUITE_TASKS_ONLY  # public name
from logic_consistency.harness_ext.task.loading import TASKS_DIR, remember_task_manager
from logic_consistency.harness_ext.task.loading import tasks_dir as tasks_dir  # the public name (cli, preflight)

if TYPE_CHECKING:
    import importlib.machinery
    from collections.abc import Callable, Sequence
    from types import ModuleType

# Heavier modules (inspect, functools, warnings) and the suite's own patch code are imported only when
# lm-eval is, inside each patch function: this file runs at every Python start-up through the .pth line.

#: The lm-eval release whose ``TaskManager`` and model registry this hook was written against.
PINNED_LM_EVAL_VERSION = "0.4.13"
#: Environment variable that disables the hook when set to ``0``.
ENV_SWITCH = "LOGIC_CONSISTENCY_AUTOLOAD"

#: The entry-point group of lm-eval task plug-ins (upstream PR #4015); its value names the package
#: that holds the YAML, here ``logic_consistency.tasks`` (setup.cfg ``[options.entry_points]``).
TASK_ENTRY_POINT_GROUP = "lm_eval.tasks"


def enabled() -> bool:
    """Whether the autoload hook is switched on (``LOGIC_CONSISTENCY_AUTOLOAD`` is not ``0``)."""
    return os.environ.get(ENV_SWITCH, "1").strip() != "0"


def suite_tasks_only() -> bool:
    """Whether :data:`ENV_SUITE_TASKS_ONLY` is ``1`` (a launcher's declaration, never inferred from task names).

    Raises:
        OptionError: Its value is neither ``0`` nor ``1`` (a mistyped switch is an error, not ignored).
    """
    value = os.environ.get(ENV_SUITE_TASKS_ONLY, "0").strip()
    if value not in ("0", "1"):
        from logic_consistency.options import OptionError

        raise OptionError(f"{ENV_SUITE_TASKS_ONLY}={value!r}: must be 1 (index only the suite's tasks) or 0")
    return value == "1"


class _LoaderWithCallback(importlib.abc.Loader):
    """Delegates to the real loader, then runs a callback on the freshly executed module."""

    def __init__(self, loader: importlib.abc.Loader, callback: Callable[[ModuleType], None]):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._callback(module)

    def __getattr__(self, name: str) -> Any:
        # The rest of the loader protocol (get_code, get_source, is_package, ...) is the real loader's:
        # ``python -m lm_eval`` asks for ``get_code`` and runs the code as ``__main__`` itself, so there
        # the callback of ``lm_eval.__main__`` (one-line option errors) does not run; the others do.
        return getattr(self._loader, name)


class _PostImportHook(importlib.abc.MetaPathFinder):
    """Runs callbacks right after named modules are imported (without importing them itself)."""

    def __init__(self, callbacks: dict[str, Callable[[ModuleType], None]]):
        self.callbacks = callbacks

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        callback = self.callbacks.get(fullname)
        if callback is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _LoaderWithCallback(spec.loader, callback)
                return spec
        return None


def _suite_include_path(include_path: Any) -> Any:
    """Return ``include_path`` with this suite's tasks folder first (no duplicates)."""
    if include_path is None:
        paths: list[Any] = []
    elif isinstance(include_path, (list, tuple)):
        paths = list(include_path)
    else:
        paths = [include_path]
    ours = TASKS_DIR.resolve()
    if any(Path(p).resolve() == ours for p in paths):
        return include_path
    return [str(ours), *paths]


def _patch_task_manager(module: ModuleType) -> None:
    import functools
    import inspect
    import warnings

    task_manager = getattr(module, "TaskManager", None)
    if task_manager is None or getattr(task_manager.__init__, "_logic_consistency", False):
        return
    original = task_manager.__init__
    signature = inspect.signature(original)
    if "include_path" not in signature.parameters:
        warnings.warn(
            "logic-consistency: lm_eval's TaskManager has no include_path parameter; tasks not "
            "auto-registered (use --include_path with `logic-consistency tasks-dir`).",
            stacklevel=2,
        )
        return

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        if not lm_eval_discovers_suite(task_manager, original):  # else lm-eval's discovery adds the folder itself
            bound.arguments["include_path"] = _suite_include_path(bound.arguments.get("include_path"))
        if suite_tasks_only() and "include_defaults" in signature.parameters:
            bound.arguments.setdefault("include_defaults", False)  # a caller's explicit choice stands
        original(*bound.args, **bound.kwargs)
        remember_task_manager(self)  # a wrapped task finds its base in the run's index (task/loading.py)

    __init__._logic_consistency = True  # type: ignore[attr-defined]
    task_manager.__init__ = __init__


#: Per ``TaskManager`` class: whether lm-eval indexes this suite's folder without the hook's help.
_DISCOVERY: dict[type, bool] = {}


def lm_eval_discovers_suite(task_manager: type, init: Callable[..., None]) -> bool:
    """Whether lm-eval's own ``TaskManager`` indexes this suite's tasks folder without being told.

    Asks ``init`` (lm-eval's unpatched ``TaskManager.__init__``) to build a bare
    ``TaskManager(include_defaults=False)`` and looks for an index entry read from :data:`TASKS_DIR`.
    Only task plug-in discovery (``lm_eval.tasks`` entry points, upstream PR #4015) puts one there.
    The answer is kept per class, so the check runs once per process.
    """
    if task_manager not in _DISCOVERY:
        _DISCOVERY[task_manager] = _indexes_suite_folder(task_manager, init)
    return _DISCOVERY[task_manager]


def _indexes_suite_folder(task_manager: type, init: Callable[..., None]) -> bool:
    probe: Any = object.__new__(task_manager)
    try:
        init(probe, include_defaults=False)
    except Exception:  # an lm-eval whose bare TaskManager cannot be built: keep adding the folder
        return False
    index = getattr(probe, "_index", None)  # lm-eval hook: a private attribute (lm_eval_hooks.LM_EVAL_HOOKS)
    if not isinstance(index, dict):
        return False
    ours = TASKS_DIR.resolve()
    for entry in index.values():
        yaml_path = getattr(entry, "yaml_path", None)
        if yaml_path is not None and Path(yaml_path).resolve().is_relative_to(ours):
            return True
    return False


def _register_models(module: ModuleType) -> None:
    """Register every declared backend with lm-eval by its ``module:Class`` (imported on first use):
    the suite's own and those plugged in by entry point (``backends/registry.py``)."""
    from lm_eval.api.registry import model_registry

    from logic_consistency.harness_ext.backends.registry import backends

    for backend in backends().values():
        if backend.name not in model_registry:
            model_registry.register(backend.name, target=backend.target)


_VERSION_CHECKED: list[bool] = []


def _warn_if_unpinned() -> None:
    """Warn once per process when the installed lm-eval is not the release the hooks were written for."""
    if _VERSION_CHECKED:
        return
    _VERSION_CHECKED.append(True)
    import warnings

    try:
        from importlib.metadata import version

        installed = version("lm_eval")
    except Exception:  # pragma: no cover - metadata missing only in broken installs
        return
    if installed != PINNED_LM_EVAL_VERSION:
        warnings.warn(
            f"logic-consistency's lm-eval hooks (harness_ext/lm_eval_hooks.py) were written and tested for lm-eval "
            f"{PINNED_LM_EVAL_VERSION}; found {installed}. They are applied anyway; if a run fails inside lm-eval, "
            f"set {ENV_SWITCH}=0 and use --include_path.",
            stacklevel=2,
        )


def _patch_evaluator(module: ModuleType) -> None:
    from logic_consistency.harness_ext.task.current_run import publish_lm

    original = getattr(module, "evaluate", None)
    if original is not None and not getattr(original, "_logic_consistency", False):
        from logic_consistency.harness_ext.shards.shard import shard_evaluate

        module.evaluate = shard_evaluate(publish_lm(original))  # type: ignore[attr-defined]  # lm_eval.evaluator.evaluate
    simple = getattr(module, "simple_evaluate", None)
    if simple is not None and not getattr(simple, "_logic_consistency", False):
        module.simple_evaluate = refuse_credentials_first(simple)  # type: ignore[attr-defined]


def refuse_credentials_first(simple_evaluate: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``lm_eval.evaluator.simple_evaluate``: a credential in ``model_args`` or ``metadata`` is refused
    before the model is built, logs are redacted, and the results record only what is declared public
    (:func:`logic_consistency.harness_ext.publish.run.publishing`)."""
    import functools
    import inspect

    from logic_consistency.harness_ext.publish.command_line import refuse_request_pickles
    from logic_consistency.harness_ext.publish.run import publishing

    published = publishing(simple_evaluate)
    signature = inspect.signature(simple_evaluate)

    @functools.wraps(published)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind_partial(*args, **kwargs)
        refuse_request_pickles(bound.arguments.get("cache_requests"), "simple_evaluate")
        return published(*args, **kwargs)

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper


def _shard_documents(module: ModuleType) -> None:
    """Under ``LOGIC_CONSISTENCY_SHARD=i/N`` a task lists only its shard's documents (``shards/shard.py``)."""
    from logic_consistency.harness_ext.shards.shard import shard_doc_iterator

    _never_read_request_pickles(module)
    _local_hub_copies(module)
    task = getattr(module, "Task", None)
    if task is None or getattr(task.doc_iterator, "_logic_consistency", False):
        return
    task.doc_iterator = shard_doc_iterator(task.doc_iterator)


def _aggregate_over_defined(module: ModuleType) -> None:
    """A metric undefined (``None``) on some documents is aggregated over the others (``task/undefined.py``);
    a corpus statistic's declared bootstrap standard error is lm-eval's ``_stderr`` (``task/corpus_stderr.py``)."""
    from logic_consistency.harness_ext.task.corpus_stderr import install_declared_stderrs
    from logic_consistency.harness_ext.task.undefined import install_task_aggregation

    install_task_aggregation(module)
    install_declared_stderrs(module)


def _groups_over_every_member(module: ModuleType) -> None:
    """A group of the suite's tasks aggregates only the metrics all of them report (``task/undefined.py``)."""
    from logic_consistency.harness_ext.task.undefined import install_group_aggregation

    install_group_aggregation(module)


def _local_hub_copies(module: ModuleType) -> None:
    """With ``LOGIC_CONSISTENCY_DATA`` set, lm-eval's tasks read the suite's local copies of declared hub
    datasets (``task/hub_copies.py``); a few-shot run that would need a split the copy lacks is refused."""
    from logic_consistency.harness_ext.task.hub_copies import checked_build, redirected_download

    configurable, task = getattr(module, "ConfigurableTask", None), getattr(module, "Task", None)
    if configurable is not None:
        configurable.download = redirected_download(configurable.download)
    if task is not None:
        task.build_all_requests = checked_build(task.build_all_requests)


def _never_read_request_pickles(module: ModuleType) -> None:
    """``lm_eval.api.task.load_from_cache`` (``--cache_requests``, dill pickles) refuses instead of reading."""
    from lm_eval.caching.cache import _cache_file_path

    from logic_consistency.harness_ext.publish.command_line import guard_load_from_cache

    load = getattr(module, "load_from_cache", None)
    if load is not None and not getattr(load, "_logic_consistency", False):
        module.load_from_cache = guard_load_from_cache(load, _cache_file_path)  # type: ignore[attr-defined]


def _guard_request_cache(module: ModuleType) -> None:
    """A corrupt ``--use_cache`` file is named in one line (``publish/request_cache.py``)."""
    from logic_consistency.harness_ext.publish.request_cache import guard_caching_lm

    caching_lm = getattr(module, "CachingLM", None)
    if caching_lm is None or getattr(caching_lm.__init__, "_logic_consistency", False):
        return
    caching_lm.__init__ = guard_caching_lm(caching_lm.__init__)


def _one_line_option_errors(module: ModuleType) -> None:
    """``lm_eval``'s console entry point reports a bad option or a refused credential in one line, exit status 2; and
    the facts of any failure go to the launcher's record (``publish/failure_facts.py``)."""
    import functools

    from logic_consistency.credentials import CredentialError
    from logic_consistency.harness_ext.publish.command_line import check_lm_eval_argv
    from logic_consistency.harness_ext.publish.failure_facts import record_failure
    from logic_consistency.harness_ext.shards.shard import check_shard_argv
    from logic_consistency.harness_ext.task.check_task import TaskFileError, explain_unreadable_task_files
    from logic_consistency.options import OptionError

    original = getattr(module, "cli_evaluate", None)
    if original is None or getattr(original, "_logic_consistency", False):
        return

    @functools.wraps(original)
    def cli_evaluate(*args: Any, **kwargs: Any) -> Any:
        try:
            return _one_line(*args, **kwargs)
        except BaseException as error:  # the facts of the failure, for a launcher (never its text)
            record_failure(error)
            raise

    def _one_line(*args: Any, **kwargs: Any) -> Any:
        try:
            check_lm_eval_argv(sys.argv[1:])  # a key given twice, an abbreviation, --cache_requests
            check_shard_argv(sys.argv[1:])
            return original(*args, **kwargs)
        except (OptionError, TaskFileError, CredentialError) as error:  # bad input: its message says what to fix
            print(f"lm_eval: error: {error}", file=sys.stderr)
            raise SystemExit(2) from None
        except ValueError as error:
            explained = _suite_tasks_only_not_found(error) or explain_unreadable_task_files(error, sys.argv[1:])
            if explained is None:
                raise
            print(f"lm_eval: error: {explained}", file=sys.stderr)
            raise SystemExit(2) from None

    cli_evaluate._logic_consistency = True  # type: ignore[attr-defined]
    module.cli_evaluate = cli_evaluate  # type: ignore[attr-defined]  # lm_eval.__main__.cli_evaluate


def _suite_tasks_only_not_found(error: ValueError) -> str | None:
    """lm-eval's "Tasks not found: NAME" under :data:`ENV_SUITE_TASKS_ONLY`: say that it left lm-eval's tasks out."""
    if not str(error).startswith("Tasks not found") or not suite_tasks_only():
        return None
    return f"{error}; {ENV_SUITE_TASKS_ONLY}=1 indexes only this suite's tasks (and --include_path): unset it"


def _public_summary(module: ModuleType) -> None:
    """lm-eval's CLI prints its summary line with the public model arguments (``publish/run.py``)."""
    from logic_consistency.harness_ext.publish.run import public_prints

    public_prints(module)


_CALLBACKS: dict[str, Callable[[ModuleType], None]] = {
    "lm_eval.tasks.manager": _patch_task_manager,
    "lm_eval.models": _register_models,
    "lm_eval.evaluator": _patch_evaluator,
    "lm_eval.api.model": _guard_request_cache,
    "lm_eval.__main__": _one_line_option_errors,
    "lm_eval.api.task": _shard_documents,
    "lm_eval.evaluator_utils": _aggregate_over_defined,
    "lm_eval._cli.run": _public_summary,
    "lm_eval.api.group": _groups_over_every_member,
}


def install() -> None:
    """Register the post-import hook (idempotent). Called by the ``.pth`` line at start-up."""
    if not enabled():
        return
    if any(isinstance(finder, _PostImportHook) for finder in sys.meta_path):
        return
    callbacks = {name: _after_version_check(callback) for name, callback in _CALLBACKS.items()}
    sys.meta_path.insert(0, _PostImportHook(callbacks))
    # A module imported before install() (e.g. install() called by hand) is patched right away.
    for name, callback in callbacks.items():
        if name in sys.modules:
            callback(sys.modules[name])


def _after_version_check(callback: Callable[[ModuleType], None]) -> Callable[[ModuleType], None]:
    """``callback``, preceded by the one-time check of the installed lm-eval version (nothing is
    patched on another release without its warning first)."""

    def checked(module: ModuleType) -> None:
        _warn_if_unpinned()
        callback(module)

    return checked
