"""Neutral helpers every layer may import: reading the suite's inputs, and seeded randomness.

This module imports nothing of the suite (see the layering rule in the README's layout section), so
``metrics``' callers, ``harness_ext``, ``tasks`` and ``leaderboard`` can all use it. Writing files is
the other neutral module's job (:mod:`logic_consistency.outputs`).

``lm_eval ... --log_samples --output_path DIR`` writes ``DIR/<model>/samples_<task>_<timestamp>.jsonl``,
one JSON object per document; :func:`read_samples` reads them. Every text file is read through
:func:`text_lines`, whose errors name the file, the line and the byte offset. The per-instance
generator :func:`instance_rng` makes every seeded draw (item subsets, shuffles) the same on every
machine and run; :func:`context_value` scopes a context variable to a block. No lm-eval import here.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import io
import json
import logging
import os
import re
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import jsonlines
import numpy as np
import yaml

__all__ = [
    "RESULTS_PATTERN",
    "SAMPLES_FILE",
    "JsonLineError",
    "SymlinkLoopError",
    "TextDecodeError",
    "check_link_loop",
    "context_value",
    "files_or_folders",
    "find_files",
    "instance_rng",
    "instance_split",
    "load_yaml",
    "read_jsonl",
    "read_samples",
    "read_text",
    "text_lines",
    "select_item_indices",
    "task_of_samples_file",
]


logger = logging.getLogger("logic_consistency")

#: ``samples_<task>_<timestamp>.jsonl`` as lm-eval 0.4.13 names them.
SAMPLES_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")


def task_of_samples_file(path: Path) -> str | None:
    """The task name in a ``samples_<task>_<timestamp>.jsonl`` file name, or ``None``."""
    match = SAMPLES_FILE.match(Path(path).name)
    return match.group("task") if match else None


class JsonLineError(ValueError):
    """A line of a JSONL file is not valid JSON (``problem`` says why; ``line`` is 1-based)."""

    def __init__(self, path: Path, line: int, problem: str) -> None:
        self.path, self.line, self.problem = path, line, problem
        super().__init__(f"{path} line {line}: {problem}")


class TextDecodeError(ValueError):
    """A text file holds bytes that are not valid in its encoding (names file, line and byte offset)."""

    def __init__(self, path: Path, line: int, offset: int, encoding: str, reason: str) -> None:
        self.path, self.line, self.offset = path, line, offset
        super().__init__(
            f"{path} line {line} (byte offset {offset}): not valid {encoding.upper()} ({reason}); "
            f"save the file as {encoding.upper()}"
        )


class SymlinkLoopError(ValueError):
    """A path whose symbolic links lead back to themselves (one line naming it; no traceback)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        super().__init__(
            f"{path}: a symbolic link loop (its links lead back to themselves: too many levels of symbolic "
            "links); fix or remove the link"
        )


def check_link_loop(path: str | os.PathLike[str]) -> None:
    """Raise :class:`SymlinkLoopError` naming ``path`` if resolving it loops (``ELOOP``).

    ``Path.is_file`` / ``exists`` answer ``False`` for a loop (so a reader would say "not found"),
    ``Path.resolve`` raises ``RuntimeError`` and ``open`` an ``OSError``: every reader of the suite
    calls this first, so a loop is one line naming the path, whichever command met it.
    """
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise SymlinkLoopError(path) from None


def _open_binary(path: Path) -> io.BufferedReader:
    check_link_loop(path)
    try:
        return path.open("rb")
    except PermissionError as error:
        raise PermissionError(error.errno, f"{path}: cannot read the file: permission denied", str(path)) from None
    except IsADirectoryError as error:
        raise IsADirectoryError(error.errno, f"{path}: is a folder, expected a file", str(path)) from None


def text_lines(
    path: str | os.PathLike[str], *, encoding: str = "utf-8", strip_bom: bool = True
) -> Generator[str, None, None]:
    """Yield the lines of a text file with their line endings, as ``open(path, newline="")`` would.

    The suite's one reader of text files: a byte that is not valid ``encoding`` raises
    :class:`TextDecodeError` naming the file, the line and the byte offset (a bare
    ``UnicodeDecodeError`` names neither), and a file that cannot be read raises a
    ``PermissionError`` naming it. A UTF-8 byte order mark is dropped unless ``strip_bom`` is false
    (brat offsets count it). Lines are decoded one by one
    (a ``\n`` byte is never part of a multi-byte UTF-8 character), so large files stream.

    Raises:
        FileNotFoundError / PermissionError / IsADirectoryError: naming the file.
        TextDecodeError: A byte sequence is not valid ``encoding``.
    """
    source = Path(path)
    with _open_binary(source) as handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as error:
                raise TextDecodeError(source, number, offset + error.start, encoding, error.reason) from None
            if number == 1 and strip_bom and line.startswith("\ufeff"):
                line = line[1:]
            offset += len(raw)
            yield line


