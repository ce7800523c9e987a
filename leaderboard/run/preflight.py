"""What a nightly build checks before the first model call, so that a bad input costs nothing.

* ``extra_args`` were parsed with lm-eval's own parser when the list was read (:mod:`.extra_args`);
* every backend is in lm-eval's model registry, ``lc-*`` included (:func:`check_backends`);
* every task name is one ``lm_eval --tasks`` resolves (:func:`check_tasks`: lm-eval's index with
  built-ins and an ``--include_path`` of ``extra_args``, a glob, a ``.yaml`` file or a folder);
* each backend's model arguments go through the model-arguments check (:func:`check_model_args`);
* every ``metadata`` option the suite declares is checked against its declaration, and ``ks``
  against ``max_items`` (:func:`check_metadata`); ``extra_args`` whose own requirements are missing
  (a hub push without a token, ``--wandb_args`` without wandb) are refused (:func:`check_extra_args`);
* the folder embedded models are converted into must be writable when one still has to be
  converted there (:func:`check_model_cache`): an unwritable ``HOME`` is one line, not a traceback.

A refusal names the file, the entry, the key and the closest valid name.
"""

from __future__ import annotations

import glob
import importlib.util
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext import autoload
from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.backends.registry import check_model_args as check_backend_args
from logic_consistency.harness_ext.models.args import check_gen_kwargs
from logic_consistency.harness_ext.models.embedded import CACHE_ENV, DEFAULT_MODEL, MANIFEST, cache_root
from logic_consistency.harness_ext.models.provenance import check_adapter_base
from logic_consistency.options import SUITE_OPTIONS, OptionError, check_option, closest
from logic_consistency.outputs import OutputError, check_writable

from ..board.modelid import EMBEDDED_BACKEND, parse_model_args
from .modellist import ModelSpec

__all__ = [
    "check_backends",
    "check_extra_args",
    "check_metadata",
    "check_model_args",
    "check_model_cache",
    "check_tasks",
    "preflight",
]


def check_backends(specs: Iterable[ModelSpec]) -> None:
    """Every ``model`` must name a backend of lm-eval's model registry (the suite's ``lc-*`` ones included).

    Raises:
        ValueError: An unknown backend, named with its entry and the closest registered name.
    """
    import lm_eval.models  # noqa: F401 - registers lm-eval's backends (lazily, nothing heavy is imported)
    from lm_eval.api.registry import model_registry

    autoload.install()  # the suite's lc-* backends, as the .pth line registers them in every lm_eval
    known = sorted(model_registry.keys())
    for spec in specs:
        if spec.backend not in model_registry:
            near = closest(spec.backend, known)
            hint = f"did you mean {near!r}? " if near else ""
            raise ValueError(
                f"{spec.where or spec.name}: 'model': unknown lm-eval backend {spec.backend!r}; {hint}"
                f"(registered: {', '.join(known)})"
            )


def _resolves(name: str, single: bool, index: Callable[[], Sequence[str]]) -> bool:
    """Whether ``lm_eval --tasks`` resolves ``name`` (lm-eval's ``EvaluatorConfig.process_tasks``)."""
    if name.endswith(".yaml"):
        return bool(glob.glob(str(Path(name).absolute())))
    if single and Path(name).is_dir():
        return True
    return any(fnmatchcase(task, name) for task in index())


class _TaskIndex:
    """lm-eval's task names: the suite's folder alone first (about a second), every built-in task
    (several seconds) only when a name is not found there."""

    def __init__(self, include_path: str | None) -> None:
        self.include_path = include_path
        self.full: list[str] | None = None
        self.suite: list[str] | None = None

    def suite_only(self) -> list[str]:
        if self.suite is None:
            from lm_eval.tasks import TaskManager

            paths = [str(tasks_dir()), *([self.include_path] if self.include_path else [])]
            self.suite = list(TaskManager(include_path=paths, include_defaults=False).all_tasks)
        return self.suite

    def everything(self) -> list[str]:
        if self.full is None:
            from lm_eval.tasks import TaskManager

            self.full = list(TaskManager(include_path=self.include_path).all_tasks)
        return self.full


def check_tasks(specs: Iterable[ModelSpec]) -> None:
    """Every task name must be one ``lm_eval --tasks`` resolves, with the entry's ``--include_path``.

    Raises:
        ValueError: An unknown task, named with its entry and the closest known name.
    """
    indexes: dict[str | None, _TaskIndex] = {}
    for spec in specs:
        include = spec.lm_eval_options.get("include_path")
        index = indexes.setdefault(include, _TaskIndex(include))
        names = [name.strip() for name in spec.tasks.split(",") if name.strip()]
        for name in names:
            single = len(names) == 1
            if _resolves(name, single, index.suite_only) or _resolves(name, single, index.everything):
                continue
            where = f"{spec.where or spec.name}: 'tasks'"
            if name.endswith(".yaml"):
                raise ValueError(f"{where}: no task file matches {name!r} (a .yaml name is read as a file path)")
            near = closest(name, index.everything())
            hint = f"; did you mean {near!r}?" if near else ""
            raise ValueError(f"{where}: lm_eval knows no task, group or tag {name!r}{hint} (`lm_eval ls tasks`)")


