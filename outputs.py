"""Crash-safe output files: every file the suite writes goes through :func:`atomic_write`.

The bytes go to a temporary file in the destination folder, are flushed and ``fsync``-ed, and the
temporary file is renamed over the destination with :func:`os.replace` (atomic on POSIX within one
file system); finally the folder is ``fsync``-ed so the rename itself survives a power cut. A
process killed at any point leaves either the old file or the new one, never a mix. Before any work
a command checks its outputs (:func:`check_outputs`, :func:`check_writable`): never one of its
inputs, never a file of another kind, and writable at all. A write the file system refuses
(read-only, permissions, immutable, disk full) is an :class:`OutputError` naming the path.

A neutral module like :mod:`logic_consistency.common`: it imports nothing of the suite but the
neutral :mod:`logic_consistency.credentials` (see the layering rule in the README's layout section),
and no lm-eval.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import jsonlines

from logic_consistency.credentials import Redactor

__all__ = [
    "FILE_KINDS",
    "PROBE_BYTES",
    "TEMP_SUFFIX",
    "OutputError",
    "atomic_write",
    "atomic_write_json",
    "check_cache_folder",
    "check_outputs",
    "check_writable",
    "json_chunks",
    "jsonl_chunks",
    "not_regular",
    "refuse_link",
    "remove_stale_temporaries",
]

#: Temporary files are named ``.<final name>.<random>.tmp`` (hidden, next to the destination).
TEMP_SUFFIX = ".tmp"


def json_chunks(document: Any, *, indent: int | None = 1) -> Iterator[bytes]:
    """Serialise ``document`` as UTF-8 JSON in chunks (no full in-memory copy of the text).

    NaN and infinities are refused (``allow_nan=False``): they are not JSON, and an undefined
    score is written as ``null`` by whoever computes it. The value of a key environment variable
    (``OPENAI_API_KEY``, ``HF_TOKEN``, ...: :func:`~logic_consistency.credentials.secret_environment`)
    or a registered credential (:func:`~logic_consistency.credentials.register_secret`) is never
    written: every string and key of the document is redacted before it is encoded (strings only, so
    a key of a few characters never rewrites a number or the JSON syntax).
    """
    encoder = json.JSONEncoder(indent=indent, ensure_ascii=False, allow_nan=False, sort_keys=False)
    secrets = Redactor.from_environment(patterns=False)
    if secrets.secrets:
        document = secrets.json(document)
    buffer: list[str] = []
    size = 0
    for piece in encoder.iterencode(document):
        buffer.append(piece)
        size += len(piece)
        if size >= 1 << 16:
            yield "".join(buffer).encode("utf-8")
            buffer, size = [], 0
    buffer.append("\n")
    yield "".join(buffer).encode("utf-8")


def jsonl_chunks(records: Iterable[Any]) -> Iterator[bytes]:
    """``records`` as UTF-8 JSONL, one chunk per record (``jsonlines``; non-ASCII kept as is; key
    environment variables' values redacted as in :func:`json_chunks`)."""
    buffer = io.StringIO()
    writer = jsonlines.Writer(buffer, dumps=json.JSONEncoder(ensure_ascii=False).encode)
    secrets = Redactor.from_environment(patterns=False)
    for record in records:
        writer.write(secrets.json(record) if secrets.secrets else record)
        yield buffer.getvalue().encode("utf-8")
        buffer.seek(0)
        buffer.truncate()


def _fsync_dir(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - folders that cannot be opened (some network file systems)
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover - fsync on a folder is unsupported on some file systems
        pass
    finally:
        os.close(descriptor)


class OutputError(OSError, ValueError):
    """An output cannot be written: the file system refused (permissions, read-only, immutable, full).

    One line naming the path and the reason (the command line exits with status 3). Both an
    ``OSError`` (what failed) and a ``ValueError`` (what commands report without a traceback).
    """

    def __init__(self, message: str, errno_value: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno_value


#: Why a write failed, by ``errno``: the words a user can act on.
_REASONS = {
    errno.ENOSPC: "no space left on the device (the disk is full)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted (an immutable or append-only file or folder? see lsattr)",
}


def _output_error(path: Path, error: OSError, doing: str = "cannot write") -> OutputError:
    reason = _REASONS.get(error.errno or 0) or error.strerror or str(error)
    where = f" ({error.filename})" if error.filename and str(error.filename) != str(path) else ""
    return OutputError(f"{doing} {path}: {reason}{where}", error.errno)


@contextlib.contextmanager
def _naming(path: Path, doing: str = "cannot write") -> Iterator[None]:
    try:  # an OSError in the block becomes an OutputError naming path
        yield
    except OutputError:
        raise
    except OSError as error:
        raise _output_error(path, error, doing) from None


def not_regular(mode: int) -> str | None:
    """What a non-regular file is (``"a character device"``, ...), ``None`` for a regular file."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def refuse_link(path: Path, mode: int, argument: str | None = None) -> None:
    """Raise ``ValueError`` naming ``path`` if ``mode`` (from ``os.lstat``) is a symbolic link's.

    The suite never writes through a link: replacing the file a link names would let whoever put the
    link there choose what is overwritten (a board, a file outside the output folder).
    """
    if stat.S_ISLNK(mode):
        try:
            target = os.readlink(path)
        except OSError:  # pragma: no cover - removed since the lstat
            target = "?"
        where = f"{argument}: " if argument else ""
        raise ValueError(
            f"{where}refusing to write {path}: it is a symbolic link (to {target!r}), not a regular file; "
            "outputs are never written through links: remove the link or name its target"
        )


def _umask() -> int:
    """The process's umask, read without changing it where Linux allows (``/proc``)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # pragma: no cover - no /proc: read it by setting it back
    os.umask(mask)  # pragma: no cover
    return mask  # pragma: no cover


def atomic_write(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> Path:
    """Write ``chunks`` to ``path`` atomically (temporary file, ``fsync``, ``os.replace``).

    A symbolic link is refused (:func:`refuse_link`): a link planted where an output goes would
    redirect the write to the file it names (a board, or a file outside the folder). Folders above
    the file may be links. An existing file keeps its permission bits (and, for root, its owner); a
    new file gets ``0o666`` less the umask, as ``open`` would give it. Devices, pipes, sockets and
    folders are never replaced. The temporary file is a new name in the destination's folder
    (``mkstemp``: ``O_CREAT | O_EXCL | O_NOFOLLOW``).

    Args:
        path: Destination file; its folder is created if needed.
        chunks: The content, as an iterable of byte strings (consumed once, streamed to disk).

    Returns:
        The destination path (as given).

    Raises:
        ValueError: ``path`` is a symbolic link, a folder, a device, a pipe or a socket (nothing is written).
        OutputError: The file system refused (read-only, permissions, immutable, disk full): one
            line naming ``path``. The destination is untouched and the temporary file removed
            (unless the process is killed, which leaves at most a hidden ``.tmp`` file).
    """
    given = Path(path)
    existing = _existing_file(given)
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask()
    with _naming(given):
        given.parent.mkdir(parents=True, exist_ok=True)
        handle = tempfile.NamedTemporaryFile(
            dir=given.parent, prefix=f".{given.name}.", suffix=TEMP_SUFFIX, delete=False
        )
    try:
        _fill_and_replace(handle, chunks, given, mode, existing)
    except BaseException as error:
        Path(handle.name).unlink(missing_ok=True)
        if isinstance(error, OSError) and not isinstance(error, OutputError):  # e.g. close() flushing
            raise _output_error(given, error) from None
        raise
    _fsync_dir(given.parent)
    return given


def _existing_file(given: Path) -> os.stat_result | None:
    """What :func:`atomic_write` replaces: the regular file at ``given`` (``None``: nothing there yet);
    a symbolic link, folder, device, pipe or socket there is refused."""
    with _naming(given):
        try:
            existing = os.lstat(given)
        except FileNotFoundError:
            return None
    refuse_link(given, existing.st_mode)
    if (kind := not_regular(existing.st_mode)) is not None:
        raise ValueError(f"refusing to write {given}: it is {kind}, not a regular file")
    return existing


def _fill_and_replace(
    handle: IO[bytes], chunks: Iterable[bytes], given: Path, mode: int, existing: os.stat_result | None
) -> None:
    """Stream ``chunks`` into the temporary file, ``fsync`` it, give it the mode (and, for root, the
    owner) of the file it replaces, and move it over ``given``."""
    with handle:
        for chunk in chunks:
            with _naming(given):
                handle.write(chunk)
        with _naming(given):
            handle.flush()
            os.fsync(handle.fileno())
    with _naming(given):
        os.chmod(handle.name, mode)
        if existing is not None and os.geteuid() == 0 and (existing.st_uid, existing.st_gid) != (0, 0):
            os.chown(handle.name, existing.st_uid, existing.st_gid)
        os.replace(handle.name, given)


#: What :func:`check_outputs` accepts to replace, by the first bytes of an existing file.
FILE_KINDS = ("html", "json", "png")


def atomic_write_json(path: str | os.PathLike[str], document: Any, *, indent: int | None = 1) -> Path:
    """Write ``document`` as JSON to ``path`` atomically (see :func:`atomic_write`)."""
    return atomic_write(path, json_chunks(document, indent=indent))


def _kind_of(head: bytes) -> str:
    """The kind of a file from its first bytes: ``html``, ``json`` (also JSONL), ``png``, else ``other``."""
    if head.startswith(b"\x89PNG"):
        return "png"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith((b"<!doctype html", b"<html")):
        return "html"
    if text.startswith((b"{", b"[")):
        return "json"
    return "other"


def check_outputs(
    outputs: Iterable[tuple[str | os.PathLike[str], str]],
    inputs: Iterable[str | os.PathLike[str]],
    *,
    argument: str = "--out",
) -> None:
    """Refuse to write an output over one of the command's inputs or over a file of another kind.

    Call before anything is written (and before hours of work where possible). Paths are compared
    after resolving symbolic links and ``..``, so ``lb/../lb/leaderboard.json`` or a link to the input
    is recognised. An existing output is replaced only if it is of the kind about to be written
    (judged by its first bytes: an HTML page, JSON / JSONL, PNG) or empty; a folder is never replaced.

    Args:
        outputs: ``(path, kind)`` pairs, ``kind`` one of :data:`FILE_KINDS`.
        inputs: The files the command reads.
        argument: The option that chose the outputs, named in the message.

    Raises:
        ValueError: An output is an input, a folder, a device (or pipe, socket), or an existing file of
            another kind (names both).
        OutputError: An output cannot be written (:func:`check_writable`).
    """
    resolved_inputs = {Path(os.path.realpath(path)): Path(path) for path in inputs}  # never raises on a loop
    for raw, kind in outputs:
        try:
            _check_output(raw, kind, resolved_inputs, argument)
        except RuntimeError as error:  # Path.resolve of a symlink loop (Python < 3.13)
            raise ValueError(f"{argument}: cannot write {raw}: {error}") from None
        except OSError as error:  # a name too long, a loop found by stat, ...
            raise error if isinstance(error, OutputError) else _output_error(Path(raw), error) from None


def _check_output(raw: str | os.PathLike[str], kind: str, resolved_inputs: dict[Path, Path], argument: str) -> None:
    """One output of :func:`check_outputs`: its name, then what stands at its place."""
    if kind not in FILE_KINDS:
        raise ValueError(f"check_outputs: kind must be one of {FILE_KINDS}, got {kind!r}")
    path = Path(raw)
    if str(raw).endswith(("/", os.sep)):  # Path() drops it: "out/" would become a file named "out"
        raise ValueError(f"{argument}: refusing to write {raw}: it names a folder, expected a {kind} file")
    target = Path(os.path.realpath(path))  # a link loop resolves to some path, refused as a link below
    if target in resolved_inputs:
        raise ValueError(
            f"{argument}: refusing to write over the input {resolved_inputs[target]} (output {path}); "
            f"choose another {argument}"
        )
    if path.is_symlink():
        refuse_link(path, stat.S_IFLNK, argument)
    _check_target(path, target, kind, argument)
    check_writable(path)


def _check_target(path: Path, target: Path, kind: str, argument: str) -> None:
    """What stands at an output's place: a folder on the way, a folder, a device, or a file of another kind."""
    for parent in target.parents:
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"{argument}: cannot write {path}: {parent} is a file, not a folder")
    if target.is_dir():
        raise ValueError(f"{argument}: refusing to write {path}: it is a folder, expected a {kind} file")
    if target.exists() and (other := not_regular(target.stat().st_mode)) is not None:
        raise ValueError(
            f"{argument}: refusing to write {path}: it is {other}, not a regular file; choose another {argument}"
        )
    if target.is_file():
        _refuse_other_kind(path, target, kind, argument)


def _refuse_other_kind(path: Path, target: Path, kind: str, argument: str) -> None:
    """An existing file at an output's place is replaced only when it is empty or of the kind written."""
    with target.open("rb") as handle:
        head = handle.read(64)
    found = _kind_of(head)
    if head.strip() and found != kind:
        described = "not JSON, HTML or PNG" if found == "other" else f"a {found} file"
        raise ValueError(
            f"{argument}: refusing to replace {path}: it exists and is {described}, not the {kind} "
            f"file this command writes; choose another {argument} or remove the file"
        )


PROBE_BYTES = 1 << 12  #: Bytes a probe writes at least (see :func:`check_writable`).


def check_writable(path: str | os.PathLike[str], *, folder: bool = False) -> None:
    """Find out, before any work, whether ``path`` can be written by :func:`atomic_write`.

    The existing file is opened for writing (nothing written: an immutable, append-only or
    read-only file is refused, as are the user's own write-protected files), and a probe file as
    large as the existing one (at least :data:`PROBE_BYTES`) is written, ``fsync``-ed and removed
    in the folder of the temporary file (or its nearest existing ancestor; nothing is created).
    ``folder=True``: ``path`` is a folder that will receive files. A disk that fills up later is
    still reported when writing, naming the path.

    Raises:
        ValueError: ``folder=True`` and ``path`` is a file.
        OutputError: Not writable (read-only file system, permissions, immutable, disk full).
    """
    given = Path(path)
    target = Path(os.path.realpath(given))
    if folder and target.exists() and not target.is_dir():
        raise ValueError(f"cannot write into {given}: it is a file, not a folder")
    size = 0
    if not folder and target.is_file():
        size = target.stat().st_size
        with _naming(given):
            os.close(os.open(target, os.O_WRONLY))
    probe_in = _nearest_existing(target if folder and target.is_dir() else target.parent)
    with _naming(given):
        handle = tempfile.NamedTemporaryFile(
            dir=probe_in, prefix=f".{target.name}.probe.", suffix=TEMP_SUFFIX, delete=False
        )
    try:
        with handle, _naming(given):
            for start in range(0, max(size, PROBE_BYTES), 1 << 16):
                handle.write(bytes(min(1 << 16, max(size, PROBE_BYTES) - start)))
            handle.flush()
            os.fsync(handle.fileno())
    finally:
        Path(handle.name).unlink(missing_ok=True)


def _nearest_existing(folder: Path) -> Path:
    """``folder``, or its nearest existing ancestor (a probe creates no folder)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_cache_folder(folder: str | os.PathLike[str], *, what: str, fix: str) -> None:
    """:func:`check_writable` for a cache folder a library or the suite fills by itself.

    Raises:
        OutputError: ``"<what>: cannot write <folder>: <reason>; <fix>"``, ``fix`` naming the
            environment variable that moves the cache.
    """
    try:
        check_writable(folder, folder=True)
    except (OutputError, ValueError) as error:
        raise OutputError(f"{what}: {error}; {fix}", getattr(error, "errno", None)) from None


def remove_stale_temporaries(folder: str | os.PathLike[str]) -> list[Path]:
    """Delete temporary files left by killed writers in ``folder`` (call only under the build lock).

    Returns:
        The removed paths.
    """
    removed: list[Path] = []
    root = Path(folder)
    if not root.is_dir():
        return removed
    for candidate in root.glob(f".*{TEMP_SUFFIX}"):
        if candidate.is_file():
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return removed
