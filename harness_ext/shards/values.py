"""A shard's per-document metric values as JSON that round-trips exactly, and runs no code when read.

lm-eval's aggregations receive what the tasks' ``process_results`` return: numbers, strings, ``None``,
lists, tuples, dicts and numpy scalars and arrays. JSON keeps numbers, strings, ``None``, lists and
dicts of string keys as they are; the rest is tagged with a one-key object (``{"$tuple": [...]}``,
``{"$float": "nan"}``, ``{"$np": [dtype, value]}``, ``{"$array": [dtype, shape, values]}``, ``{"$dict": [[key, value], ...]}``
for a dict whose keys are not plain strings). Only numeric and boolean numpy types are accepted
(never ``object``); any other value is refused when the file is written, naming it, so the file the
merge reads is plain data (never ``pickle``: a file a worker or a shared folder replaced would run
its code in the driver).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["decode", "dumps", "encode", "loads"]

#: numpy dtype kinds a value may have: bool, signed and unsigned integer, float.
_KINDS = "biuf"
_TAGS = ("$tuple", "$float", "$np", "$array", "$dict")


def _dtype(name: Any, where: str) -> np.dtype[Any]:
    try:
        dtype = np.dtype(str(name))
    except TypeError:
        raise ValueError(f"{where}: unknown numpy dtype {name!r}") from None
    if dtype.kind not in _KINDS:
        raise ValueError(f"{where}: numpy dtype {name!r} is not a number type")
    return dtype


#: What :func:`_encode_plain` and :func:`_encode_numpy` return for a value of another kind.
_OTHER = object()


def encode(value: Any, where: str = "value") -> Any:
    """``value`` as JSON-ready data (see the module docstring).

    Raises:
        TypeError: A value of another type (``where`` and the type named).
    """
    for encoder in (_encode_plain, _encode_numpy, _encode_container):
        encoded = encoder(value, where)
        if encoded is not _OTHER:
            return encoded
    raise TypeError(f"{where}: a value of type {type(value).__name__} cannot be written to a shard's metrics file")


def _encode_plain(value: Any, where: str) -> Any:
    """``None``, a bool, int, str or float of Python's own (a non-finite float tagged)."""
    if isinstance(value, np.generic):
        return _OTHER
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    return _OTHER


def _encode_numpy(value: Any, where: str) -> Any:
    """A numeric or boolean numpy scalar or array (never ``object``)."""
    if isinstance(value, np.generic) and value.dtype.kind in _KINDS:
        item = value.item()
        return {"$np": [value.dtype.str, item if not isinstance(item, float) or math.isfinite(item) else repr(item)]}
    if isinstance(value, np.ndarray) and value.dtype.kind in _KINDS:
        flat = [encode(item, where) for item in value.ravel().tolist()]
        return {"$array": [value.dtype.str, list(value.shape), flat]}
    return _OTHER


def _encode_container(value: Any, where: str) -> Any:
    """A tuple, list or dict, item by item (a dict whose keys are not plain strings tagged)."""
    if isinstance(value, tuple):
        return {"$tuple": [encode(item, where) for item in value]}
    if isinstance(value, list):
        return [encode(item, where) for item in value]
    if isinstance(value, dict):
        return _encode_dict(value, where)
    return _OTHER


def _encode_dict(value: dict[Any, Any], where: str) -> Any:
    """A dict as a JSON object when its keys are plain strings (no ``$`` tag), else tagged ``$dict`` pairs."""
    if all(isinstance(key, str) and not key.startswith("$") for key in value):
        return {key: encode(item, f"{where}[{key!r}]") for key, item in value.items()}
    return {"$dict": [[encode(key, where), encode(item, where)] for key, item in value.items()]}


def _float(text: Any, where: str) -> float:
    if text not in ("nan", "inf", "-inf"):
        raise ValueError(f"{where}: {text!r} is not a number")
    return float(text)


def _is_list(body: Any, length: int | None = None) -> bool:
    return isinstance(body, list) and (length is None or len(body) == length)


def _decode_dict(body: Any, where: str) -> Any:
    if not (_is_list(body) and all(_is_list(pair, 2) for pair in body)):
        return _OTHER
    return {decode(key, where): decode(item, where) for key, item in body}


def _decode_np(body: Any, where: str) -> Any:
    if not _is_list(body, 2):
        return _OTHER
    dtype = _dtype(body[0], where)
    return dtype.type(_float(body[1], where) if isinstance(body[1], str) else body[1])


def _decode_array(body: Any, where: str) -> Any:
    if not (_is_list(body, 3) and isinstance(body[1], list)):
        return _OTHER
    dtype = _dtype(body[0], where)
    items = [decode(item, where) for item in body[2]]
    return np.array(items, dtype=dtype).reshape([int(n) for n in body[1]])


#: Each tag's reader: the value, or :data:`_OTHER` for a malformed body.
_DECODERS: dict[str, Callable[[Any, str], Any]] = {
    "$tuple": lambda body, where: tuple(decode(item, where) for item in body) if _is_list(body) else _OTHER,
    "$dict": _decode_dict,
    "$float": _float,
    "$np": _decode_np,
    "$array": _decode_array,
}


def _decode_tagged(tag: str, body: Any, where: str) -> Any:
    value = _DECODERS[tag](body, where)
    if value is _OTHER:
        raise ValueError(f"{where}: malformed {tag!r} entry")
    return value


def decode(data: Any, where: str = "value") -> Any:
    """The value :func:`encode` was given (a malformed entry is a :class:`ValueError` naming ``where``)."""
    if isinstance(data, list):
        return [decode(item, where) for item in data]
    if isinstance(data, dict):
        if len(data) == 1 and next(iter(data)) in _TAGS:
            ((tag, body),) = data.items()
            return _decode_tagged(tag, body, where)
        return {key: decode(item, where) for key, item in data.items()}
    return data


def dumps(value: Any, where: str) -> str:
    """:func:`encode` then strict JSON (no ``NaN`` literal)."""
    return json.dumps(encode(value, where), allow_nan=False, ensure_ascii=False)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise ValueError(f"key {twice[0]!r} given twice")
    return dict(pairs)


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def loads(text: str, where: str) -> Any:
    """Strict JSON (no duplicate key, no ``NaN`` literal), then :func:`decode`; errors name ``where``."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except ValueError as error:
        raise ValueError(f"{where}: not a shard metrics file ({error})") from None
    return decode(data, where)