def check_model_args(spec: ModelSpec) -> None:
    """The per-backend check of ``model_args`` (names and values, typos named), before any run.

    The suite's backends declare their arguments (``harness_ext.model_args``); another backend's
    arguments are left to lm-eval.

    Raises:
        ValueError: An argument the backend does not take (the closest one named) or a bad value,
            prefixed with the model list entry.
    """
    try:
        check_backend_args(spec.backend, spec.model_args)
        check_adapter_base(spec.model_args)  # peft=ADAPTER: refused when its base is not the row's
    except ValueError as error:
        raise ValueError(f"{spec.where}: model_args: {error}") from None


def check_metadata(spec: ModelSpec) -> None:
    """Every declared option of ``spec.metadata`` checked against its declaration, before any run.

    (A key no package declares was refused or passed on when the list was read: lm-eval also puts
    other families' options and model arguments there.) ``ks`` given with ``max_items`` must leave
    room for its largest K, as the pairwise tasks require.

    Raises:
        ValueError: Naming the entry, ``metadata.<option>`` and what was expected.
    """
    where = f"{spec.where or spec.name}: metadata"
    try:
        for name, value in spec.metadata.items():
            if name in SUITE_OPTIONS:
                check_option(name, value, label=f"metadata.{name}", where=where)
        ks, cap = spec.metadata.get("ks"), spec.metadata.get("max_items")
        if isinstance(ks, list) and ks and isinstance(cap, int) and max(ks) > cap:
            raise OptionError(
                f"{where}: metadata.max_items={cap} leaves no room for the largest K in metadata.ks={ks}; "
                "raise max_items or lower ks"
            )
    except OptionError as error:
        raise ValueError(str(error)) from None


def _has_token(spec: ModelSpec) -> bool:
    return any(
        (spec.env.get(name) or os.environ.get(name, "")).strip() for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
    )


def _check_hub_push(spec: ModelSpec, hub: Any, where: str) -> None:
    """``--hf_hub_log_args`` that pushes to the hub needs a token."""
    hub = hub or {}
    if not isinstance(hub, Mapping):  # lm-eval parses it into a mapping; text from an older parser
        hub = dict(part.split("=", 1) for part in str(hub).split(",") if "=" in part)
    pushes = [str(name) for name, value in hub.items() if str(value).strip().lower() == "true"]
    if any(name.startswith("push_") for name in pushes) and not _has_token(spec):
        raise ValueError(
            f"{where}: --hf_hub_log_args pushes to the hub ({', '.join(pushes)}) but no HF_TOKEN is set; "
            "set HF_TOKEN in the environment or the entry's 'env', or drop the push"
        )


def check_extra_args(spec: ModelSpec) -> None:
    """``extra_args`` whose requirements are missing: a hub push without a token, wandb not installed.

    Raises:
        ValueError: Naming the entry, the option and what to do.
    """
    options = spec.lm_eval_options
    where = f"{spec.where or spec.name}: extra_args"
    try:
        check_gen_kwargs(options.get("gen_kwargs"), where=f"{where}: --gen_kwargs")
    except OptionError as error:
        raise ValueError(str(error)) from None
    _check_hub_push(spec, options.get("hf_hub_log_args"), where)
    if options.get("wandb_args") and importlib.util.find_spec("wandb") is None:
        raise ValueError(f"{where}: --wandb_args needs wandb, which is not installed; pip install wandb, or drop it")


def check_model_cache(specs: Iterable[ModelSpec]) -> None:
    """The folder embedded models are converted into must be writable if one of them is not there yet.

    (A read-only cache that already holds every converted model is fine.)

    Raises:
        OutputError: The folder cannot be written (one line naming it and the variable that moves it).
    """

    embedded = [spec for spec in specs if spec.backend == EMBEDDED_BACKEND]
    names = {str(parse_model_args(spec.model_args).get("model", DEFAULT_MODEL)) for spec in embedded}
    root = cache_root() / "models"
    missing = sorted(name for name in names if not any(root.glob(f"{glob.escape(name)}-*/{MANIFEST}")))
    if not missing:
        return
    try:
        check_writable(root, folder=True)
    except (OutputError, ValueError) as error:
        raise OutputError(
            f"{error}; the embedded model(s) {missing} are converted there on first use: set {CACHE_ENV} "
            "(or HOME / XDG_CACHE_HOME) to a writable folder",
            getattr(error, "errno", None),
        ) from None


def preflight(specs: Sequence[ModelSpec], *, registry: bool = True) -> None:
    """Run every check that needs no model call, in order: backends, model arguments, metadata, extra
    arguments, tasks, model cache.

    (``extra_args`` were parsed when the model list was read, :func:`.extra_args.parse_extra_args`.)
    ``registry=False`` skips the backend names: a custom ``--lm-eval`` may register backends this
    process does not know (the runs then name an unknown one).

    Raises:
        ValueError: The first bad input, named.
    """
    if registry:
        check_backends(specs)
    for spec in specs:
        check_model_args(spec)
        check_metadata(spec)
        check_extra_args(spec)
    check_tasks(specs)
    check_model_cache(specs)
