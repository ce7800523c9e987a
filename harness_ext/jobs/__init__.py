"""How the board and the improve studies run their work: every child process (:mod:`.processes`), the
one executor protocol with its local and Ray peers (:mod:`.executor`) and the Ray session
(:mod:`.ray_session`). It knows no task family and no leaderboard."""
