"""Direct ``lm_eval`` runs publish by allowlist and print no credential (issue 29).

The autoload hook wraps ``lm_eval.evaluator.simple_evaluate`` (:func:`publishing`): before the model
is built it refuses credentials in ``model_args`` and ``metadata``
(:func:`logic_consistency.credentials.refuse_credentials`), a ``gen_kwargs`` key that is not a declared
generation key (:func:`~logic_consistency.harness_ext.models.args.check_gen_kwargs`) and a hosted backend's too-short key
and makes every log record and an uncaught exception's traceback pass through the redactor
(:func:`redact_logs`), so an endpoint that echoes the key in its error body never prints it, even as
the last line of a failed run. The results it returns (what lm-eval writes as the results JSON and
the samples files) record only the public model arguments and declared options
(:mod:`logic_consistency.harness_ext.publish.allowlist`), and every string in them is redacted: the
credentials sent, in their echoed forms, everywhere; the pattern rules (``Bearer ...``, ``key=...``) only
outside the samples, which hold what a model generated, as it was scored (issue 46).
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

from logic_consistency.credentials import Redactor, refuse_credentials, refuse_short_key
from logic_consistency.harness_ext.backends.registry import check_model_args
from logic_consistency.harness_ext.models.args import check_gen_kwargs, split_model_args
from logic_consistency.harness_ext.publish.allowlist import (
    PATH_ARGS,
    SUITE_RECORDED,
    TASK_METADATA,
    URL_ARGS,
    public_metadata,
    public_model_args,
    public_path,
    public_url,
)
from logic_consistency.harness_ext.publish.results_path import check_results_path
from logic_consistency.harness_ext.task.current_run import recording_device
from logic_consistency.options import SUITE_OPTIONS

__all__ = ["public_prints", "publish_results", "publishing", "redact_logs"]

#: Texts logged as they were given and what is logged instead: lm-eval logs the model arguments it
#: builds the model with (``Initializing lc-chat model, with arguments: {...}``); the log shows the
#: public ones (:func:`_log_public_model_args`).
_REPLACEMENTS: dict[str, str] = {}


def _names(model_args: Any) -> set[str]:
    if isinstance(model_args, Mapping):
        return {str(name) for name in model_args}
    return {name for name, _ in split_model_args(str(model_args or ""))}


def _public_arg_value(name: str, value: Any) -> Any:
    """A URL or path argument's value as it may be written (:func:`public_url`, :func:`public_path`); others as
    they are."""
    if name in URL_ARGS and isinstance(value, str):
        return public_url(value)
    if name in PATH_ARGS and isinstance(value, str):
        return public_path(value)
    return value


def _declared_task_key(name: str) -> bool:
    """A key a task's metadata may hold without a run giving it: a task file's declared key or the suite's own."""
    return name in TASK_METADATA or name in SUITE_OPTIONS | SUITE_RECORDED


def _relative_config_source(metadata: dict[str, Any]) -> None:
    """lm-eval records the task YAML's absolute path: relative to the package, or left out."""
    source = metadata.get("config_source")
    if not isinstance(source, str):
        return
    package = Path(__file__).resolve().parents[2]
    path = Path(source).resolve()
    if path.is_relative_to(package):
        metadata["config_source"] = str(Path("logic_consistency") / path.relative_to(package))
    else:
        del metadata["config_source"]


def _clean_task_metadata(metadata: dict[str, Any], given: set[str], kept: set[str]) -> list[str]:
    """lm-eval copies ``model_args | --metadata`` into each task's metadata: the same rule there; and a
    task file's own ``metadata:`` (``--include_path``) keeps only declared keys (:data:`TASK_METADATA`,
    the suite's options): a ``jwt`` there is never written (issue 46). Returns the task file's keys left out."""
    left = []
    for name in list(metadata):
        if name in given and name not in kept:
            del metadata[name]
        elif name not in kept and not _declared_task_key(name):
            del metadata[name]
            left.append(f"task metadata {name!r}")
        else:
            metadata[name] = _public_arg_value(name, metadata[name])
    _relative_config_source(metadata)
    return left


def _publish_config(config: Any, model_args: Any, device: str | None) -> None:
    """lm-eval's run ``config``, in place: the public model arguments, the cache as a public path, the device
    measured."""
    if not isinstance(config, dict):
        return
    if isinstance(config.get("use_cache"), str):  # a folder of the machine (issue 46)
        config["use_cache"] = public_path(config["use_cache"])
    if "model_args" in config:
        config["model_args"] = model_args
    if "device" in config:
        config["device"] = device  # measured from the loaded model (None: an API model)


