"""Where and in how many pieces a model of the nightly build runs: ``shards``, ``resources``, ``api_limits``.

Validates these model list keys (:mod:`.modellist` reads the file; docs/cluster.md shows them):
``shards`` (top level, per entry or ``--shards N``) splits a model into N units; ``resources`` is
what each unit asks the Ray executor for (``num_cpus``, default 1, ``num_gpus``, ``memory`` in
bytes, ``custom`` by name; the local executor ignores it); ``api_limits`` caps concurrent requests
per API endpoint (``host:port`` of a model's ``base_url``, normalised: :func:`normalise_endpoint`) over
the whole cluster, a model holding
``num_concurrent`` (from its ``model_args``, default 1) of its endpoint's slots while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import SplitResult, urlsplit

from logic_consistency.harness_ext.jobs.ray_session import RayClusterError
from logic_consistency.options import check_flag, reject_unknown

__all__ = [
    "RESOURCE_KEYS",
    "capped_shards",
    "check_api_limits",
    "check_feasible",
    "check_resources",
    "check_shards",
    "demand",
    "endpoint_of",
    "normalise_endpoint",
    "optional_mapping",
    "slots_of",
    "unit_resources",
    "unmatched_limits",
]

RESOURCE_KEYS = frozenset({"num_cpus", "num_gpus", "memory", "custom"})


def _positive(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value < math.inf


def optional_mapping(value: Any, key: str, where: str, what: str = "a mapping") -> Mapping[str, Any]:
    """A model list key that holds a mapping or nothing (``None``: an empty one); else an error naming it."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: '{key}' must be {what}, got {value!r}")
    return value


def check_shards(value: Any, where: str) -> int:
    """``shards``: an integer in its declared bounds (``harness_ext/_options_yaml``, as ``plan --shards``)."""
    shards: int = check_flag("shards", value, label="'shards'", where=where)
    return shards


def capped_shards(shards: int, limit: float | None) -> int:
    """``shards``, at most ``limit`` when it is a count of documents (every task evaluates at most that
    many, so a shard past it would start ``lm_eval`` and build the model for no document)."""
    if limit is None or limit < 1:  # no limit, or a fraction of each task's documents
        return shards
    return max(1, min(shards, int(limit)))


def check_resources(value: Any, where: str) -> dict[str, Any]:
    """``resources``: ``num_cpus``, ``num_gpus`` (>= 0), ``memory`` (> 0 bytes), ``custom`` {name: amount}."""
    value = optional_mapping(value, "resources", where)
    reject_unknown(value, RESOURCE_KEYS, where=f"{where}: resources")
    out: dict[str, Any] = _processors(value, where)
    if "memory" in value:
        out["memory"] = _memory(value["memory"], where)
    custom = _custom_resources(value.get("custom", {}), where)
    if custom:
        out["custom"] = custom
    return out


def _processors(resources: Mapping[str, Any], where: str) -> dict[str, float]:
    """``num_cpus`` and ``num_gpus`` where given: numbers >= 0."""
    out: dict[str, float] = {}
    for key in ("num_cpus", "num_gpus"):
        if key in resources:
            amount = resources[key]
            if not (amount == 0 or _positive(amount)):
                raise ValueError(f"{where}: resources.{key} must be a number >= 0, got {amount!r}")
            out[key] = float(amount)
    return out


def _memory(memory: Any, where: str) -> float:
    """``memory``: a positive number of bytes (a hint where YAML read an exponent as text)."""
    if not _positive(memory):
        hint = " (YAML reads 200e9 as text: write 2.0e+11)" if isinstance(memory, str) else ""
        raise ValueError(f"{where}: resources.memory must be a positive number of bytes, got {memory!r}{hint}")
    return float(memory)


def _custom_resources(custom: Any, where: str) -> dict[str, float]:
    """``custom``: resource names to positive amounts."""
    if not isinstance(custom, Mapping) or not all(isinstance(k, str) and k and _positive(v) for k, v in custom.items()):
        raise ValueError(f"{where}: resources.custom must map resource names to positive amounts, got {custom!r}")
    return {key: float(amount) for key, amount in custom.items()}


#: Default ports of the schemes a ``base_url`` or an ``api_limits`` key may name.
DEFAULT_PORTS = {"http": 80, "https": 443}
#: Names of this machine's loopback interface: one endpoint.
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def normalise_endpoint(text: str, *, default_scheme: str | None = None) -> str:
    """``host:port`` of an endpoint: host in lower case (``localhost``, ``127.0.0.1`` and ``::1`` are
    ``127.0.0.1``), the port explicit or the scheme's default (443 for https, 80 for http).

    ``text`` is a URL (``https://host[:port][/path]``) or, with ``default_scheme=None``, ``host:port``.

    Raises:
        ValueError: No host, a scheme other than http(s), a bad port, or (without a scheme) no port;
            the message says which.
    """
    url = urlsplit(text if "://" in text else f"//{text}")
    scheme = _checked_scheme(url, default_scheme)
    port = _explicit_port(url)
    host = (url.hostname or "").lower()
    if not host:
        raise ValueError("it names no host")
    if port is None:
        port = _default_port(scheme)
    host = "127.0.0.1" if host in LOOPBACK else host
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _checked_scheme(url: SplitResult, default_scheme: str | None) -> str | None:
    """The URL's scheme (else ``default_scheme``) in lower case: http, https or none."""
    scheme = url.scheme.lower() or default_scheme
    if scheme is not None and scheme not in DEFAULT_PORTS:
        raise ValueError(f"scheme {url.scheme!r} is not http or https")
    return scheme


