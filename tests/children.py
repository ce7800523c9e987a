"""The one way a test starts a child process: through the suite's own starter
(:mod:`logic_consistency.harness_ext.jobs.processes`), so that a test's child never outlives the test.

Every child runs in its own process group with the parent-death signal (Linux): a test that fails,
times out or is killed takes its children (and what they started) with it. :func:`run` has the
arguments of :func:`subprocess.run` the tests use and returns a :class:`subprocess.CompletedProcess`;
:func:`start` starts a long-running child (a server, a build to be signalled) for the test to stop
with :func:`stop` (the whole group: SIGTERM, then SIGKILL). ``tests/conftest.py`` puts this folder on
``sys.path``, so a test module anywhere under ``tests/`` imports it as ``children``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import IO, Any

from logic_consistency.harness_ext.jobs.processes import start_child, stop_group

__all__ = ["run", "start", "stop"]

_Stream = int | IO[Any] | None


def _decoder(text: bool, encoding: str | None, errors: str | None) -> Any:
    if not (text or encoding or errors):
        return lambda data: data
    return lambda data: None if data is None else data.decode(encoding or "utf-8", errors or "strict")


def run(
    command: Sequence[str],
    *,
    capture_output: bool = False,
    text: bool = False,
    encoding: str | None = None,
    errors: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    check: bool = False,
    input: str | bytes | None = None,  # noqa: A002 - subprocess's name for it
    stdout: _Stream = None,
    stderr: _Stream = None,
) -> subprocess.CompletedProcess[Any]:
    """:func:`subprocess.run` through the suite's starter; past ``timeout``, or on any exception (a
    test's Ctrl-C), the child's whole group is stopped before the exception goes on."""
    if capture_output:
        stdout = stderr = subprocess.PIPE
    process = start_child(
        [str(part) for part in command],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE if input is not None else None,
        stdout=stdout,
        stderr=stderr,
    )
    data = input.encode(encoding or "utf-8") if isinstance(input, str) else input
    try:
        out, err = process.communicate(data, timeout=timeout)
    except BaseException:
        stop_group(process)
        raise
    decode = _decoder(text, encoding, errors)
    done = subprocess.CompletedProcess(list(command), process.returncode, decode(out), decode(err))
    if check:
        done.check_returncode()
    return done


def start(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdout: _Stream = None,
    stderr: _Stream = None,
    pass_fds: Sequence[int] = (),
    text: bool = False,
) -> subprocess.Popen[Any]:
    """A long-running child in its own group, with the parent-death signal; stop it with :func:`stop`."""
    return start_child(
        [str(part) for part in command],
        env=env,
        cwd=cwd,
        stdin=None,
        stdout=stdout,
        stderr=stderr,
        pass_fds=pass_fds,
        text=text,
    )


def stop(process: subprocess.Popen[Any]) -> None:
    """Stop ``process``'s whole group (SIGTERM, SIGKILL after a grace period) if it is still running."""
    if process.poll() is None:
        stop_group(process)