def _clean_tasks_metadata(results: dict[str, Any], given: set[str], kept: set[str]) -> list[str]:
    """Every task config's metadata cleaned (:func:`_clean_task_metadata`); the task files' keys left out."""
    from_tasks: list[str] = []
    for task_config in (results.get("configs") or {}).values():
        if isinstance(task_config, dict) and isinstance(task_config.get("metadata"), dict):
            from_tasks += _clean_task_metadata(task_config["metadata"], given, kept)
    return from_tasks


def _redact_results(results: dict[str, Any]) -> None:
    """Redact every string of ``results`` in place: arguments and configuration with the pattern rules too;
    the samples (what a model wrote, byte for byte) only of the credentials sent, in their forms."""
    samples = results.pop("samples", None)
    redacted = Redactor.from_environment().json(results)
    if isinstance(samples, Mapping):  # lm-eval's {task: [sample, ...]}: one samples file per task
        redacted["samples"] = {task: _redacted_samples(task, records) for task, records in samples.items()}
    elif samples is not None:
        redacted["samples"] = _redacted_samples("", samples)
    results.clear()
    results.update(redacted)


def _redacted_samples(task: str, records: Any) -> Any:
    """One task's samples with the credentials sent replaced, in their forms; when any was, one line says how
    many and in which file (issue 54: never silently: a model's text was changed)."""
    literal = Redactor.from_environment(patterns=False)
    clean = literal.json(records)
    if literal.replacements:
        names = sorted({found.split(": ")[-1] for found in literal.found})
        file = f"samples_{task}_*.jsonl" if task else "the samples files"
        print(
            f"logic-consistency: {file}: {literal.replacements} replacement(s) of {', '.join(names)} in what the "
            "model or endpoint wrote (an echoed credential, written as [redacted NAME])",
            file=sys.stderr,
        )
    return clean


def publish_results(
    results: dict[str, Any],
    *,
    backend: str | None,
    model_args: Any,
    metadata: Mapping[str, Any] | None,
    device: str | None = None,
) -> list[str]:
    """Rewrite ``results`` (lm-eval's, in place) to what may be written; returns the names left out.

    ``device`` is where the run's weights were (:func:`~logic_consistency.harness_ext.task.current_run.recording_device`).
    """
    args = public_model_args(backend, model_args)
    options = public_metadata(metadata)
    _publish_config(results.get("config"), args.value, device)
    given = _names(model_args) | set(metadata or {})
    kept = _names(args.value) | set(options.value or {})
    from_tasks = _clean_tasks_metadata(results, given, kept)
    _redact_results(results)
    return args.left_out + options.left_out + sorted(set(from_tasks))


def _public_text(text: str, redactor: Redactor | None = None) -> str:
    """``text`` with the model arguments lm-eval was given replaced by the public ones (:data:`_REPLACEMENTS`),
    then redacted."""
    for given, public in _REPLACEMENTS.items():
        if given in text:
            text = text.replace(given, public)
    return (redactor or Redactor.from_environment()).text(text)


def public_prints(module: ModuleType) -> None:
    """lm-eval's CLI (``lm_eval._cli.run``) prints ``MODEL ({model_args}), gen_kwargs: ...`` from the arguments
    as given (a private ``base_url`` path and query, a home folder): its ``print`` shows the public ones, as
    the log records do (a module's global ``print`` is looked up before the built-in one)."""
    if getattr(module.__dict__.get("print"), "_logic_consistency", False):
        return

    def public_print(*values: Any, **kwargs: Any) -> None:
        print(*(_public_text(str(value)) for value in values), **kwargs)

    public_print._logic_consistency = True  # type: ignore[attr-defined]
    module.print = public_print  # type: ignore[attr-defined]


