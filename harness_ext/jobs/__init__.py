"""How the board and the improve studies run their work: every child process (:mod:`.processes`) and
the Ray session (:mod:`.ray_session`). It knows no task family and no leaderboard."""
