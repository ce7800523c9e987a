"""The suite's one validator of declared arguments (:class:`Declaration`, :func:`check_declared`), and
``--gen_kwargs``'s declaration.

A backend declares its ``--model_args`` in its own module, as a :class:`Declaration` inside its
:class:`~logic_consistency.harness_ext.models.backend.Backend` (``chat/backend.py``,
``prefix/backend.py``): its arguments once (name, type, bounds or choices, default, meaning) and the
names it passes on to lm-eval's parent class unchecked, which this module lists for lm-eval's
``TemplateAPI`` and ``HFLM``. :func:`check_declared` reads a declaration before anything loads. A
mistyped argument is an error naming the closest one (``max_token`` -> ``max_tokens``): ``lc-chat``
refuses every unknown and every credential-like name; ``lc-hf`` and ``lc-embedded`` pass unknown
names on to transformers' ``from_pretrained`` but refuse a near miss of a known one (``dtyp``).

This module imports neither lm-eval nor torch. The names passed on are lm-eval 0.4.13's
(``tests/harness_ext/test_model_args.py`` pins them against its signatures).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from logic_consistency.credentials import is_key_name
from logic_consistency.options import (
    TYPO_CUTOFF,
    Declared,
    OptionError,
    check_value,
    compact_name,
    parse_text,
    unique_keys,
)


def _where(where: str | None) -> str:
    return f"{where}: " if where else ""


@dataclass(frozen=True)
class Declaration:
    """The arguments one component takes, as data for :func:`check_declared`.

    Attributes:
        where: How errors name the source (``"lc-chat --model_args"``).
        declared: Arguments checked (type, bounds, choices) and converted.
        passed: Other accepted names, passed on unchecked (a parent class checks them).
        refused: Names refused outright, each with the reason and what to do instead.
        unknown: ``"refuse"``: any other name is an error; ``"near_miss"``: only a name close to a
            known one is (:data:`TYPO_CUTOFF`), others pass on (to a library that takes any keyword).
        credentials: Where a credential belongs; any other credential-like name is refused with it.
    """

    where: str
    declared: tuple[Declared, ...]
    passed: frozenset[str] = frozenset()
    refused: Mapping[str, str] = field(default_factory=dict)
    unknown: Literal["refuse", "near_miss"] = "refuse"
    credentials: str | None = None

    def __post_init__(self) -> None:  # each declared argument is listed as what it is
        declared = tuple(replace(arg, applies="backend argument") for arg in self.declared)
        object.__setattr__(self, "declared", declared)

    @property
    def known(self) -> list[str]:
        """Every accepted name, sorted."""
        return sorted({arg.name for arg in self.declared} | self.passed)


def typo_of(name: str, declaration: Declaration) -> list[str]:
    """The declared name that ``name`` mistypes (``Max_Tokens``, ``max-tokens``, ``max_token``), if one."""
    same = [known for known in declaration.known if compact_name(known) == compact_name(name)]
    return same or difflib.get_close_matches(name, declaration.known, n=1, cutoff=TYPO_CUTOFF)


def _unknown(name: str, declaration: Declaration) -> None:
    """Raise for a name the declaration does not accept (``near_miss``: only a close one).

    A typo of a known name (``max_token``) is named as one before a credential-like name is refused.
    """
    where = declaration.where
    if name in declaration.refused:
        raise OptionError(f"{_where(where)}{name} is refused: {declaration.refused[name]}")
    typo = typo_of(name, declaration)
    if not typo and declaration.credentials and is_key_name(name):  # the one vocabulary of names
        raise OptionError(
            f"{_where(where)}{name} is refused: a credential is never an argument; {declaration.credentials}"
        )
    near = typo or (difflib.get_close_matches(name, declaration.known, n=1) if declaration.unknown == "refuse" else [])
    if near:
        raise OptionError(f"{_where(where)}unknown argument {name!r}; did you mean {near[0]!r}?")
    if declaration.unknown == "refuse":
        raise OptionError(f"{_where(where)}unknown argument {name!r}; known: {declaration.known}")


def check_declared(values: Mapping[str, Any], declaration: Declaration, *, text: bool = False) -> dict[str, Any]:
    """Check ``values`` against ``declaration`` with the suite's one validator (:func:`~logic_consistency.options.check_value`:
    strict types, ``"5"`` is not an integer); return them, the declared ones as checked.

    ``text``: the values are text typed by a user (``--train-args lr=1e-4``), each declared one typed
    once by its declaration (:func:`~logic_consistency.options.parse_text`) before the same check.
    ``--model_args`` strings are typed by lm-eval's parser before they arrive here.

    Raises:
        OptionError: A refused or unknown name (naming the closest known one), or a value out of
            bounds or choices; :class:`OptionTypeError` for a value of the wrong type.
    """
    declared = {arg.name: arg for arg in declaration.declared}
    out = dict(values)
    for name, value in values.items():
        if name in declared:
            check = parse_text if text and isinstance(value, str) else check_value
            out[name] = check(value, declared[name], where=declaration.where)
        elif name in declaration.refused or name not in declaration.passed:
            _unknown(name, declaration)
    return out


#: Arguments of lm-eval 0.4.13's ``TemplateAPI``/``LocalChatCompletion`` (lc-chat's parent) it checks itself,
#: plus ``device``/``max_batch_size``, which lm-eval's command line passes to every model.
_API_PASSED = frozenset(
    {
        "model", "pretrained", "base_url", "tokenizer", "tokenizer_backend", "truncate", "max_gen_toks",
        "batch_size", "seed", "max_length", "add_bos_token", "custom_prefix_token_id", "tokenized_requests",
        "trust_remote_code", "revision", "use_fast_tokenizer", "verify_certificate", "ca_cert_path",
        "eos_string", "header", "max_images", "think_end_token", "device", "max_batch_size",
    }
)  # fmt: skip
#: Arguments of lm-eval 0.4.13's ``HFLM`` (lc-hf's parent).
_HF_PASSED = frozenset(
    {
        "pretrained", "backend", "revision", "subfolder", "tokenizer", "truncation", "logits_cache",
        "max_length", "device", "dtype", "softmax_dtype", "mixed_precision_dtype", "batch_size",
        "max_batch_size", "trust_remote_code", "use_fast_tokenizer", "add_bos_token", "prefix_token_id",
        "parallelize", "max_memory_per_gpu", "max_cpu_memory", "offload_folder", "tp_plan", "peft", "delta",
        "autogptq", "gptqmodel", "gguf_file", "think_end_token", "enable_thinking", "chat_template_args",
    }
)  # fmt: skip

#: lm-eval's API arguments a written file may record: not ``header`` (credentials) nor ``ca_cert_path`` (a
#: local path); for lm-eval's API backends and for ``lc-chat`` (``publish/allowlist.py``).
_API_PUBLIC = _API_PASSED - {"header", "ca_cert_path"}
#: lm-eval's ``hf`` arguments a written file may record: not ``offload_folder`` (a local path).
_HF_PUBLIC = _HF_PASSED - {"offload_folder"}

#: ``--gen_kwargs``: the generation keys lm-eval 0.4.13 and the suite's backends consume (issue 46).
#: ``normalize_gen_kwargs`` and ``HFLM``/``lc-hf``'s ``generate_until`` read ``until``, ``max_gen_toks``
#: (aliases ``max_new_tokens``, ``max_tokens``, ``max_completion_tokens``), ``do_sample`` and
#: ``temperature`` and hand the rest to ``generate``; ``local-completions``, ``local-chat-completions``
#: and ``lc-chat`` (``_create_payload``) send the rest as request fields. Only the sampling settings
#: below are passed on; any other key (``github_token``, ``jwt``, ...) is refused before any call.
GEN_KWARGS = Declaration(
    where="--gen_kwargs",
    declared=(
        Declared("max_gen_toks", int, None, "tokens a generation may have at most", 1),
        Declared("do_sample", bool, None, "sample (true) or decode greedily (false)"),
        Declared("temperature", float, None, "sampling temperature (0: greedy)", 0),
        Declared("top_p", float, None, "nucleus sampling: the smallest set of tokens with this probability", 0, 1),
        Declared("top_k", int, None, "sample among this many most likely tokens", 0),
        Declared("seed", int, None, "the sampler's seed (lm-eval's API models send it)", 0),
    ),
    passed=frozenset(
        {
            "until",
            "max_new_tokens",
            "max_tokens",
            "max_completion_tokens",
            "min_p",
            "typical_p",
            "num_beams",
            "repetition_penalty",
            "length_penalty",
            "no_repeat_ngram_size",
            "frequency_penalty",
            "presence_penalty",
        }
    ),  # fmt: skip
)


def refuse_empty_stop(until: Any, *, where: str) -> None:
    """Refuse an empty stop string (``--gen_kwargs until=``, ``until: ["", ...]``) on every backend.

    lm-eval 0.4.13 gives it two meanings: ``HFLM``'s stopping criterion finds ``""`` in any text, so stock
    ``hf`` ends the generation after its first token, while its ``postprocess_generated_text`` skips ``""``
    ("ignore '' separator") and lm-eval's API models send it to the endpoint, whose reading is its own. No
    backend can mean what every other means by it, so it is refused, before any call.

    Raises:
        OptionError: Naming ``where`` and the stop strings given.
    """
    stops = [until] if isinstance(until, str) else until if isinstance(until, list) else []
    if "" in stops:
        raise OptionError(
            f"{where}: an empty stop string ({until!r}) is refused on every backend: stock hf ends each generation "
            "after its first token on it, lm-eval's post-processing skips it and the API backends leave it to the "
            "endpoint; leave until out or give non-empty stop strings"
        )


def check_gen_kwargs(gen_kwargs: str | Mapping[str, Any] | None, *, where: str = "lm_eval --gen_kwargs") -> None:
    """Refuse, before any call, a ``--gen_kwargs`` key that :data:`GEN_KWARGS` does not declare, a key given
    twice in its JSON object and an empty stop string (:func:`refuse_empty_stop`).

    A key is sent to the model (an API request's field) and recorded in every results file, so it is
    declared or refused, never judged by how its name looks.

    Raises:
        OptionError: Naming the key and the allowed ones, or a declared key's bad value.
    """
    if not gen_kwargs:
        return
    if isinstance(gen_kwargs, Mapping):
        given = dict(gen_kwargs)
    elif str(gen_kwargs).lstrip().startswith("{"):
        try:
            given = json.loads(str(gen_kwargs), object_pairs_hook=lambda pairs: unique_keys(pairs, where=where))
        except json.JSONDecodeError as error:
            raise OptionError(f"{where}: not valid JSON ({error.msg})") from None
    else:
        given = parse_model_args(str(gen_kwargs))
    refuse_empty_stop(given.get("until"), where=f"{where}: until")
    unknown = sorted(str(name) for name in given if name not in GEN_KWARGS.known)
    if unknown:
        raise OptionError(
            f"{where}: {', '.join(map(repr, unknown))} {'is not a generation key' if len(unknown) == 1 else 'are not generation keys'} "
            "lm-eval or the suite's backends declare (refused before any call: it would be sent to the model and "
            f"written to every results file); allowed: "
            f"{', '.join(GEN_KWARGS.known)}"
        )
    check_declared(given, replace(GEN_KWARGS, where=where))


def split_model_args(model_args: str | None) -> list[tuple[str, str | None]]:
    """``name=value,...`` (lm-eval's ``--model_args``, ``--gen_kwargs``) as ``(name, value as text)`` pairs
    in order, names and values stripped; ``None`` for a part without ``=``; blank parts skipped.

    The one reading of the text form: the typed parse (:func:`parse_model_args`), the allowlist and
    the board's model identity all start from it.
    """
    pairs: list[tuple[str, str | None]] = []
    for part in (model_args or "").split(","):
        if part.strip():
            name, sep, value = part.partition("=")
            pairs.append((name.strip(), value.strip() if sep else None))
    return pairs


def parse_model_args(model_args: str) -> dict[str, Any]:
    """``--model_args`` as lm-eval parses it (``a=1,b=true`` -> ``{"a": 1, "b": True}``)."""
    from lm_eval.utils import simple_parse_args_string  # lm-eval only when a string is parsed

    names = [name for name, _ in split_model_args(model_args)]
    unique_keys(((name, None) for name in names), where="--model_args")  # lm-eval keeps the last silently
    try:
        parsed: dict[str, Any] = simple_parse_args_string(model_args or "")
    except ValueError as error:
        raise OptionError(f"--model_args {model_args!r} is not name=value,...: {error}") from None
    return parsed
