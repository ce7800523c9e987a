"""The leaderboard document: schema, rows from lm-eval results files, merge, migration, intervals, nights.

The lowest room of :mod:`logic_consistency.leaderboard`: it imports neither ``page`` nor ``run``.
"""
