"""Count the climbs of a walk through the suite: each time control passes from a lower layer's code
into a higher layer's (``metrics`` and the neutral helpers <- ``harness_ext`` <- ``tasks`` <-
``leaderboard`` <- ``cli``, tests/test_layers.py's order), as ``sys.setprofile`` sees it.

A climb is a Python ``call`` event (a call, a property, a generator's resumption, a lazy iterable's
next item, a module's first import) whose callee lies in a higher layer than its caller. The caller is
the nearest frame of the suite on the stack: frames of other code (lm-eval, torch, the standard
library, the tests' own fakes) are passed through, so that the driver calling lm-eval calling a task
class counts as the driver climbing. An entry point is one (caller site, callee function) pair.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import logic_consistency

#: The suite as imported (a checkout's, or another's, whose walk is then measured).
ROOT = Path(logic_consistency.__file__).resolve().parent
#: Each layer's rank; a module of the package root (common, options, outputs, ...) is a neutral helper.
RANKS = {"metrics": 0, "harness_ext": 1, "tasks": 2, "leaderboard": 3, "cli": 4}
_ROOT_PREFIX = str(ROOT) + "/"


def _rank(filename: str) -> int | None:
    """The layer of a file of the suite (``None``: not the suite's, or its tests and scripts)."""
    if not filename.startswith(_ROOT_PREFIX):
        return None
    parts = filename[len(_ROOT_PREFIX) :].split("/")
    if len(parts) == 1:
        return 0
    return RANKS.get(parts[0])


def _site(frame: FrameType) -> str:
    return f"{frame.f_code.co_filename[len(_ROOT_PREFIX) :]}:{frame.f_lineno} {frame.f_code.co_name}"


@dataclass
class Climbs:
    """What a walk climbed: each entry point (caller site -> callee) with its number of events."""

    events: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def entry_points(self) -> list[tuple[str, str]]:
        return sorted(self.events)

    @property
    def callees(self) -> set[str]:
        return {callee for _, callee in self.events}

    def report(self) -> str:
        lines = [f"{len(self.events)} entry points, {len(self.callees)} callees, {sum(self.events.values())} events"]
        lines += [f"  {caller} -> {callee}: {n}" for (caller, callee), n in sorted(self.events.items())]
        return "\n".join(lines)


def _profiler(climbs: Climbs) -> Callable[[FrameType, str, Any], None]:
    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee_rank = _rank(frame.f_code.co_filename)
        if callee_rank is None:
            return
        caller = frame.f_back
        while caller is not None and _rank(caller.f_code.co_filename) is None:
            caller = caller.f_back
        if caller is None:
            return
        caller_rank = _rank(caller.f_code.co_filename)
        if caller_rank is not None and caller_rank < callee_rank:
            name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)  # co_qualname: Python 3.11+
            callee = f"{frame.f_code.co_filename[len(_ROOT_PREFIX) :]} {name}"
            climbs.events[(_site(caller), callee)] += 1

    return profile


@contextmanager
def counting_climbs() -> Iterator[Climbs]:
    """Count the climbs of what runs inside (in this thread and the threads it starts)."""
    climbs = Climbs()
    profile = _profiler(climbs)
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield climbs
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
