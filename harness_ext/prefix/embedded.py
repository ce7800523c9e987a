"""``lc-embedded``: the prefix-sharing ``lc-hf`` backend on an embedded model (``--model_args model=NAME``).

It lives with ``lc-hf`` rather than with the embedded models (``models/``), because it is a backend
built on :class:`~logic_consistency.harness_ext.prefix.scorer.PrefixSharingHFLM`; ``models/`` (the
embedded models and the declared arguments) is the room below, which knows no backend class.
"""

from __future__ import annotations

from typing import Any

from logic_consistency.harness_ext.models.args import parse_model_args
from logic_consistency.harness_ext.models.embedded import DEFAULT_MODEL, resolve
from logic_consistency.harness_ext.prefix.backend import LC_EMBEDDED
from logic_consistency.harness_ext.prefix.scorer import PrefixSharingHFLM

__all__ = ["EmbeddedHFLM"]


class EmbeddedHFLM(PrefixSharingHFLM):
    """The suite's ``lc-hf`` model (prefix-sharing ``HFLM``) on an embedded model: ``lc-embedded``.

    ``--model_args model=gemma-3-270m`` picks the model; every other argument is passed to
    ``lc-hf`` unchanged (``prefix_sharing=false`` gives lm-eval's stock ``hf`` scoring). A ``batch_size`` (or ``max_batch_size``, ``device``) given in
    ``--model_args`` takes precedence over the command-line flag of the same name; lm-eval 0.4.13
    itself would stop with "got multiple values for keyword argument" there, because
    ``--batch_size`` always has a value (default 1).
    """

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict[str, Any], additional_config: dict[str, Any] | None = None) -> Any:  # noqa: D102
        extra = {k: v for k, v in (additional_config or {}).items() if v is not None and k not in arg_dict}
        return cls(**arg_dict, **extra)

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict[str, Any] | None = None) -> Any:  # noqa: D102
        return cls.create_from_arg_obj(parse_model_args(arg_string), additional_config)

    def __init__(self, **kwargs: Any) -> None:
        kwargs = LC_EMBEDDED.check(kwargs)  # declared in prefix/backend.py; before the model is resolved or loaded
        model = kwargs.pop("model", DEFAULT_MODEL)
        kwargs.setdefault("dtype", "float32")
        super().__init__(pretrained=str(resolve(model)), **kwargs)
