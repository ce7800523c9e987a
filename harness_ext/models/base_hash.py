"""A base model's identity by content: the SHA-256 of its weights, read once per state of its files.

:func:`base_sha256` is :func:`.adapter_manifest.folder_sha256` (``config.json`` and every weight file, names and
bytes: an adapter manifest's ``base_sha256``), cached by each file's name, device, inode, size,
``mtime_ns`` and ``ctime_ns``: a rerun on an unchanged base reads no weight (a 60 GB base costs minutes),
and weights replaced by others, of the same size or not, change an inode, a size or a time (``ctime``
cannot be set back), so they are read again. No path is part of it: the same weights in another home
or on another machine give the same hash.

The cache is ``<cache root>/base_sha256.json`` (:func:`.models.embedded.cache_root`), at most
:data:`MAX_ENTRIES` entries of (SHA-256 of the files' identities, hash), no path. An entry that is not
64 hex digits is ignored, an unreadable cache is empty, and one that cannot be written costs a reread,
never the run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from pathlib import Path

from logic_consistency.outputs import atomic_write

from .adapter_manifest import _weights, folder_sha256

__all__ = ["CACHE_NAME", "MAX_ENTRIES", "base_sha256"]

#: The cache file in the suite's cache folder.
CACHE_NAME = "base_sha256.json"
#: The most entries kept (the latest written): a few bases, each in a few states.
MAX_ENTRIES = 256
_HEX64 = re.compile(r"[0-9a-f]{64}")


def _state_key(folder: Path) -> str:
    """The SHA-256 of the identity (not the bytes) of the files :func:`folder_sha256` reads."""
    states = []
    for path in [folder / "config.json", *_weights(folder)]:
        status = path.stat()
        states.append([path.name, status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns])
    return hashlib.sha256(json.dumps(states).encode()).hexdigest()


def _cache_file() -> Path:
    from logic_consistency.harness_ext.models.embedded import cache_root

    return cache_root() / CACHE_NAME


def _read(path: Path) -> dict[str, str]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(document, dict):
        return {}
    return {
        key: value
        for key, value in document.items()
        if isinstance(value, str) and _HEX64.fullmatch(key) and _HEX64.fullmatch(value)
    }


def base_sha256(folder: Path) -> str:
    """:func:`~.adapter_manifest.folder_sha256` of ``folder``, from the cache where its files are as they were hashed."""
    key, cache = _state_key(folder), _cache_file()
    known = _read(cache)
    if key in known:
        return known[key]
    digest = folder_sha256(folder)
    if _state_key(folder) != key:  # changed while it was read: not cached (the next call reads it again)
        return digest
    entries = [*((k, v) for k, v in known.items() if k != key), (key, digest)][-MAX_ENTRIES:]
    with contextlib.suppress(OSError, ValueError):  # a cache that cannot be written costs a reread, never the run
        cache.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cache, [json.dumps(dict(entries), indent=1).encode()])
    return digest