class _RedactingRecords:
    """A log record factory that redacts each message (and a logged traceback) when it is made."""

    def __init__(self, factory: Callable[..., logging.LogRecord]) -> None:
        self.factory = factory

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.factory(*args, **kwargs)
        redactor = Redactor.from_environment()
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's to report
            return record
        clean = _public_text(message, redactor)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redactor.text("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        return record


def _redacting_excepthook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    sys.stderr.write(Redactor.from_environment().text("".join(traceback.format_exception(kind, value, tb))))


def redact_logs() -> None:
    """Every log record and an uncaught exception's traceback of this process are redacted (idempotent)."""
    factory = logging.getLogRecordFactory()
    if not isinstance(factory, _RedactingRecords):
        logging.setLogRecordFactory(_RedactingRecords(factory))
    sys.excepthook = _redacting_excepthook


def _log_public_model_args(backend: str | None, model_args: Any) -> None:
    """Log the public model arguments wherever lm-eval logs the given ones (as text and as a parsed dict)."""
    from logic_consistency.harness_ext.models.args import parse_model_args
    from logic_consistency.options import OptionError

    if not model_args:
        return
    try:
        parsed = parse_model_args(model_args) if isinstance(model_args, str) else dict(model_args)
    except (OptionError, TypeError, ValueError):  # lm-eval reports malformed arguments itself
        return
    _REPLACEMENTS[str(parsed)] = str(public_model_args(backend, parsed).value)
    printed = {name: value for name, value in parsed.items() if name != "trust_remote_code"}  # the CLI pops it
    _REPLACEMENTS[str(printed)] = str(public_model_args(backend, printed).value)
    if isinstance(model_args, str):
        _REPLACEMENTS[model_args] = str(public_model_args(backend, model_args).value)


def _check_results_path(given: Mapping[str, Any]) -> None:
    """The results (and samples) files lm-eval will write at the end fit the file system (``results_path.py``)."""
    tracker = given.get("evaluation_tracker")
    tasks = given.get("tasks")
    check_results_path(
        getattr(tracker, "output_path", None),
        tasks=[task for task in (tasks if isinstance(tasks, (list, tuple)) else [tasks]) if isinstance(task, str)],
        log_samples=bool(given.get("log_samples")),
    )


def _unknown_metric(error: KeyError, given: Mapping[str, Any]) -> Exception | None:
    """The task file and ``metric_list`` entry behind lm-eval's ``KeyError: None`` (``check_task``), or ``None``."""
    if error.args != (None,):
        return None
    from logic_consistency.harness_ext.task.check_task import explain_unknown_metric

    return explain_unknown_metric(given.get("task_manager"), given.get("tasks"))


def _parsed(model_args: Any) -> dict[str, Any] | None:
    """``model_args`` (text or a mapping) as lm-eval parses them; ``None`` when malformed (lm-eval reports that)."""
    from logic_consistency.harness_ext.models.args import parse_model_args
    from logic_consistency.options import OptionError

    try:
        return parse_model_args(model_args) if isinstance(model_args, str) else dict(model_args or {})
    except (OptionError, TypeError, ValueError):
        return None


def _refuse_pickled_adapter(model_args: Any) -> None:
    """``peft=FOLDER`` whose weights are pickle (``.bin``): refused before lm-eval loads them (safetensors only)."""
    from logic_consistency.harness_ext.models.adapters import check_adapter_weights

    parsed = _parsed(model_args)
    if parsed and parsed.get("peft") and Path(str(parsed["peft"])).is_dir():
        check_adapter_weights(Path(str(parsed["peft"])))


def _check_declared_args(backend: str | None, model_args: Any) -> None:
    """A declared backend's ``model_args`` (``backends/registry.py``) are checked before it is built, so
    a backend plugged in by entry point refuses a mistyped argument even if its class checks nothing."""
    parsed = _parsed(model_args)
    if backend is not None and parsed:
        check_model_args(backend, parsed)


def publishing(simple_evaluate: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``lm_eval.evaluator.simple_evaluate`` as the module docstring says."""
    signature = inspect.signature(simple_evaluate)

    @functools.wraps(simple_evaluate)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = signature.bind_partial(*args, **kwargs).arguments
        model = given.get("model")
        backend = model if isinstance(model, str) else None
        refuse_credentials(given.get("model_args"), backend, where="lm_eval --model_args")
        refuse_credentials(given.get("metadata"), backend, where="lm_eval --metadata")
        _check_declared_args(backend, given.get("model_args"))
        check_gen_kwargs(given.get("gen_kwargs"))  # declared keys only: lm-eval sends, prints and records them
        _check_results_path(given)
        short = refuse_short_key(backend)  # a placeholder key (-, none, EMPTY) is no secret: one line says so
        if short is not None:
            print(short, file=sys.stderr)
        _refuse_pickled_adapter(given.get("model_args"))
        redact_logs()
        _log_public_model_args(backend, given.get("model_args"))
        try:
            with recording_device() as measured:
                results = simple_evaluate(*args, **kwargs)
        except KeyError as error:  # lm-eval's "KeyError: None" of an unknown metric in a task YAML
            explained = _unknown_metric(error, given)
            if explained is None:
                raise
            raise explained from error
        if isinstance(results, dict):
            left = publish_results(
                results,
                backend=backend,
                model_args=given.get("model_args"),
                metadata=given.get("metadata"),
                device=measured.device,
            )
            if left:
                print(
                    f"logic-consistency: lm_eval: not recorded in the results (not declared public): {', '.join(left)}",
                    file=sys.stderr,
                )
        return results

    wrapper._logic_consistency = True  # type: ignore[attr-defined]
    return wrapper
