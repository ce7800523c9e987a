"""Shared machinery of the suite's lm-eval task classes.

A suite task emits many prompts per document (every ordered pair, every stage). Each prompt must be
formatted exactly as lm-eval formats a document's prompt (system instruction, chat template), so
:class:`PromptedTask` keeps the formatting settings lm-eval passes to ``build_all_requests`` and
formats any text with them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, cast

import jinja2
from lm_eval.api.task import ConfigurableTask

from logic_consistency.common import INSTANCE_HALF, in_split
from logic_consistency.harness_ext.task import data_files
from logic_consistency.options import OptionError, read_option, reject_near_misses, reject_unknown

#: Jinja2 environment for prompt templates: a misspelt variable is an error, not an empty string.
TEMPLATES = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False)


def render_prompt(template: jinja2.Template, values: Mapping[str, Any], *, where: str) -> str:
    """``template`` rendered with ``values``; a variable it does not have is a ``ValueError`` naming
    ``where`` (the task and the template), the variable and the names the template can use."""
    try:
        return template.render(**values)
    except jinja2.UndefinedError as error:
        names = ", ".join(sorted(values))
        raise ValueError(f"{where}: {error.message}; the template can use {names}") from None


def total(values: Sequence[float]) -> float:
    """Aggregation: the sum over documents (for counts such as ``unparseable``)."""
    return float(sum(values))


def loader_parameter_names(loader: Callable[..., Any]) -> list[str]:
    """The keyword parameters a ``custom_dataset`` loader names: the only options it is given.

    A ``**kwargs`` parameter does not widen them (the suite's rule, see
    :meth:`PromptedTask.check_loader_options`); a callable without an inspectable signature names none.
    """
    try:
        parameters = inspect.signature(loader).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return []
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def loader_name(loader: Callable[..., Any]) -> str:
    """The loader's dotted name for messages (``logic_consistency.tasks.data.summeval.load``)."""
    module, name = getattr(loader, "__module__", None), getattr(loader, "__qualname__", None)
    return f"{module}.{name}" if module and name else repr(loader)