def _explicit_port(url: SplitResult) -> int | None:
    """The port the URL names, if any."""
    try:
        return url.port
    except ValueError:
        raise ValueError("its port is not a number from 0 to 65535") from None


def _default_port(scheme: str | None) -> int:
    """The default port of ``scheme``; without a scheme the port must be written."""
    if scheme is None:
        raise ValueError("it names no port: write host:port, or https://host for port 443")
    return DEFAULT_PORTS[scheme]


def check_api_limits(value: Any, where: str) -> dict[str, int]:
    """``api_limits``: ``{endpoint: positive integer}``, each key an endpoint ``host:port`` or
    ``http(s)://host[:port]`` (no path), returned normalised (:func:`normalise_endpoint`)."""
    value = optional_mapping(value, "api_limits", where, "a mapping of endpoints (host:port) to integers")
    out: dict[str, int] = {}
    for endpoint, limit in value.items():
        if not isinstance(endpoint, str) or not endpoint.strip() or "/" in endpoint.partition("://")[2]:
            raise ValueError(
                f"{where}: api_limits: key {endpoint!r} must be a host:port or scheme://host[:port] (no path)"
            )
        try:
            key = normalise_endpoint(endpoint.strip())
        except ValueError as error:
            raise ValueError(f"{where}: api_limits: key {endpoint!r}: {error}") from None
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"{where}: api_limits[{endpoint!r}] must be a positive integer, got {limit!r}")
        if key in out:
            raise ValueError(f"{where}: api_limits: key {endpoint!r} names the endpoint {key} twice")
        out[key] = limit
    return out


def endpoint_of(model_args: Mapping[str, str]) -> str | None:
    """The normalised ``host:port`` of a model's ``base_url`` (:func:`normalise_endpoint`), or ``None``
    without one (or with one that names no http(s) endpoint: lm-eval refuses it)."""
    base_url = model_args.get("base_url")
    if not base_url or "://" not in base_url:
        return None
    try:
        return normalise_endpoint(base_url)
    except ValueError:
        return None


def slots_of(model_args: Mapping[str, str], where: str) -> int:
    """The concurrent requests one run of the model may have open: its ``num_concurrent`` (default 1)."""
    text = model_args.get("num_concurrent", "1")
    try:
        slots = int(text)
    except ValueError:
        raise ValueError(f"{where}: model_args num_concurrent must be an integer, got {text!r}") from None
    return max(slots, 1)


def unmatched_limits(limits: Mapping[str, int], endpoints: set[str | None], where: str) -> None:
    """Refuse an ``api_limits`` key that matches no model's endpoint (a cap that would never apply)."""
    unmatched = sorted(set(limits) - endpoints)
    if unmatched:
        known = sorted(endpoint for endpoint in endpoints if endpoint)
        raise ValueError(
            f"{where}: api_limits: {', '.join(unmatched)} matches no model's base_url endpoint "
            f"(the models' endpoints: {known or 'none'}); a limit that applies to nothing is a typo"
        )


def demand(resources: Mapping[str, Any]) -> dict[str, float]:
    """What one unit with the model list's ``resources`` asks a node for, in Ray's names (``CPU``,
    default 1; ``GPU``, ``memory``, custom), the amounts it asks none of left out."""
    asked = {
        "CPU": resources.get("num_cpus", 1.0),
        "GPU": resources.get("num_gpus", 0.0),
        "memory": resources.get("memory", 0.0),
        **resources.get("custom", {}),
    }
    return {name: float(amount) for name, amount in asked.items() if amount}


def unit_resources(resources: Mapping[str, Any]) -> dict[str, float]:
    """The resources of one unit as the executor asks Ray for them: ``CPU`` always (``num_cpus: 0`` too),
    the others where the model list names them."""
    names = {"num_gpus": "GPU", "memory": "memory"}
    asked = {"CPU": float(resources.get("num_cpus", 1.0))}
    asked |= {names[key]: float(resources[key]) for key in names if key in resources}
    return asked | {name: float(amount) for name, amount in resources.get("custom", {}).items()}


def check_feasible(nodes: Sequence[Mapping[str, float]], specs: Sequence[Any]) -> None:
    """Refuse, before any unit runs, a model whose unit no node (``nodes``: the alive ones' resources) can
    ever hold.

    Ray would keep such a task pending forever (it cannot know whether a node will join). The check
    is against the nodes alive now: on an autoscaling cluster, start the node type first.

    Raises:
        RayClusterError: Naming the model and the resources no node has enough of.
    """
    for spec in specs:
        asked = demand(spec.resources)
        if not any(all(node.get(name, 0.0) >= amount for name, amount in asked.items()) for node in nodes):
            raise RayClusterError(
                f"{spec.name}: no node of the Ray cluster ({len(nodes)} alive) can ever run its units, "
                f"which ask for {_shortfall(asked, nodes)}; lower the model's resources or add such a node"
            )


def _shortfall(asked: Mapping[str, float], nodes: Sequence[Mapping[str, float]]) -> str:
    """The resources no node has enough of, each with the largest node's amount (all of them when each
    is somewhere, but never together)."""
    largest = {name: max((node.get(name, 0.0) for node in nodes), default=0.0) for name in asked}
    short = [name for name, amount in asked.items() if largest[name] < amount] or sorted(asked)
    return ", ".join(f"{name} {asked[name]:g} (largest node: {largest[name]:g})" for name in short)