def read_text(path: str | os.PathLike[str], *, encoding: str = "utf-8", strip_bom: bool = True) -> str:
    """The whole text of a file through :func:`text_lines` (line endings kept, errors name the file)."""
    return "".join(text_lines(path, encoding=encoding, strip_bom=strip_bom))


class _UniqueKeyLoader(yaml.SafeLoader):  # type: ignore[misc]  # no PyYAML stubs: Any under --strict
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        repeated = sorted({str(key) for key in keys if keys.count(key) > 1})
        if repeated:
            # the mark is the second occurrence's line (the one a hand edit added), the first's is named too
            again = next(n for n, key in enumerate(keys) if key in keys[:n])
            first = node.value[keys.index(keys[again])][0].start_mark.line + 1
            raise yaml.constructor.ConstructorError(
                None, None, f"key(s) {repeated} given twice (first on line {first})", node.value[again][0].start_mark
            )
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str, *, max_nodes: int | None = None) -> Any:
    """Parse YAML safely, refusing a key given twice in one mapping (a hand edit PyYAML would hide).

    Args:
        text: The YAML.
        max_nodes: If given, refuse a document that holds more nodes than this once its aliases are
            expanded (an "alias bomb": a few lines of aliases of aliases that expand to billions of
            values when the result is walked, e.g. written out as JSON).

    Raises:
        yaml.YAMLError: Malformed YAML, a repeated key or too many nodes (the message gives the line).
    """
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if max_nodes is not None:
            _check_expanded_size(node, max_nodes)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _yaml_children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _check_expanded_size(root: yaml.Node, limit: int) -> None:
    """Raise if ``root`` expands to more than ``limit`` nodes (a shared node counted per use) or is recursive."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:  # post-order, without recursion (a deeply nested document must not overflow the stack)
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if not children_done:
            if id(node) in on_path:
                raise yaml.constructor.ConstructorError(None, None, "an alias refers to itself", node.start_mark)
            on_path.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in _yaml_children(node))
            continue
        on_path.discard(id(node))
        sizes[id(node)] = 1 + sum(sizes[id(child)] for child in _yaml_children(node))
        if sizes[id(node)] > limit:
            raise yaml.constructor.ConstructorError(
                None, None, f"more than {limit} values once its aliases are expanded (an alias bomb?)", node.start_mark
            )


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, value)`` for each non-blank line of a JSONL file (``jsonlines``).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        JsonLineError: A line is not valid JSON (names the file and the line).
    """
    source = Path(path)
    current = 0

    def numbered() -> Iterator[str]:
        nonlocal current
        for current, line in enumerate(text_lines(source), start=1):  # noqa: B007 - read by the outer loop
            yield line

    reader = jsonlines.Reader(numbered())
    try:
        for value in reader.iter(skip_empty=True, allow_none=True):
            yield current, value
    except jsonlines.InvalidLineError as error:
        cause = error.__cause__
        detail = cause.msg if isinstance(cause, json.JSONDecodeError) else str(error)
        raise JsonLineError(source, current, f"not valid JSON ({detail})") from None


