"""The nightly build's model list (YAML).

Top-level keys are run settings shared by every model; each entry of ``models`` may override any of
them, and the command line overrides both (``--limit 2`` makes a quick run of the whole list).
``metadata`` dicts are merged key by key (file, then entry, then command line).

.. code-block:: yaml

    tasks: logic_consistency          # lm_eval --tasks
    models:
      - name: smollm2-135m-instruct   # display name and row key
        model: lc-embedded            # lm_eval --model

Every key, with its default, is listed in docs/leaderboard.md ("Model list").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from logic_consistency.common import check_link_loop, load_yaml, read_text
from logic_consistency.credentials import (
    SECRET_NAMES_VARIABLE,
    is_secret_name,
    is_switch,
    refuse_credentials,
    register_secret,
)
from logic_consistency.harness_ext.backends.registry import first_typo
from logic_consistency.harness_ext.publish.allowlist import public_model_args
from logic_consistency.options import (
    SUITE_OPTIONS,
    check_flag,
    check_option,
    declared_flags,
    declared_options,
    reject_near_misses,
    reject_unknown,
)
from logic_consistency.secret_forms import MIN_SECRET_LENGTH, is_placeholder

from ..board.identity import check_name, first_unprintable
from ..board.modelid import format_model_args, parse_model_args
from .extra_args import parse_extra_args
from .placement import (
    check_api_limits,
    check_resources,
    check_shards,
    endpoint_of,
    optional_mapping,
    slots_of,
    unmatched_limits,
)

__all__ = ["DEFAULT_MODEL_LIST", "ModelSpec", "default_model_list", "load_model_list"]

DEFAULT_MODEL_LIST = "models.yaml"
SETTING_KEYS = ("tasks", "limit", "metadata", "batch_size", "apply_chat_template", "timeout", "shards")
ENTRY_KEYS = frozenset({"name", "model", "model_args", "revision", "precision", "extra_args", "env", "enabled",
                        "resources", "public_endpoint", *SETTING_KEYS})  # fmt: skip
TOP_KEYS = frozenset({"models", "api_limits", *SETTING_KEYS})
#: Seconds a model's run may take when neither the list nor the command line says (6 hours): a run
#: past it is stopped (its whole process group) and recorded as failed, so every build ends.
DEFAULT_TIMEOUT_SECONDS = 6 * 3600.0
#: The longest per-model timeout accepted (7 days): more is a typo, not a plan (its declaration's maximum).
MAX_TIMEOUT_SECONDS = float(declared_flags()["timeout"].maximum or 0)
#: Nodes the model list's YAML may expand to, aliases expanded (a list of hundreds of models needs a
#: few thousand): an "alias bomb" (a few lines whose aliases expand to billions) is refused.
MAX_YAML_NODES = 100_000


DEFAULTS: dict[str, Any] = {
    "tasks": "logic_consistency",
    "limit": None,
    "metadata": {},
    "batch_size": None,
    "apply_chat_template": False,
    "timeout": DEFAULT_TIMEOUT_SECONDS,
    "shards": 1,
}


@dataclass(frozen=True)
class ModelSpec:
    """One model to run, with its settings resolved (file < entry < command line).

    Attributes:
        name: Display name (row key).
        backend: lm-eval ``--model``.
        model_args: lm-eval ``--model_args``.
        tasks: lm-eval ``--tasks``.
        limit: lm-eval ``--limit`` (``None``: all).
        metadata: lm-eval ``--metadata``.
        batch_size: lm-eval ``--batch_size`` (``None``: lm-eval's default).
        apply_chat_template: Pass ``--apply_chat_template``.
        timeout: Seconds before the run's process group is killed (:data:`DEFAULT_TIMEOUT_SECONDS`).
        revision: Explicit revision label.
        precision: Explicit precision label.
        extra_args: Further ``lm_eval`` arguments.
        env: Extra environment variables.
        lm_eval_options: The ``lm_eval`` options ``extra_args`` set (destination -> value, as lm-eval parses them).
        where: The entry in the model list (file and index), for error messages.
        shards: Number of shards the model's documents are split into (1: one run).
        resources: What each unit asks a Ray cluster for (:func:`.placement.check_resources`).
        endpoint: ``host[:port]`` of the model's ``base_url`` when ``api_limits`` caps it, else ``None``.
        api_limit: That endpoint's cluster-wide limit of concurrent requests.
        slots: Concurrent requests one unit of this model may open (its ``num_concurrent``).
        public_endpoint: The host of ``base_url`` may be published (else a label names it, issue 54).
    """

    name: str
    backend: str
    model_args: str = ""
    tasks: str = "logic_consistency"
    limit: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    batch_size: str | None = None
    apply_chat_template: bool = False
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    revision: str | None = None
    precision: str | None = None
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    shards: int = 1
    resources: dict[str, Any] = field(default_factory=dict)
    endpoint: str | None = None
    api_limit: int | None = None
    slots: int = 1
    public_endpoint: bool = False
    lm_eval_options: dict[str, Any] = field(default_factory=dict, compare=False)
    where: str = field(default="", compare=False)


def default_model_list() -> Path:
    """The model list shipped with the package (the two embedded models)."""
    return Path(str(resources.files(__package__).joinpath(DEFAULT_MODEL_LIST)))


def _declared(key: str) -> Callable[[Any, str], Any]:
    """The check of a setting declared once (``_options_yaml`` flags: the same bounds as its command-line flag)."""

    def check(value: Any, where: str) -> Any:
        checked = check_flag(key, value, label=f"'{key}'", where=where)
        return float(checked) if isinstance(checked, int | float) and not isinstance(checked, bool) else checked

    return check


def _tasks(value: Any, where: str) -> str:
    if isinstance(value, list) and value and all(isinstance(t, str) and t for t in value):
        return ",".join(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: 'tasks' must be a task/group name or a list of them, got {value!r}")
    return value


def _metadata(value: Any, where: str) -> dict[str, Any]:
    value = optional_mapping(value, "metadata", where)
    # the suite's one rule (options.reject_near_misses), checked before any model runs
    reject_near_misses(value, SUITE_OPTIONS, where=f"{where}: metadata")
    for key in sorted(set(value) & set(declared_options())):  # each value within its declaration, before any run
        check_option(key, value[key], label=f"metadata.{key}", where=where)
    refuse_credentials(value, None, where=f"{where}: metadata")  # lm-eval writes it into every task config
    return dict(value)


def _batch_size(value: Any, where: str) -> str | None:
    # by hand: an integer or text ('auto', 'auto:4') is no type the declarations have (lm_eval parses it)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip():
        raise ValueError(f"{where}: 'batch_size' must be an integer or a string like 'auto', got {value!r}")
    return str(value)


def _timeout(value: Any, where: str) -> float:
    """Seconds; null is the default, never unlimited, so that every build ends."""
    seconds: float | None = _declared("timeout")(value, where)
    return DEFAULT_TIMEOUT_SECONDS if seconds is None else seconds


#: The check of each setting (file, entry or command line): value and where -> the checked value.
_SETTING_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "tasks": _tasks,
    "limit": _declared("limit"),
    "metadata": _metadata,
    "batch_size": _batch_size,
    "apply_chat_template": _declared("apply_chat_template"),
    "timeout": _timeout,
    "shards": check_shards,
}


def _string_or_none(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: '{key}' must be a non-empty string, got {value!r}")
    return _printable(key, value, where)


def _printable(key: str, value: str, where: str) -> str:
    """``value`` if it holds no control or format character (a newline, an escape, a bidi override)."""
    return check_name(value, f"{where}: '{key}'")


def _api_limit(model_args: str, limits: Mapping[str, int], where: str) -> dict[str, Any]:
    """The ``endpoint``, ``api_limit`` and ``slots`` fields of a model under ``api_limits``."""
    args = parse_model_args(model_args)
    endpoint = endpoint_of(args)
    if endpoint is None or endpoint not in limits:
        return {}
    slots = slots_of(args, where)
    if slots > limits[endpoint]:
        raise ValueError(
            f"{where}: num_concurrent={slots} exceeds api_limits[{endpoint!r}] = {limits[endpoint]}; "
            "lower num_concurrent or raise the limit"
        )
    return {"endpoint": endpoint, "api_limit": limits[endpoint], "slots": slots}


def _endpoint(raw: Mapping[str, Any]) -> str | None:
    """The endpoint of an entry's ``base_url`` (a disabled entry's too: its limit is not a typo)."""
    model_args = raw.get("model_args") if isinstance(raw, Mapping) else None
    try:
        return endpoint_of(parse_model_args(format_model_args(model_args)))
    except (TypeError, ValueError):  # a disabled entry's model_args are not checked
        return None


def _name_typos(backend: str, model_args: str | Mapping[str, Any] | None, where: str) -> None:
    """A mistyped argument of one of the suite's backends (``max_token``) is named as a typo first, before a
    name that only looks like a credential is refused (its declaration decides: preflight's check)."""
    typo = None if model_args is None else first_typo(backend, format_model_args(model_args))
    if typo is not None:
        raise ValueError(f"{where}: model_args: unknown argument {typo[0]!r}; did you mean {typo[1]!r}?")


def _model_args(raw: Mapping[str, Any], where: str) -> str:
    model_args = raw.get("model_args")
    if model_args is not None and not isinstance(model_args, (str, Mapping)):
        raise ValueError(f"{where}: 'model_args' must be a string 'k=v,...' or a mapping, got {model_args!r}")
    _name_typos(raw["model"].strip(), model_args, where)
    refuse_credentials(model_args, raw["model"].strip(), where=f"{where}: model_args")
    note = public_model_args(raw["model"].strip(), model_args).note(f"{where}: model_args")
    if note is not None:  # the allowlist decides what a board, a page or a run folder records
        print(f"{note} (the run still gets them)", file=sys.stderr)
    formatted = format_model_args(model_args)
    if formatted.startswith("-"):  # lm_eval's parser would read it as an option and refuse the run
        raise ValueError(
            f"{where}: 'model_args' {formatted!r:.60} begins with '-': lm_eval would read it as an option; "
            "write k=v,... (model_args: 'pretrained=NAME')"
        )
    return formatted


def _extra_args(raw: Mapping[str, Any], where: str) -> tuple[list[str], dict[str, Any]]:
    """The entry's ``extra_args`` and the ``lm_eval`` options they set (read with lm-eval's own parser)."""
    extra = raw.get("extra_args", [])
    if not isinstance(extra, list) or not all(isinstance(arg, str) for arg in extra):
        raise ValueError(f"{where}: 'extra_args' must be a list of strings, got {extra!r}")
    # lm_eval's --wandb_args, --hf_hub_log_args, ... are k=v,k=v text too
    refuse_credentials(",".join(extra), None, where=f"{where}: extra_args")
    return extra, parse_extra_args(extra, where)  # every spelling of a build option is refused


def _env(raw: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    env = _checked_env(raw.get("env", {}), where)
    secret = _secrets(env, where)
    for name in secret:
        register_secret(str(env[name]), name)
    return {**env, SECRET_NAMES_VARIABLE: ",".join(secret)} if secret else env


def _checked_env(env: Any, where: str) -> Mapping[str, Any]:
    """An entry's ``env``: a mapping of variable names to text values, else an error naming the names."""
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in env.items()
    ):
        shown = sorted(map(str, env)) if isinstance(env, Mapping) else type(env).__name__  # names: values may be keys
        raise ValueError(f"{where}: 'env' must be a mapping of variable names to text values, got {shown!r}")
    return env


def _secrets(env: Mapping[str, Any], where: str) -> list[str]:
    """The names of ``env``'s secret values (the rest, and the names passed over, said on stderr)."""
    # a value is a secret when its name is key-like (the --model_args rule) or declared in the entry's
    # SECRET_NAMES_VARIABLE, and it is no switch (OMP_NUM_THREADS: 1) nor placeholder (-, none, EMPTY);
    # the rest (LANG: C) is configuration, never a redaction pattern (issue 39). The run's lm_eval
    # learns the names through SECRET_NAMES_VARIABLE.
    declared = {name.strip() for name in str(env.get(SECRET_NAMES_VARIABLE, "")).split(",") if name.strip()}
    named = sorted(name for name in env if name in declared or is_secret_name(name))
    secret = [name for name in named if not is_switch(str(env[name])) and not is_placeholder(str(env[name]))]
    if set(named) - set(secret):
        print(f"{where}: env {', '.join(sorted(set(named) - set(secret)))}: a placeholder, switch or value under "
              f"{MIN_SECRET_LENGTH} characters, not treated as a secret (never redacted)", file=sys.stderr)  # fmt: skip
    return secret


def _entry(
    raw: Any,
    index: int,
    shared: Mapping[str, Any],
    overrides: Mapping[str, Any],
    source: Path,
    limits: Mapping[str, int] | None = None,
) -> ModelSpec | None:
    where = _checked_entry(raw, index, source)
    if not _declared("enabled")(raw.get("enabled", True), where):
        return None
    settings = _entry_settings(raw, shared, overrides, where)
    formatted_args = _model_args(raw, where)
    extra, lm_eval_options = _extra_args(raw, where)
    env = _env(raw, where)
    return ModelSpec(
        name=raw["name"].strip(),
        backend=raw["model"].strip(),
        model_args=formatted_args,
        tasks=settings["tasks"],
        limit=settings["limit"],
        metadata=settings["metadata"],
        batch_size=settings["batch_size"],
        apply_chat_template=settings["apply_chat_template"],
        timeout=settings["timeout"],
        revision=_string_or_none(raw, "revision", where),
        precision=_string_or_none(raw, "precision", where),
        extra_args=tuple(extra),
        env={key: str(value) for key, value in env.items()},
        lm_eval_options=lm_eval_options,
        where=where,
        shards=settings["shards"],
        resources=check_resources(raw.get("resources"), where),
        public_endpoint=_declared("public_endpoint")(raw.get("public_endpoint", False), where),
        **_api_limit(formatted_args, limits or {}, where),
    )


def _checked_entry(raw: Any, index: int, source: Path) -> str:
    """Check an entry's shape, keys, ``name`` and ``model``; returns how errors name it (with its name if printable)."""
    where = f"{source}: models[{index}]"
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: expected a mapping with at least 'name' and 'model', got {raw!r}")
    if isinstance(raw.get("name"), str) and raw["name"].strip() and first_unprintable(raw["name"]) is None:
        where = f"{source}: models[{index}] ({raw['name']})"
    reject_unknown(raw, ENTRY_KEYS, where=where)
    for key in ("name", "model"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"{where}: '{key}' is required and must be a non-empty string")
    check_name(raw["name"], f"{source}: models[{index}] 'name'")
    _printable("model", raw["model"], where)
    return where


def _entry_settings(
    raw: Mapping[str, Any], shared: Mapping[str, Any], overrides: Mapping[str, Any], where: str
) -> dict[str, Any]:
    """The settings of one entry: the file's shared ones, the entry's over them, the command line's over both
    (``metadata`` merged key by key)."""
    settings = dict(shared)
    for key in SETTING_KEYS:
        if key in raw:
            value = _SETTING_CHECKS[key](raw[key], where)
            settings[key] = {**settings["metadata"], **value} if key == "metadata" else value
    for key, value in overrides.items():
        settings[key] = {**settings["metadata"], **value} if key == "metadata" else value
    return settings


def load_model_list(
    path: str | os.PathLike[str] | None = None, overrides: Mapping[str, Any] | None = None
) -> list[ModelSpec]:
    """Read a model list.

    Args:
        path: YAML file; default: the shipped list (:func:`default_model_list`).
        overrides: Settings from the command line (keys of :data:`SETTING_KEYS`; ``None`` values
            are ignored), applied over the file and every entry.

    Returns:
        The enabled models, in file order.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: The YAML is malformed, a key/value is invalid (file, entry and key named), or no
            model is enabled (a build with nothing to run is an error, not an empty night).
    """
    source = Path(path) if path is not None else default_model_list()
    data = _read_list_file(source)
    shared = dict(DEFAULTS)
    shared.update({key: _SETTING_CHECKS[key](data[key], str(source)) for key in SETTING_KEYS if key in data})
    checked_overrides = _checked_overrides(overrides)
    models = data.get("models")
    if not isinstance(models, list) or not models:
        raise ValueError(f"{source}: 'models' must be a non-empty list")
    limits = check_api_limits(data.get("api_limits"), str(source))
    specs = [_entry(raw, index, shared, checked_overrides, source, limits) for index, raw in enumerate(models)]
    unmatched_limits(limits, {_endpoint(raw) for raw in models}, str(source))
    return _enabled(specs, source)


def _checked_overrides(overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The command line's settings, each checked (a ``None`` value was not given)."""
    return {
        key: _SETTING_CHECKS[key](value, "command line")
        for key, value in (overrides or {}).items()
        if value is not None
    }


def _read_list_file(source: Path) -> Mapping[str, Any]:
    """The model list file's top-level mapping (its keys checked), else an error naming the file."""
    check_link_loop(source)
    if not source.is_file():
        raise FileNotFoundError(f"{source}: model list not found")
    try:
        data = load_yaml(read_text(source), max_nodes=MAX_YAML_NODES)
    except yaml.YAMLError as error:
        raise ValueError(f"{source}: not valid YAML ({error})") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: expected a mapping with a 'models' list at the top level")
    reject_unknown(data, TOP_KEYS, where=str(source), what="top-level key")
    return data


def _enabled(specs: list[ModelSpec | None], source: Path) -> list[ModelSpec]:
    """The enabled entries: at least one, each name once."""
    enabled = [spec for spec in specs if spec is not None]
    if not enabled:
        raise ValueError(
            f"{source}: no enabled model (all {len(specs)} entries have 'enabled: false'); nothing to build"
        )
    names = [spec.name for spec in enabled]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"{source}: duplicate model name(s) {duplicates}")
    return enabled
