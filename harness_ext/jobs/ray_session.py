"""The one Ray session of the suite: the board's build (``leaderboard build --executor ray``) and an
improve study (``improve --executor ray``) both connect, check, watch, wait and shut down through it.

:func:`ray_session` checks ``--ray-address`` (:func:`check_address`) and that a Ray head answers there
within seconds (:func:`check_reachable`, with an HTTP/2 probe, :mod:`.grpc_probe`), starts or joins
Ray keeping the program's signal handlers (:func:`signal_handlers_kept`; a stop while joining is the
program's stop), and shuts down a Ray it started. Inside it, :func:`wait_all` waits for the tasks
while a :class:`HeadWatch` checks the head, cancelling every pending task on any error; an error of a
lost head (an ``OSError``, Ray's ``RaySystemError``) becomes one :class:`RayClusterError` line naming
the head and what the job kept, and a stop wrapped by Ray comes out as the stop itself
(:func:`stop_behind`). Ray is imported only when an executor asks (:func:`require_ray`).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeVar

from .grpc_probe import not_grpc
from .processes import Stopped

__all__ = [
    "DEFAULT_RETRIES",
    "NAMESPACE",
    "HeadWatch",
    "RayClusterError",
    "RayMissingError",
    "RaySession",
    "alive_nodes",
    "check_address",
    "check_reachable",
    "ray_session",
    "require_ray",
    "signal_handlers_kept",
    "stop_behind",
    "wait_all",
]

INSTALL_HINT = "from a clone: pip install -e '.[ray]' (a published release: pip install \"logic-consistency[ray]\")"
NAMESPACE = "logic-consistency"
DEFAULT_RETRIES = 2


#: Seconds to reach a Ray head before ``ray.init`` (which would sit through its GCS time-outs).
CONNECT_SECONDS = 5.0
#: Ray client's default port (``ray://host`` without one).
CLIENT_PORT = 10001


#: Seconds between checks that the Ray head's GCS still answers; two failed checks in a row end the
#: job (else Ray's driver would end the process itself after 60 s, naming neither head nor address).
HEAD_CHECK_SECONDS = 5.0


class RayMissingError(ModuleNotFoundError):
    """``--executor ray`` without Ray installed."""


class RayClusterError(ValueError):
    """The Ray cluster cannot run the job (a build, a study): a bad or unreachable address, a unit no node can ever
    place, or a head that died (one line, naming the address, the model or the resource)."""


def check_address(address: str | None) -> str | None:
    """``--ray-address``: ``None`` (start a local Ray), ``auto``, ``host:port`` or ``ray://host[:port]``.

    Raises:
        RayClusterError: Anything else (an empty value too), naming it.
    """
    if address is None or address == "auto":
        return address
    _host_port(address)
    return address


def _host_port(address: str) -> tuple[str, int]:
    client = address.startswith("ray://")
    host, _, port = (address[len("ray://") :] if client else address).rpartition(":")
    if client and not port.isdigit():
        host, port = (host + ":" + port if host else port), str(CLIENT_PORT)
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in host:
        raise RayClusterError(
            f"--ray-address {address!r}: expected auto, host:port (a Ray head's GCS, e.g. 10.0.0.1:6379) "
            "or ray://host[:port]"
        )
    return host.strip("[]"), int(port)


def check_reachable(address: str | None, seconds: float = CONNECT_SECONDS) -> None:
    """Within ``seconds``, that a Ray head listens at ``address`` (``auto`` / ``None``: Ray's own lookup).

    Raises:
        RayClusterError: Nothing answers there, naming the address and why.
    """
    if address is None or address == "auto":
        return
    host, port = _host_port(address)
    try:
        with socket.create_connection((host, port), timeout=seconds) as connection:
            reason = not_grpc(connection, seconds)  # a server that is no Ray head: ray.init would wait 14 min
    except OSError as error:
        reason = "timed out" if isinstance(error, TimeoutError) else (error.strerror or str(error))
        raise RayClusterError(
            f"--ray-address {address!r}: no Ray head answers at {host}:{port} ({reason} within {seconds:g} s); "
            "start one (ray start --head) or give the head's address"
        ) from None
    if reason is not None:
        raise RayClusterError(
            f"--ray-address {address!r}: {host}:{port} is not a Ray head: {reason}; give the head's GCS "
            "address (ray start --head prints it) or ray://host:10001"
        )


def require_ray() -> ModuleType:
    """Import Ray, or raise :class:`RayMissingError` with the install line."""
    try:
        import ray
    except ImportError as error:
        raise RayMissingError(f"--executor ray needs Ray, which is not installed ({error}): {INSTALL_HINT}") from None
    return ray


def alive_nodes(ray: ModuleType) -> list[dict[str, float]]:
    """The resources (Ray's names: ``CPU``, ``GPU``, ``memory``, custom) of every alive node of the cluster."""
    return [dict(node.get("Resources", {})) for node in ray.nodes() if node.get("Alive")]


def stop_behind(error: BaseException) -> BaseException | None:
    """The stop ``error`` stands for, else ``None``: a :class:`~.processes.Stopped` or ``KeyboardInterrupt`` in its
    chain of causes (a stop raised inside a Ray call comes out wrapped: a ``SystemError`` "returned a result
    with an exception set", a ``RaySystemError``, a ``ConnectionError``), or Ray's own SIGTERM exit."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, SystemExit):
            if current.code == signal.SIGTERM:  # Ray's driver handler: sys.exit(signum)
                return Stopped(signal.SIGTERM)
        elif not isinstance(current, Exception):
            return current
        current = current.__cause__ or current.__context__
    return None


@contextlib.contextmanager
def signal_handlers_kept() -> Iterator[None]:
    """Keep the program's SIGTERM, SIGHUP and SIGINT handlers across ``ray.init``, and its stop path.

    ``ray.init`` installs, in the driver, a SIGTERM handler that calls ``sys.exit(15)``: exit status
    15, no message, bypassing the program's stop path (a build: cancel every task, write nothing, exit 143).
    Re-installing the program's handlers after ``ray.init`` restores that path; a SIGTERM that arrives
    while Ray connects (its handler's ``SystemExit(15)``) is turned into the program's stop.
    """
    names = ("SIGTERM", "SIGHUP", "SIGINT")
    kept = {sig: signal.getsignal(sig) for sig in (getattr(signal, name) for name in names)}
    try:
        yield
    except BaseException as error:
        stop = stop_behind(error)
        if stop is None:
            raise
        raise stop from None
    finally:
        if threading.current_thread() is threading.main_thread():  # signal.signal works only there
            for sig, handler in kept.items():
                if handler is not None:
                    signal.signal(sig, handler)


@contextlib.contextmanager
def _shut_down_on_failure(ray: ModuleType) -> Iterator[None]:
    """A ``ray.init`` that ends in an exception (a stop while connecting) leaves no half-started Ray."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise


T = TypeVar("T")


@dataclass
class HeadWatch:
    """Checks, at most every :data:`HEAD_CHECK_SECONDS`, that the head's GCS (``host:port``) answers."""

    gcs: str
    label: str
    ending: str = "the build stopped and wrote nothing"
    last: float = field(default_factory=time.monotonic)
    failures: int = 0

    def check(self) -> None:
        """Raise :class:`RayClusterError` naming the head once it has failed two checks in a row."""
        now = time.monotonic()
        if now - self.last < HEAD_CHECK_SECONDS:
            return
        self.last = now
        host, _, port = self.gcs.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=HEAD_CHECK_SECONDS):
                self.failures = 0
        except OSError as error:
            self.failures += 1
            if self.failures >= 2:
                raise RayClusterError(
                    f"lost the Ray head ({self.label}): its GCS at {self.gcs} no longer answers "
                    f"({error.strerror or type(error).__name__}); {self.ending}"
                ) from None


def wait_all(
    ray: ModuleType,
    pending: dict[Any, T],
    head: str,
    ended: Callable[[Any, T], None],
    *,
    ending: str = "the build stopped and wrote nothing",
) -> None:
    """Wait for every task of ``pending`` (its reference -> what it runs), calling ``ended`` as each one
    ends, while watching the head (``head`` names it in the error). On any error (one ``ended`` raises
    for a failed task, a dead head, a stop signal) the tasks still pending are cancelled and the error
    re-raised: the board's build and an improve study's units both end this way (``ending`` says what a
    lost head means for the job)."""
    gcs = getattr(ray.get_runtime_context(), "gcs_address", None)  # none through a ray:// client
    watch = HeadWatch(gcs, head, ending) if gcs else None
    try:
        while pending:
            if watch is not None:
                watch.check()
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in ready:
                ended(ref, pending.pop(ref))
    except BaseException as error:
        for ref in pending:
            with contextlib.suppress(Exception):  # a dead head cannot cancel: its tasks died with it
                ray.cancel(ref, force=True)
        # a stop signal's exception raised inside ray.wait comes out wrapped (a SystemError "returned a
        # result with an exception set"): re-raise the stop itself
        stop = stop_behind(error)
        if stop is None or stop is error:
            raise
        raise stop from None


@dataclass(frozen=True)
class RaySession:
    """A connected Ray (:func:`ray_session`).

    Attributes:
        ray: The ``ray`` module.
        where: The head as errors name it (the address, or the local Ray the job started).
        ending: What a lost head means for the job (the end of its error line).
    """

    ray: ModuleType
    where: str
    ending: str

    def wait_all(self, pending: dict[Any, T], ended: Callable[[Any, T], None]) -> None:
        """:func:`wait_all` on this session's head."""
        wait_all(self.ray, pending, self.where, ended, ending=self.ending)


@contextlib.contextmanager
def ray_session(
    ray: ModuleType, address: str | None, *, job: str, ending: str, init_options: Mapping[str, Any] | None = None
) -> Iterator[RaySession]:
    """Start (``address`` ``None``) or join Ray for the block, unless this process is connected already.

    Args:
        ray: The ``ray`` module (:func:`require_ray`; a stand-in in tests).
        address: ``--ray-address``.
        job: What runs (``build``, ``study``), as "the local Ray this <job> started" names the head.
        ending: What a lost head means for the job, ending its error line.
        init_options: More ``ray.init`` arguments.

    Raises:
        RayClusterError: A bad or unreachable address, or a head lost meanwhile (an ``OSError`` or a
            ``RaySystemError`` in the block).
        Stopped, KeyboardInterrupt: A stop, also one Ray wrapped in another exception.
    """
    started_here = not ray.is_initialized()
    if started_here:
        check_reachable(check_address(address))
        with signal_handlers_kept(), _shut_down_on_failure(ray):
            ray.init(
                address=address,
                namespace=NAMESPACE,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                **dict(init_options or {}),
            )
    session = RaySession(ray, address or f"the local Ray this {job} started", ending)
    try:
        yield session
    except Exception as error:
        stop = stop_behind(error)  # SIGTERM while joining: a stop, not a lost head
        if stop is not None:
            raise stop from None
        if not isinstance(error, (OSError, ray.exceptions.RaySystemError)):
            raise
        raise RayClusterError(
            f"lost the Ray head ({session.where}): {type(error).__name__}: {str(error).strip()[-200:]}; {ending}"
        ) from None
    finally:
        if started_here:
            with contextlib.suppress(Exception):  # a dead head: nothing left to shut down
                ray.shutdown()
