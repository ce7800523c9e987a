"""The suite's backends, collected from their own declarations (``registry.py``): the room above the
backends' rooms (``chat``, ``prefix``) and below everything that reads them (``publish``, the board)."""
