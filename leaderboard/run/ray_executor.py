"""``leaderboard build --executor ray``: every unit of the nightly build (a model's whole run, or one
shard, :mod:`.units`) is one Ray task of the suite's one Ray peer (``harness_ext/jobs/executor.py``,
chosen by :func:`~.executor.build_executor`); here: a lost head's words and Ray's import (a test's stand-in).

Each task asks for the model's ``resources`` (a model no alive node can ever hold is refused before any
unit runs: :func:`~.placement.check_feasible`), runs ``lm_eval`` in a temporary folder on its node and
returns every file it wrote (only the driver writes the runs folder, the board, the history and the
page, under the build lock); it keeps its own request cache, is retried ``--retries`` times (default 2)
when its worker dies or ``lm_eval`` fails, and holds ``num_concurrent`` slots of its endpoint's
``api_limits`` budget (:class:`~.endpoint_budget.EndpointBudget`, one named actor per endpoint, granting
time-limited leases, so a killed worker's slots come back). Ctrl-C or SIGTERM on the driver cancels
every task (their ``lm_eval`` dies with its parent) and shuts down a Ray it started itself, through the
one session (:mod:`logic_consistency.harness_ext.jobs.ray_session`), shared with ``improve``. Ray is
imported only when ``--executor ray`` is chosen. See docs/cluster.md.
"""

from __future__ import annotations

from types import ModuleType

from logic_consistency.harness_ext.jobs.ray_session import (
    DEFAULT_RETRIES,
    NAMESPACE,
    RayClusterError,
    check_address,
    check_reachable,
    require_ray,
)

from .placement import check_feasible

__all__ = [
    "DEFAULT_RETRIES",
    "NAMESPACE",
    "LOST_HEAD_ENDING",
    "RayClusterError",
    "check_address",
    "check_feasible",
    "check_reachable",
    "importer",
    "require_ray",
]

#: What a lost head means for a build (the end of its error line).
LOST_HEAD_ENDING = "the build stopped and wrote nothing"


def importer() -> ModuleType:
    """Ray, through this module's :func:`require_ray` (looked up at each call: a test stands in for it)."""
    return require_ray()