#: lm-eval's results files (written under ``--output_path``), as a glob.
RESULTS_PATTERN = "results_*.json"


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks (a weight file need not fit in memory twice).

    Written here, not ``hashlib.file_digest``: that is Python 3.11+, and the suite supports 3.10.
    """
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_Value = TypeVar("_Value")


@contextlib.contextmanager
def context_value(variable: contextvars.ContextVar[_Value | None], value: _Value) -> Iterator[_Value]:
    """``variable`` holds ``value`` (yielded) while the block runs, and what it held before after it.

    Written here, not ``with variable.set(value):``: a token is a context manager from Python 3.14 on,
    and the suite supports 3.10.
    """
    token = variable.set(value)
    try:
        yield value
    finally:
        variable.reset(token)


def find_files(folder: str | os.PathLike[str], pattern: str) -> list[Path]:
    """Files matching ``pattern`` anywhere below ``folder``, by file name, then path.

    lm-eval stamps its output names with the time, so name order is oldest first.
    """
    return sorted(Path(folder).rglob(pattern), key=lambda path: (path.name, str(path)))


def files_or_folders(paths: Iterable[str | os.PathLike[str]], pattern: str) -> list[Path]:
    """Each file named, and for each folder named the files matching ``pattern`` below it; each file once.

    A file named twice, or named and also inside a named folder (or reached through a link), is
    used once, in its first place, and a warning says which (logger ``logic_consistency``): counting
    it twice would inflate every count and p-value computed from the inputs.

    Raises:
        FileNotFoundError: A path is neither a file nor a folder (the path named).
        SymlinkLoopError: A path, or a matching file in a folder, is a symbolic link loop (named).
        ValueError: A folder holds no file matching ``pattern`` (the folder named).
    """
    files: list[Path] = []
    first: dict[Path, Path] = {}
    repeated: list[str] = []
    for given in paths:
        path = Path(given)
        check_link_loop(path)
        if path.is_dir():
            found = find_files(path, pattern)
            if not found:
                raise ValueError(f"{path}: no {pattern} file in this folder")
        elif path.is_file():
            found = [path]
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
        for file in found:
            check_link_loop(file)
            key = file.resolve()
            if key in first:
                repeated.append(str(file) if file == first[key] else f"{file} (= {first[key]})")
                continue
            first[key] = file
            files.append(file)
    if repeated:
        logger.warning("%d input file(s) given more than once, used once: %s", len(repeated), ", ".join(repeated))
    return files


def read_samples(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, sample)`` for each non-blank line of a samples file.

    Args:
        path: A ``samples_<task>_<timestamp>.jsonl`` file.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: A line is not a JSON object (the message names file and line).
    """
    for number, sample in read_jsonl(path):
        if not isinstance(sample, dict):
            raise ValueError(f"{path} line {number}: must be a JSON object")
        yield number, sample


def instance_rng(seed: int, instance_id: str, purpose: str) -> np.random.Generator:
    """A generator that depends only on ``seed``, ``instance_id`` and ``purpose``.

    Python's ``hash()`` of a string changes between interpreter runs (hash randomisation), so a
    SHA-256 digest is used instead; the result is the same on every machine and run. ``purpose``
    separates independent draws for one instance (e.g. the CaTeRS shuffle and the item cap), so that
    changing one does not change the other.
    """
    digest = hashlib.sha256(f"{purpose}\x00{instance_id}".encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


#: The values of the ``instance_split`` option (declared in ``harness_ext/_options_yaml``).
INSTANCE_SPLITS = ("train", "test", "all")


def instance_split(instance_id: str) -> str:
    """``"train"`` or ``"test"``: the half of the instances ``instance_id`` belongs to.

    It depends on the id alone (SHA-256, not the seed: a study that changes the seed keeps its test
    instances out of training), so the two halves never overlap and are the same on every run.
    """
    digest = hashlib.sha256(f"instance_split\x00{instance_id}".encode()).digest()
    return "train" if digest[0] % 2 == 0 else "test"


#: A document field that names its half itself (``train`` / ``test``), where its loader fixes the split
#: (MS MARCO: the pairwise paper's seeded 800 / 200 queries); it decides instead of :func:`instance_split`.
INSTANCE_HALF = "instance_half"


def in_split(instance_id: str, split: str) -> bool:
    """Whether the instance belongs to ``split`` (``train``, ``test`` or ``all``)."""
    if split not in INSTANCE_SPLITS:
        raise ValueError(f"instance split must be one of {INSTANCE_SPLITS}, got {split!r}")
    return split == "all" or instance_split(instance_id) == split


def select_item_indices(n_items: int, max_items: int | None, seed: int, instance_id: str) -> list[int]:
    """Indices of the items kept under the ``max_items`` cap, in their original order.

    Args:
        n_items: Number of items of the instance.
        max_items: Cap, or ``None`` for no cap.
        seed: Global seed (the ``seed`` option).
        instance_id: Instance identifier; makes the subset differ between instances.

    Returns:
        Sorted indices: all of them if no cap applies, else a seeded random subset of size ``max_items``.
    """
    if max_items is None or n_items <= max_items:
        return list(range(n_items))
    chosen = instance_rng(seed, instance_id, "max_items").choice(n_items, size=max_items, replace=False)
    return sorted(int(index) for index in chosen)