def _refuse_fixed_options(task: Any, dataset_kwargs: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    """A loader option the task's ``dataset_kwargs`` fixes cannot also be set through ``metadata``."""
    fixed = sorted(key for key in dataset_kwargs if key in metadata and key not in ("version",))
    if fixed:
        raise OptionError(
            f"task {task!r}: {fixed} fixed by the task's dataset_kwargs "
            f"({ {key: dataset_kwargs[key] for key in fixed} }); it cannot be set through "
            "metadata or --metadata (run the task that has the value you want)"
        )


def _refuse_empty(task: Any, dataset: Any, loader: Callable[..., Any], kwargs: Mapping[str, Any]) -> None:
    """A loader that returned splits without a document (lm-eval would stop with an ``IndexError``)."""
    if isinstance(dataset, Mapping) and dataset and all(len(split) == 0 for split in dataset.values()):
        options = {key: value for key, value in kwargs.items() if key in loader_parameter_names(loader)}
        raise ValueError(
            f"task {task!r}: no documents with these options {options}; relax them (e.g. a smaller min_events)"
        )


def _rows_in_half(part: Any, task: Any, split: str) -> list[int]:
    """The rows of one dataset split whose instance lies in ``split``'s half (a row's own half column wins)."""
    ids = [row.get("instance_id", row.get("id")) for row in part]
    if any(instance is None for instance in ids):
        raise ValueError(f"task {task!r}: metadata.instance_split={split!r} needs an instance_id or id per document")
    halves = part[INSTANCE_HALF] if INSTANCE_HALF in part.column_names else [None] * len(ids)
    return [i for i, (instance, half) in enumerate(zip(ids, halves, strict=True))
            if (half == split if half else in_split(str(instance), split))]  # fmt: skip


class PromptedTask(ConfigurableTask):  # type: ignore[misc]  # lm-eval ships no type information
    """A ``ConfigurableTask`` that formats many prompts per document and owns extra YAML keys.

    Subclasses list their own top-level YAML keys in ``EXTRA_KEYS``; they are removed before
    lm-eval's ``TaskConfig`` sees them (it rejects unknown keys), made available as
    ``self.extra_config``, and a copy is recorded in ``metadata`` under ``RECORD_KEY`` so the
    results JSON's ``configs`` section shows them.
    """

    EXTRA_KEYS: tuple[str, ...] = ()
    RECORD_KEY = "task_config"

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = dict(config or {})
        # lm-eval 0.4.13 passes the YAML's `class` key on to the constructor (a known bug).
        config.pop("class", None)
        self.extra_config = {key: config.pop(key) for key in self.EXTRA_KEYS if key in config}
        config["metadata"] = {**(config.get("metadata") or {}), self.RECORD_KEY: self.extra_config}
        config.setdefault("doc_to_text", "")
        config.setdefault("doc_to_target", "")
        self._render_kwargs: dict[str, Any] = {}
        self.instance_split: str = read_option(
            config["metadata"], "instance_split", where=f"task {config.get('task')!r}"
        )
        # a train or test run has it in its metadata (--metadata), so its results file says which half it scored;
        # the default is not added, so the configs (and config hashes) of today's runs stay as they were
        # Options are checked before lm-eval's constructor loads any data (it calls download()).
        self.validate_options(config)
        super().__init__(config=config, **kwargs)

    def validate_options(self, config: dict[str, Any]) -> None:
        """Check the task's options before any data loads (``config`` is the merged task config).

        The default checks the ``custom_dataset`` loader's options (:meth:`check_loader_options`);
        subclasses add their own and raise a ``ValueError`` naming the task and the key.
        """
        self.check_loader_options(config)

    def check_loader_options(self, config: dict[str, Any], *, task_options: Collection[str] = ()) -> list[str]:
        """Check the options of a ``custom_dataset`` loader; return the ones ``metadata`` may set.

        A loader's options are the keyword parameters it names (``n_docs``, CaTeRS ``order``, ...), set
        in the YAML's ``dataset_kwargs`` (fixed by the task) or in ``metadata`` / ``--metadata`` (run
        options); the loader is given those and nothing else (a ``**kwargs`` parameter receives nothing).
        Every ``dataset_kwargs`` key must name one of them, ``**kwargs`` or not: the task wrote it for
        this loader, so a key the loader would never see is a mistake. A ``metadata`` key that is a near
        miss of an option is an error (:func:`logic_consistency.options.reject_near_misses`, the suite's
        one rule, since ``metadata`` also carries other families' and lm-eval's keys); a key in both is
        refused, since lm-eval would stop with "got multiple values for keyword argument".

        Args:
            config: The merged task config.
            task_options: Options the task class reads itself (not loader parameters).

        Raises:
            OptionError: Naming the task, the key and the closest option.
        """
        task = config.get("task")
        metadata = config.get("metadata") or {}
        loader = config.get("custom_dataset")
        if not callable(loader):
            reject_near_misses(metadata, task_options, where=f"task {task!r}: metadata")
            return []
        named = loader_parameter_names(loader)
        dataset_kwargs = config.get("dataset_kwargs") or {}
        reject_unknown(
            dataset_kwargs,
            named,
            where=f"task {task!r}: dataset_kwargs of the loader {loader_name(loader)}",
            what="parameter",
        )
        reject_near_misses(metadata, (*task_options, *named), where=f"task {task!r}: metadata")
        _refuse_fixed_options(task, dataset_kwargs, metadata)
        return [key for key in named if key not in task_options]

    def call_loader(self, loader: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """Call a ``custom_dataset`` loader; an option error it raises names the task.

        Raises:
            OptionError: From the loader, prefixed with the task.
            ValueError: The loader returned no document (lm-eval would stop with an ``IndexError``).
        """
        try:
            with data_files.collecting() as files:
                dataset = loader(**kwargs)
        except OptionError as error:
            message = str(error)
            if not message.startswith("task "):
                message = f"task {self.config.task!r}: {message}"
            raise type(error)(message) from error
        _refuse_empty(self.config.task, dataset, loader, kwargs)
        digest = data_files.files_sha256(files.items())
        if digest is not None:  # the data folder's identity reaches the results file's configs (data_files)
            self.config.metadata = {**(self.config.metadata or {}), data_files.DATA_HASH_KEY: digest}
        return dataset

    def download(self, dataset_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """lm-eval's download; a ``custom_dataset`` loader is called through :meth:`call_loader`.

        As lm-eval 0.4.13 does, the loader's options come from ``metadata`` and ``dataset_kwargs``; unlike
        lm-eval, it gets only the keys it names (:func:`loader_parameter_names`).
        """
        loader = self.config.custom_dataset
        if not callable(loader):
            super().download(dataset_kwargs, **kwargs)
            return
        named = loader_parameter_names(loader)
        given = {**(self.config.metadata or {}), **(self.config.dataset_kwargs or {})}
        self.dataset = self.call_loader(loader, {key: value for key, value in given.items() if key in named})
        self.select_instances()

    def select_instances(self) -> None:
        """Keep the documents of the ``instance_split`` option's half (``all``: every one).

        An instance is a document's ``instance_id`` (pairwise: a SummEval article, a NovelEval query, a
        CaTeRS story) or its ``id`` (a GV question); the half depends on that id alone
        (:func:`logic_consistency.common.instance_split`).

        Raises:
            ValueError: A document has no id, or the half holds no document (names the task).
        """
        if self.instance_split == "all" or self.dataset is None:
            return
        task, split = self.config.task, self.instance_split
        selected = {name: part.select(_rows_in_half(part, task, split)) for name, part in self.dataset.items()}
        if all(len(part) == 0 for part in selected.values()):
            raise ValueError(f"task {task!r}: metadata.instance_split={split!r} leaves no document; use more documents")
        self.dataset = type(self.dataset)(selected)

    def doc_to_text(self, doc: dict[str, Any], doc_to_text: Any = None) -> str:  # noqa: D102
        if "__prompt__" in doc:
            return str(doc["__prompt__"])
        return cast(str, super().doc_to_text(doc, doc_to_text))

    def doc_to_target(self, doc: dict[str, Any], doc_to_target: Any = None) -> Any:  # noqa: D102
        if "__prompt__" in doc:
            # a formatted prompt has no target; lm-eval would compile the empty Jinja2 template
            # anew for every prompt (``utils.apply_template``), the bulk of formatting time
            return ""
        return super().doc_to_target(doc, doc_to_target)

    def build_all_requests(self, **kwargs: Any) -> None:  # noqa: D102
        self.remember_formatting(kwargs)
        super().build_all_requests(**kwargs)

    def remember_formatting(self, build_kwargs: dict[str, Any]) -> None:
        """Keep the prompt-formatting settings lm-eval passes to ``build_all_requests`` (and check ``limit``).

        lm-eval 0.4.13 turns ``--limit L`` into a document count before this call
        (``ceil(L x documents)`` for ``L < 1``, else ``int(L)``), so ``--limit 0`` arrives as 0 and
        ``--limit -1`` as minus the number of documents; neither selects any document, and lm-eval
        itself would go on with an empty or negative slice.

        Raises:
            ValueError: ``limit`` selects no document (names the task and ``--limit``).
        """
        limit = build_kwargs.get("limit")
        if limit is not None and limit < 1:
            raise ValueError(
                f"task {self.config.task!r}: --limit must select at least one document (a count >= 1, or a "
                f"fraction in (0, 1)); lm-eval turned the given --limit into {limit} documents"
            )
        self._render_kwargs = {
            key: build_kwargs.get(key)
            for key in ("system_instruction", "apply_chat_template", "fewshot_as_multiturn", "chat_template")
        }

    def request_metadata(self, construct_kwargs: Mapping[str, Any]) -> tuple[Any, Any, Any]:
        """The ``metadata`` of the requests ``construct_requests`` builds: ``(task, doc_id, repeats)``.

        lm-eval's ``build_all_requests`` passes it; a caller that does not (lm-eval's generic task
        checks, ``tests/test_tasks.py``, call ``construct_requests(doc=..., ctx=...)``) gets the task's
        name and ``repeats`` from its config and no document id, as lm-eval's own ``Instance``
        leaves ``doc_id`` unset when it is not given.
        """
        metadata = construct_kwargs.get("metadata")
        if metadata is None:
            return (self.config.task, None, self.config.repeats)
        return tuple(metadata)

    def format_prompt(self, text: str) -> str:
        """Format ``text`` as lm-eval formats a document's prompt (system prompt, chat template)."""
        render = self._render_kwargs
        return cast(
            str,
            self.fewshot_context(
                {"__prompt__": text},
                num_fewshot=0,
                system_instruction=render.get("system_instruction"),
                apply_chat_template=bool(render.get("apply_chat_template")),
                fewshot_as_multiturn=bool(render.get("fewshot_as_multiturn")),
                chat_template=render.get("chat_template"),
                gen_prefix=None,
            ),
        )

    def continuation_delimiter(self) -> str:
        """What separates a prompt from a scored continuation (nothing after a chat template)."""
        return "" if self._render_kwargs.get("apply_chat_template") else self.config.target_delimiter

    def declare_metrics(self, specs: Mapping[str, tuple[Any, bool | None]]) -> None:
        """Declare per-document metrics: ``{name: (aggregation, higher_is_better)}`` (``None``: no direction).

        Declared in code rather than a YAML ``metric_list`` when the names depend on options, and
        so that lm-eval never looks the names up on the HF evaluate hub.
        """
        self._metric_fn_list: dict[str, Any] = {}
        self._metric_fn_kwargs: dict[str, Any] = {}
        self._aggregation_list, self._higher_is_better = {}, {}
        for name, (aggregation, higher_is_better) in specs.items():
            self._metric_fn_list[name] = None
            self._metric_fn_kwargs[name] = {}
            self._aggregation_list[name] = aggregation
            self._higher_is_better[name] = higher_is_better

    def predict_only(self) -> bool:
        """Whether lm-eval runs this task with ``--predict_only`` (metrics swapped for ``bypass``)."""
        return "bypass" in self._metric_fn_list
