"""Where and in how many pieces a model of the nightly build runs: ``shards``, ``resources``, ``api_limits``.

Validates these model list keys (:mod:`.modellist` reads the file; docs/cluster.md shows them):
``shards`` (top level, per entry or ``--shards N``) splits a model into N units; ``resources`` is
what each unit asks the Ray executor for (``num_cpus``, default 1, ``num_gpus``, ``memory`` in
bytes, ``custom`` by name; the local executor ignores it); ``api_limits`` caps concurrent requests
per API endpoint (``host[:port]`` of a model's ``base_url``) over the whole cluster, a model holding
``num_concurrent`` (from its ``model_args``, default 1) of its endpoint's slots while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from logic_consistency.options import reject_unknown

__all__ = ["RESOURCE_KEYS", "check_api_limits", "check_resources", "check_shards", "endpoint_of", "slots_of"]

RESOURCE_KEYS = frozenset({"num_cpus", "num_gpus", "memory", "custom"})


def _positive(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value < math.inf


def check_shards(value: Any, where: str) -> int:
    """``shards``: a positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: 'shards' must be a positive integer, got {value!r}")
    return value


def check_resources(value: Any, where: str) -> dict[str, Any]:
    """``resources``: ``num_cpus``, ``num_gpus`` (>= 0), ``memory`` (> 0 bytes), ``custom`` {name: amount}."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: 'resources' must be a mapping, got {value!r}")
    reject_unknown(value, RESOURCE_KEYS, where=f"{where}: resources")
    out: dict[str, Any] = {}
    for key in ("num_cpus", "num_gpus"):
        if key in value:
            amount = value[key]
            if not (amount == 0 or _positive(amount)):
                raise ValueError(f"{where}: resources.{key} must be a number >= 0, got {amount!r}")
            out[key] = float(amount)
    if "memory" in value:
        if not _positive(value["memory"]):
            raise ValueError(f"{where}: resources.memory must be a positive number of bytes, got {value['memory']!r}")
        out["memory"] = float(value["memory"])
    custom = value.get("custom", {})
    if not isinstance(custom, Mapping) or not all(isinstance(k, str) and k and _positive(v) for k, v in custom.items()):
        raise ValueError(f"{where}: resources.custom must map resource names to positive amounts, got {custom!r}")
    if custom:
        out["custom"] = {key: float(amount) for key, amount in custom.items()}
    return out


def check_api_limits(value: Any, where: str) -> dict[str, int]:
    """``api_limits``: ``{host[:port]: positive integer}``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: 'api_limits' must map endpoints (host:port) to integers, got {value!r}")
    out: dict[str, int] = {}
    for endpoint, limit in value.items():
        if not isinstance(endpoint, str) or not endpoint.strip() or "/" in endpoint:
            raise ValueError(f"{where}: api_limits: key {endpoint!r} must be a host[:port] (no scheme, no path)")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"{where}: api_limits[{endpoint!r}] must be a positive integer, got {limit!r}")
        out[endpoint.strip().lower()] = limit
    return out


def endpoint_of(model_args: Mapping[str, str]) -> str | None:
    """The ``host[:port]`` of a model's ``base_url`` (lower case), or ``None`` without one."""
    base_url = model_args.get("base_url")
    if not base_url:
        return None
    return urlsplit(base_url).netloc.lower() or None


def slots_of(model_args: Mapping[str, str], where: str) -> int:
    """The concurrent requests one run of the model may have open: its ``num_concurrent`` (default 1)."""
    text = model_args.get("num_concurrent", "1")
    try:
        slots = int(text)
    except ValueError:
        raise ValueError(f"{where}: model_args num_concurrent must be an integer, got {text!r}") from None
    return max(slots, 1)
