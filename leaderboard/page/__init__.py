"""The leaderboard's static web page: :mod:`.render` and the page's HTML, CSS and scripts.

Imports only the ``board`` room of :mod:`logic_consistency.leaderboard` (the documents it draws).
"""
