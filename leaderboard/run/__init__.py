"""The nightly build: model list, preflight, executors (local, Ray), units, runner, placement, lock.

The top room of :mod:`logic_consistency.leaderboard`: it may import ``board`` and ``page``.
"""
